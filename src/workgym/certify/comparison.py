"""From two run directories to per-item scores, the gain test, non-inferiority and cost.

Everything here is a pure function of the stored episodes and the frozen inputs, so the same
files always give the same numbers (resampling is seeded). The unit of analysis is the item: its
K epochs are averaged first, because epochs of one item are not independent; items are clustered
by task family, the unit of the split.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from workgym.certify.schema import (
    ArmCost,
    ArmItem,
    FamilyRow,
    GainResult,
    ItemScore,
    NonInferiorityResult,
    TestResult,
    finite,
)
from workgym.core import datafiles
from workgym.core.errors import ConfigError
from workgym.guards.review import REVIEWS, counted, read_reviews
from workgym.run.rundir import EPISODES, superseded_lines
from workgym.stats import bootstrap
from workgym.stats import tests as stats

# Below this many items the normal approximation of the paired t is shaky, so the exact (or
# seeded Monte Carlo) sign-flip test joins the gate.
SMALL_N = 30
ROLES = ("system", "user", "assistant", "tool")


def _digest(path: Path) -> tuple[str, int]:
    """sha256 of a file as stored, and its number of lines."""
    data = datafiles.read_bytes(path)  # a run folder may have been sent: no links followed
    return hashlib.sha256(data).hexdigest(), data.count(b"\n")


def reviews_digest(run: Path) -> tuple[str | None, int]:
    """RUN/reviews.jsonl's digest and line count; (None, 0) when nothing was reviewed."""
    path = run / REVIEWS
    return _digest(path) if datafiles.present(path) else (None, 0)


def episodes_digest(run: Path) -> tuple[str, int]:
    """sha256 of episodes.jsonl as stored, and its number of lines."""
    path = run / EPISODES
    if not datafiles.present(path):
        raise ConfigError(f"{run} has no {EPISODES}; run it first (or resume it)")
    return _digest(path)


def _records(run: Path) -> dict[tuple[str, int], dict[str, Any]]:
    out: dict[tuple[str, int], dict[str, Any]] = {}
    replaced = superseded_lines(run)  # lines --retry-errors replaced: the later line counts
    with datafiles.open_text(run / EPISODES) as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip() or lineno in replaced:
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ConfigError(
                    f"{run / EPISODES}:{lineno} is corrupt ({exc.msg}); move that line out "
                    "and resume the run"
                ) from exc
            key = (str(record["task_id"]), int(record["epoch"]))
            if key in out:
                raise ConfigError(
                    f"{run / EPISODES}: task {key[0]} epoch {key[1]} appears twice; a run "
                    "directory must hold one episode per (task, epoch)"
                )
            out[key] = record
    return out


def read_arm(
    run: Path, items: Sequence[tuple[str, str]], epochs: int
) -> tuple[dict[str, ArmItem], ArmCost]:
    """Scores of one arm on the frozen items, and its cost; every (item, epoch) must be there.
    RUN/reviews.jsonl decides which flagged successes count."""
    records = _records(run)
    reviews = read_reviews(run)
    missing = [(i, e) for i, _ in items for e in range(epochs) if (i, e) not in records]
    if missing:
        raise ConfigError(
            f"{run} is incomplete: {len(missing)} of {len(items) * epochs} episodes missing "
            f"(e.g. task {missing[0][0]} epoch {missing[0][1]}); re-run `workgym certify` "
            "with the same arguments to resume it"
        )
    out: dict[str, ArmItem] = {}
    totals: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for task_id, _ in items:
        rewards, successes, tokens, failures, flags = [], [], [], [], set()
        for epoch in range(epochs):
            r = records[(task_id, epoch)]
            reward, success, failure, ep_flags = counted(r, reviews)
            usage = r.get("usage") or {}
            total = int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0))
            rewards.append(reward)
            successes.append(success)
            tokens.append(total)
            failures.append(failure)
            flags.update(ep_flags)
            totals["prompt"] += usage.get("prompt_tokens", 0)
            totals["completion"] += usage.get("completion_tokens", 0)
            for role in ROLES:
                totals[role] += (usage.get("by_role") or {}).get(role, 0)
            counts[failure] += 1
        out[task_id] = ArmItem(
            rewards=rewards,
            successes=successes,
            tokens=tokens,
            failures=failures,
            flags=sorted(flags),
        )
    n = len(items) * epochs
    cost = ArmCost(
        tokens_per_task=(totals["prompt"] + totals["completion"]) / n,
        prompt_per_task=totals["prompt"] / n,
        completion_per_task=totals["completion"] / n,
        by_role_per_task={role: totals[role] / n for role in ROLES},
        mean_reward=float(np.mean([a.mean for a in out.values()])),
        errors=counts["error"],
        truncated=counts["truncated"],
        verifier_errors=counts["verifier_error"],
        flagged_successes=counts["flagged"],
        reviewed_successes=counts["reviewed"],
    )
    return out, cost


def item_scores(
    items: Sequence[tuple[str, str]], base: dict[str, ArmItem], cand: dict[str, ArmItem]
) -> list[ItemScore]:
    return [
        ItemScore(
            id=task_id,
            family=family,
            baseline=base[task_id],
            candidate=cand[task_id],
            d=cand[task_id].mean - base[task_id].mean,
        )
        for task_id, family in items
    ]


def _arrays(items: Sequence[ItemScore]) -> tuple[np.ndarray, np.ndarray, list[str] | None]:
    if len(items) < 2:
        raise ConfigError(
            f"a comparison needs at least 2 items, got {len(items)}; use a larger split"
        )
    cand = np.array([i.candidate.mean for i in items])
    base = np.array([i.baseline.mean for i in items])
    families = [i.family for i in items]
    return cand, base, families if len(set(families)) >= 2 else None


def _binary(items: Sequence[ItemScore]) -> bool:
    return all(r in (0.0, 1.0) for i in items for r in (*i.baseline.rewards, *i.candidate.rewards))


def families(items: Sequence[ItemScore]) -> list[FamilyRow]:
    groups: dict[str, list[ItemScore]] = defaultdict(list)
    for item in items:
        groups[item.family].append(item)
    rows = []
    for family in sorted(groups):
        g = groups[family]
        b = float(np.mean([i.baseline.mean for i in g]))
        c = float(np.mean([i.candidate.mean for i in g]))
        rows.append(FamilyRow(family=family, n=len(g), baseline=b, candidate=c, diff=c - b))
    return rows


def gain(
    items: Sequence[ItemScore], alpha: float, epochs: int, n_resamples: int, seed: int
) -> GainResult:
    """The task-gain test of CERTIFICATE.md step 3 (see docs/decisions for the choice of tests)."""
    cand, base, clusters = _arrays(items)
    primary = stats.paired_t_test(cand, base, "greater", 1.0 - alpha, clusters)
    two_sided = stats.paired_t_test(cand, base, "two-sided", 0.95, clusters)
    p = finite(primary.p_value)
    tests = [
        TestResult(
            name=primary.method,
            p_value=p,
            lower=finite(primary.lower),
            statistic=finite(primary.statistic),
            gate=True,
            rejects=p is not None and p < alpha and primary.lower > 0,
            detail=f"{primary.n_clusters or primary.n} clusters" if clusters else "",
        )
    ]
    binary = _binary(items)
    if epochs == 1 and binary:
        mc = stats.mcnemar_test(cand, base, "greater")
        tests.append(
            TestResult(
                name="mcnemar_exact",
                p_value=mc.p_value,
                gate=True,
                rejects=mc.p_value < alpha,
                detail=f"{mc.b} items only the baseline solved, {mc.c} only the candidate",
            )
        )
    if len(items) < SMALL_N or not binary:
        sf = bootstrap.sign_flip_test(cand, base, "greater", n_resamples, seed)
        tests.append(
            TestResult(
                name="sign_flip",
                p_value=sf.p_value,
                gate=True,
                rejects=sf.p_value < alpha,
                detail="exact" if sf.exact else f"{sf.n_resamples} seeded sign patterns",
            )
        )
    n = len(items)
    mde = (
        stats.minimum_detectable_effect(primary.se * math.sqrt(n), n, alpha)
        if math.isfinite(primary.se)
        else None
    )
    result = GainResult(
        baseline_mean=float(base.mean()),
        candidate_mean=float(cand.mean()),
        diff=primary.diff,
        se=primary.se,
        lower=finite(primary.lower),
        ci95=(finite(two_sided.lower), finite(two_sided.upper)),
        p_value=p,
        correlation=finite(primary.correlation),
        n_items=n,
        n_clusters=primary.n_clusters,
        method=primary.method,
        tests=tests,
        significant=all(t.rejects for t in tests if t.gate),
        mde=mde,
        underpowered=mde is not None and primary.diff > 0 and mde > primary.diff,
        families=families(items),
    )
    if epochs > 1:
        k = epochs
        pk_base = stats.pass_k_summary([k] * n, [sum(i.baseline.successes) for i in items], k)
        pk_cand = stats.pass_k_summary([k] * n, [sum(i.candidate.successes) for i in items], k)
        result.pass_hat_k = {"baseline": pk_base.pass_hat_k, "candidate": pk_cand.pass_hat_k}
        result.pass_at_k = {"baseline": pk_base.pass_at_k, "candidate": pk_cand.pass_at_k}
    return result


def non_inferiority(
    items: Sequence[ItemScore], margin: float, alpha: float, power: float = 0.8
) -> NonInferiorityResult:
    """Step 4: pass iff the one-sided (1-alpha) lower bound of the difference is above -margin.

    `n_needed` is the item count that would give `power` against a true difference of 0
    (ignoring clustering, so a lower bound on what is needed).
    """
    cand, base, clusters = _arrays(items)
    res = stats.non_inferiority(cand, base, margin, alpha, "t", clusters)
    sd = float(np.std(cand - base, ddof=1))
    n_needed = stats.non_inferiority_sample_size(sd, margin, alpha, power) if margin > 0 else None
    return NonInferiorityResult(
        margin=margin,
        alpha=alpha,
        baseline_mean=float(base.mean()),
        candidate_mean=float(cand.mean()),
        diff=res.diff,
        lower=finite(res.lower),
        passed=res.passed,
        method=res.method,
        n_items=res.n,
        n_clusters=len(set(clusters)) if clusters else None,
        n_needed=n_needed,
        underpowered=n_needed is not None and res.n < n_needed,
    )
