"""Statistics: intervals, paired tests, non-inferiority, pass@k and power (a leaf layer).

The certificate, summaries and swarm comparisons all use these; nothing here imports the rest
of workgym. Import from the submodules (:mod:`workgym.stats.tests`,
:mod:`workgym.stats.bootstrap`, :mod:`workgym.stats.results`) or from here.

The names are resolved on first use, so importing a command does not pay for numpy and scipy
until a statistic is needed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workgym.stats.bootstrap import cluster_bootstrap_ci, paired_bootstrap, sign_flip_test
    from workgym.stats.results import (
        Alternative,
        IntersectionUnion,
        McNemarResult,
        MeanEstimate,
        NonInferiority,
        PairedTest,
        PassK,
        SignFlipResult,
    )
    from workgym.stats.tests import (
        clustered_mean_ci,
        intersection_union,
        mcnemar_exact,
        mcnemar_test,
        mean_ci,
        minimum_detectable_effect,
        non_inferiority,
        non_inferiority_sample_size,
        paired_t_test,
        pass_at_k,
        pass_hat_k,
        pass_k_summary,
    )

# Where the names live, in the order they are looked for. Each is defined in one of them; a
# later module may import an earlier one's names, so the first hit is the definition. The
# TYPE_CHECKING imports above say the same for type checkers.
_HOMES = ("workgym.stats.results", "workgym.stats.bootstrap", "workgym.stats.tests")


def __getattr__(name: str) -> Any:
    if name in __all__:
        for home in _HOMES:
            module = importlib.import_module(home)
            if name in vars(module):
                return vars(module)[name]
    raise AttributeError(f"module 'workgym.stats' has no attribute {name!r}")


__all__ = [
    "Alternative",
    "IntersectionUnion",
    "McNemarResult",
    "MeanEstimate",
    "NonInferiority",
    "PairedTest",
    "PassK",
    "SignFlipResult",
    "cluster_bootstrap_ci",
    "clustered_mean_ci",
    "intersection_union",
    "mcnemar_exact",
    "mcnemar_test",
    "mean_ci",
    "minimum_detectable_effect",
    "non_inferiority",
    "non_inferiority_sample_size",
    "paired_bootstrap",
    "paired_t_test",
    "pass_at_k",
    "pass_hat_k",
    "pass_k_summary",
    "sign_flip_test",
]
