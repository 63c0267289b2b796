"""Runs as points of a comparison: per-item reward and tokens over the tasks all runs share.

Items are the unit (a task's epochs are averaged first); rewards are counted as in the
certificate (errors, limit hits, verifier errors and flagged successes are 0); tokens are every
agent's tokens, split by agent role. `paired` is the one paired statistic the comparisons use: a
two-sided 95% interval over items, a score interval for rewards and a paired t for tokens
(workgym.stats.proportions; decision 0070).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel

from workgym.core.errors import ConfigError
from workgym.guards.review import counted, read_reviews
from workgym.run.rundir import RunDir, read_spec
from workgym.run.summary import record_tokens, role_tokens
from workgym.stats import tests as stats
from workgym.stats.bootstrap import sign_flip_test
from workgym.stats.proportions import paired_bound, reward_interval
from workgym.stats.results import MeanEstimate


class Paired(BaseModel):
    """mean(target - reference) over the common items, with a two-sided 95% CI."""

    diff: float
    lower: float | None
    upper: float | None
    p_value: float | None
    n: int
    n_clusters: int | None
    method: str


class RunCost(BaseModel):
    label: str
    path: str
    model: str
    team: dict[str, Any] | None = None
    scripted: bool
    baseline: bool
    episodes: int
    reward: float
    reward_ci: tuple[float, float]
    tokens: float
    tokens_ci: tuple[float, float]
    by_role: dict[str, float]


@dataclass
class RunData:
    """One run's per-item means over the common items (arrays in the comparison's item order)."""

    cost: RunCost
    reward: npt.NDArray[np.float64]
    tokens: npt.NDArray[np.float64]


def _is_scripted(policy: dict[str, Any]) -> bool:
    return "scripted/" in str(policy.get("model", "")) or "scripted/" in str(policy.get("team"))


def _labels(paths: Sequence[Path]) -> list[str]:
    labels = [p.name for p in paths]
    for i, label in enumerate(labels):
        if labels.count(label) > 1:
            labels[i] = f"{paths[i].parent.name}/{paths[i].name}"
    return [f"{lab}#{i}" if labels.count(lab) > 1 else lab for i, lab in enumerate(labels)]


def _read(path: Path) -> dict[tuple[str, int], dict[str, Any]]:
    spec = read_spec(path)
    out = {}
    for r in RunDir(path, spec).records():
        out[(str(r["task_id"]), int(r["epoch"]))] = r
    if not out:
        raise ConfigError(f"{path} has no finished episodes yet; run or resume it first")
    return out


def _ci(values: npt.NDArray[np.float64]) -> tuple[float, float]:
    """A run's interval: Clopper-Pearson for 0/1 rewards, else t over task means (unclustered)."""
    if values.size and float(values.min()) >= 0.0 and float(values.max()) <= 1.0:
        est = reward_interval(values)
    else:
        est = stats.mean_ci(values) if values.size > 1 else stats_point(values)
    return float(est.lower), float(est.upper)


def stats_point(values: npt.NDArray[np.float64]) -> MeanEstimate:
    m = float(values.mean())
    return MeanEstimate(m, 0.0, m, m, 0.95, int(values.size), "point")


def paired(
    target: npt.NDArray[np.float64], reference: npt.NDArray[np.float64], clusters: list[str] | None
) -> Paired:
    """Two-sided 95% interval of mean(target - reference) over items (decision 0070).

    Rewards in [0, 1]: the exact unconditional interval (binary) or Tango's bounded-score form
    (graded), which
    keeps a width when every pair ties; p from the exact McNemar / sign-flip test. Tokens: the
    paired t over items. Never the cluster-robust t, which with 4 families is degenerate (its
    interval was the point estimate times 1 +- 3.18). `clusters` only counts the families.
    """

    def fin(x: float) -> float | None:
        return float(x) if math.isfinite(x) else None

    n_clusters = len(set(clusters)) if clusters else None
    bounded = min(target.min(), reference.min()) >= 0.0 and max(target.max(), reference.max()) <= 1
    if bounded:
        b = paired_bound(target, reference, 0.025)
        if b.method == "exact_unconditional":
            p = stats.mcnemar_test(target, reference, "two-sided").p_value
        else:
            p = sign_flip_test(target, reference, "two-sided").p_value
        return Paired(
            diff=b.diff,
            lower=b.ci95[0],
            upper=b.ci95[1],
            p_value=p,
            n=b.n,
            n_clusters=n_clusters,
            method=b.method,
        )
    t = stats.paired_t_test(target, reference, "two-sided", 0.95)
    lower, upper = fin(t.lower), fin(t.upper)
    if t.se == 0:  # every item differs by the same amount: the interval is that point
        lower = upper = float(t.diff)
    return Paired(
        diff=float(t.diff),
        lower=lower,
        upper=upper,
        p_value=fin(t.p_value),
        n=t.n,
        n_clusters=n_clusters,
        method="paired_t_items",
    )


def load(
    paths: Sequence[Path], baseline: Sequence[Path]
) -> tuple[list[RunData], list[str], list[str], dict[str, str]]:
    """Read the runs; return their data on the common items, the families, notes and env info."""
    if len(paths) < 2:
        raise ConfigError("compare needs at least two run directories")
    specs = [read_spec(p) for p in paths]
    hashes = {s.env_hash for s in specs}
    if len(hashes) > 1:
        raise ConfigError(
            "these runs were made on different environments (hashes "
            + ", ".join(sorted(h[:12] for h in hashes))
            + "); compare runs of one environment"
        )
    notes = []
    if len({s.seed for s in specs}) > 1:
        notes.append("the runs used different seeds: they are paired by item only")
    records = [_read(p) for p in paths]
    by_task: list[dict[str, set[int]]] = []
    for recs in records:
        epochs: dict[str, set[int]] = defaultdict(set)
        for task_id, epoch in recs:
            epochs[task_id].add(epoch)
        by_task.append(epochs)
    common = sorted(set.intersection(*(set(b) for b in by_task)))
    shared = {t: sorted(set.intersection(*(b[t] for b in by_task))) for t in common}
    if len(common) < 2:
        raise ConfigError(
            f"the runs share {len(common)} tasks; a comparison needs 2 or more: run every arm "
            "on the same split (and --limit)"
        )
    sizes = {len(r) for r in records}
    used = sum(len(v) for v in shared.values())
    if any(s != used for s in sizes):
        notes.append(f"compared on the {len(common)} tasks ({used} episodes) every run has")
    families = [str(records[0][(t, shared[t][0])].get("family", t)) for t in common]
    labels = _labels(paths)
    base = {p.resolve() for p in baseline}
    out = []
    for path, label, spec, recs in zip(paths, labels, specs, records, strict=True):
        reviews = read_reviews(path)  # a flagged success counts once its flags are accepted
        reward, tokens = [], []
        roles: dict[str, float] = defaultdict(float)
        for t in common:
            eps = [recs[(t, e)] for e in shared[t]]
            reward.append(float(np.mean([counted(r, reviews)[0] for r in eps])))
            tokens.append(float(np.mean([record_tokens(r) for r in eps])))
            for r in eps:
                for role, n in role_tokens(r).items():
                    roles[role] += n / len(eps)
        r_arr, t_arr = np.array(reward), np.array(tokens)
        cost = RunCost(
            label=label,
            path=str(path),
            model=str(spec.policy.get("model", "")),
            team=spec.policy.get("team"),
            scripted=_is_scripted(spec.policy),
            baseline=path.resolve() in base,
            episodes=used,
            reward=float(r_arr.mean()),
            reward_ci=_ci(r_arr),
            tokens=float(t_arr.mean()),
            tokens_ci=_ci(t_arr),
            by_role={k: v / len(common) for k, v in sorted(roles.items())},
        )
        out.append(RunData(cost, r_arr, t_arr))
    env = {"env_id": specs[0].env_id, "env_hash": specs[0].env_hash}
    return out, families, notes, env
