"""How many threads torch uses on CPU, chosen once per process unless the user chose.

torch defaults to one thread per core and assumes it has the cores to itself. On a shared
machine that is the worst case: measured with SmolLM2-135M while other jobs ran on a 2-core box,
2 torch threads generated 5-7x slower than 1, because each parallel region waits for its
slowest thread. So the default is the number of cores left idle by the current load (at least
one, at most torch's own default). `WORKGYM_TORCH_THREADS` or `OMP_NUM_THREADS` override it.
"""

from __future__ import annotations

import os

THREADS_ENV = "WORKGYM_TORCH_THREADS"
_configured = False


def idle_cores() -> int:
    """Cores not busy with other work, from the one-minute load average (at least 1)."""
    cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except OSError:
        return cores
    return max(1, min(cores, int(cores - load + 0.5)))


def configure_cpu_threads() -> int:
    """Set torch's intra-op threads (once per process); returns the number in use."""
    global _configured
    import torch

    if _configured:
        return int(torch.get_num_threads())
    _configured = True
    explicit = os.environ.get(THREADS_ENV)
    if explicit:
        try:
            torch.set_num_threads(max(1, int(explicit)))
        except ValueError as exc:
            raise ValueError(f"{THREADS_ENV}={explicit!r}: write a whole number, e.g. 1") from exc
    elif not os.environ.get("OMP_NUM_THREADS"):
        torch.set_num_threads(min(int(torch.get_num_threads()), idle_cores()))
    return int(torch.get_num_threads())
