"""Where a local model's weights live and in what precision: `--device` and `--dtype`.

An `hf/` model used to load wherever transformers put it: the CPU, in float32, even on a machine
with a GPU (measured on an H200: 0 MB of GPU memory used). Users who train agents have GPUs, so
the default is now the best device torch sees (CUDA, then Apple's MPS, then the CPU) in the
precision that device computes fast: bfloat16 on a CUDA device that supports it, float16 on other
accelerators, float32 on the CPU (unchanged). `--device` and `--dtype` override either half.

The CLI states the choice once per process (`request`), before any model is built, because a
model is built from its name through the provider registry, whose factories take no such
options; `HFModel(..., device=, dtype=)` overrides it for scripts. The choice that was applied
(`Placement`) is read back from the loaded weights, printed once, written into run.json and,
when it is not the CPU's float32 (what every run before this option used), into the policy's
identity hash: a certificate then never compares two arms that differ in numerics.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from workgym.core.errors import ConfigError

DEVICES = ("auto", "cuda", "mps", "cpu")
DTYPES = ("auto", "bfloat16", "float16", "float32")
_DTYPE_ALIASES = {"bf16": "bfloat16", "fp16": "float16", "half": "float16", "fp32": "float32"}


@dataclass(frozen=True)
class Placement:
    """A device ("cuda", "cuda:1", "mps", "cpu"; "meta" in tests) and a dtype name."""

    device: str
    dtype: str

    @property
    def on_cpu_float32(self) -> bool:
        """The placement every run had before devices were chosen: left out of policy hashes."""
        return self.device == "cpu" and self.dtype == "float32"

    def describe(self) -> dict[str, str]:
        return {"device": self.device, "dtype": self.dtype}

    def torch_dtype(self, torch: Any) -> Any:
        return getattr(torch, self.dtype)

    def __str__(self) -> str:
        return f"{self.device}, {self.dtype}"


CPU_FLOAT32 = Placement("cpu", "float32")


@dataclass(frozen=True)
class Request:
    """What the user asked for; None (or "auto") leaves that half to `choose`."""

    device: str | None = None
    dtype: str | None = None


_requested = Request()
_announced: set[tuple[str, Placement]] = set()


def request(device: str | None, dtype: str | None) -> Request:
    """Set the process's `--device`/`--dtype` (checked now, so a typo fails before any work)."""
    global _requested
    _requested = Request(_device_name(device), _dtype_name(dtype))
    return _requested


def requested() -> Request:
    return _requested


def _device_name(device: str | None) -> str | None:
    if device is None or device == "auto":
        return None
    kind, _, index = device.partition(":")
    if kind not in (*DEVICES, "meta") or (index and not index.isdigit()):
        raise ConfigError(
            f"--device {device!r}: use auto, cuda, cuda:N, mps or cpu "
            "(auto: cuda, then mps, then cpu)"
        )
    return device


def _dtype_name(dtype: str | None) -> str | None:
    if dtype is None or dtype == "auto":
        return None
    name = _DTYPE_ALIASES.get(dtype, dtype)
    if name not in DTYPES:
        raise ConfigError(
            f"--dtype {dtype!r}: use auto, bfloat16, float16 or float32 "
            "(auto: bfloat16 on a GPU that supports it, float16 on other GPUs, float32 on CPU)"
        )
    return name


def best_device(torch: Any) -> str:
    """CUDA, then MPS, then the CPU: the first torch can use."""
    if torch.cuda.is_available():
        return "cuda"
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return "mps"
    return "cpu"


def default_dtype(torch: Any, device: str) -> str:
    """bfloat16 where the accelerator supports it, float16 on other accelerators, CPU float32."""
    kind = device.partition(":")[0]
    if kind in ("cpu", "meta"):
        return "float32"
    if kind == "cuda" and torch.cuda.is_bf16_supported():
        return "bfloat16"
    return "float16"


def choose(
    device: str | None = None,
    dtype: str | None = None,
    *,
    training: bool = False,
    torch: Any = None,
) -> Placement:
    """The placement for a load: explicit arguments, else the process's request, else defaults.

    An explicit accelerator that torch cannot see is an error that says what to use instead,
    not a silent fall back to the CPU. `training`: float32 weights unless a dtype was asked for
    (the trainer computes in bfloat16 under autocast; its optimizer steps need float32 weights).
    """
    if torch is None:
        import torch
    chosen_device = _device_name(device) or _requested.device or best_device(torch)
    kind = chosen_device.partition(":")[0]
    if kind == "cuda" and not torch.cuda.is_available():
        raise ConfigError(
            f"--device {chosen_device}: torch sees no CUDA device (torch {torch.__version__}); "
            "use --device cpu, or install a CUDA build of torch"
        )
    if kind == "mps" and best_device(torch) != "mps":
        raise ConfigError(f"--device {chosen_device}: torch sees no MPS device; use --device cpu")
    fallback = "float32" if training else default_dtype(torch, chosen_device)
    chosen_dtype = _dtype_name(dtype) or _requested.dtype or fallback
    return Placement(chosen_device, chosen_dtype)


def placement_of(model: Any) -> Placement:
    """Where `model`'s first parameter lives ("cuda" for cuda:0), read back after loading."""
    parameter = next(model.parameters())
    device = parameter.device
    name = device.type if device.index in (None, 0) else f"{device.type}:{device.index}"
    return Placement(name, str(parameter.dtype).removeprefix("torch."))


def announce(model_name: str, placement: Placement) -> None:
    """Say once per process where a model's weights are (stderr; stdout stays the result)."""
    key = (model_name, placement)
    if key in _announced:
        return
    _announced.add(key)
    print(f"workgym: {model_name} on {placement}", file=sys.stderr, flush=True)
