"""From two run directories to per-item scores, the gain test, non-inferiority and cost.

Everything here is a pure function of the stored episodes and the frozen inputs, so the same
files always give the same numbers (resampling is seeded). The unit of analysis is the item: its
K epochs are averaged first, because epochs of one item are not independent; items are clustered
by task family, the unit of the split.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats as _st

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
from workgym.run.rundir import EPISODES, numbered_records
from workgym.stats import families as families_stats
from workgym.stats import proportions
from workgym.stats import results as stats_results
from workgym.stats import tests as stats
from workgym.stats.power import Design, Estimand, default_estimand, detectable_gain

MDE_SIMS = 200  # simulated certificates behind the printed minimum detectable effect
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
    for _, record in numbered_records(run):  # lines --retry-errors replaced: the later counts
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


def _arrays(items: Sequence[ItemScore]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    if len(items) < 2:
        raise ConfigError(
            f"a comparison needs at least 2 items, got {len(items)}; use a larger split"
        )
    cand = np.array([i.candidate.mean for i in items])
    base = np.array([i.baseline.mean for i in items])
    return cand, base, [i.family for i in items]


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


def _design(items: Sequence[ItemScore], epochs: int, estimand: Estimand, alpha: float) -> Design:
    """The certificate's own design, with the baseline's observed rates (for the MDE)."""
    sizes = [r.n for r in families(items)]
    base = [i.baseline.mean for i in items]
    rates = tuple(base) if epochs > 1 else (float(np.mean(base)),)
    return Design(tuple(sizes), epochs, rates, estimand, alpha)


def gain(
    items: Sequence[ItemScore],
    alpha: float,
    epochs: int,
    n_resamples: int,
    seed: int,
    estimand: Estimand | None = None,
) -> GainResult:
    """The task-gain test of docs/certificate.md step 3 for the declared estimand (decision 0070).

    items: exact McNemar (K = 1, binary) or the sign-flip test over items, with the exact
    unconditional / the bounded score interval; families: the sign-flip test over family means
    with its exact inverted interval. The other estimand's test is shown too, outside the gate.
    """
    cand, base, fams = _arrays(items)
    n_fam = len(set(fams))
    default, reason = default_estimand(n_fam, alpha)
    if estimand is None:
        estimand = default
    elif estimand != default:
        reason = f"declared before the look (the default would be {default})"
    binary = epochs == 1 and _binary(items)
    bound = proportions.paired_bound(cand, base, alpha)
    d = cand - base
    item_p, exact = families_stats.sign_flip_p(d, n_resamples, seed)
    if binary:
        mc = stats.mcnemar_test(cand, base, "greater")
        item_test = TestResult(
            name="mcnemar_exact",
            p_value=mc.p_value,
            lower=bound.lower,
            gate=estimand == "items",
            rejects=mc.p_value <= alpha,
            detail=f"{mc.b} items only the baseline solved, {mc.c} only the candidate; "
            "bound: exact unconditional",
        )
        item_smallest = 0.5 ** len(items)
    else:
        item_test = TestResult(
            name="sign_flip_items",
            p_value=float(item_p[0]),
            lower=bound.lower,
            gate=estimand == "items",
            rejects=float(item_p[0]) <= alpha,
            detail=("exact" if exact else f"{n_resamples} seeded sign patterns")
            + "; bound: score interval with fractional discordance",
        )
        item_smallest = 0.5 ** len(items) if exact else 1.0 / (n_resamples + 1)
    tests = [item_test]
    fam_res = families_stats.family_test(d, fams, alpha, n_resamples, seed) if n_fam >= 2 else None
    if fam_res is not None:
        tests.append(
            TestResult(
                name="sign_flip_families",
                p_value=fam_res.p_value,
                lower=finite(fam_res.lower),
                gate=estimand == "families",
                rejects=fam_res.passable and fam_res.p_value <= alpha,
                detail=f"{n_fam} families, smallest attainable p {fam_res.smallest_p:.3g}"
                + ("" if fam_res.passable else f" > alpha {alpha:g}: this gate cannot pass"),
            )
        )
    p: float | None
    if estimand == "families":
        if fam_res is None:
            raise ConfigError(
                "a family-level certificate needs at least 2 test families; declare --estimand "
                "items"
            )
        diff, lower, ci95 = fam_res.diff, fam_res.lower, fam_res.ci95
        p, smallest, method = fam_res.p_value, fam_res.smallest_p, fam_res.method
    else:
        diff, lower, ci95 = bound.diff, bound.lower, bound.ci95
        p, smallest, method = item_test.p_value, item_smallest, item_test.name
    passable = smallest <= alpha
    gate = [t for t in tests if t.gate]
    design = _design(items, epochs, estimand, alpha)
    mde = detectable_gain(design, 0.8, MDE_SIMS, seed) if passable else None
    n = len(items)
    se = float(np.std(d, ddof=1) / math.sqrt(n))
    result = GainResult(
        baseline_mean=float(base.mean()),
        candidate_mean=float(cand.mean()),
        diff=diff,
        se=se,
        lower=finite(lower),
        ci95=(finite(ci95[0]), finite(ci95[1])),
        p_value=p,
        correlation=finite(stats_results.correlation(cand, base)),
        n_items=n,
        n_clusters=n_fam,
        method=method,
        tests=tests,
        significant=passable and all(t.rejects for t in gate),
        mde=mde,
        underpowered=mde is None or (diff > 0 and mde > diff),
        families=families(items),
        estimand=estimand,
        estimand_reason=reason,
        smallest_p=smallest,
        passable=passable,
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
    """Step 4 with a bound zero variance cannot fake (decision 0070).

    The one-sided (1-alpha) lower bound is the exact unconditional bound (binary, decision 0100)
    or the bounded score
    bound (graded), over items; it must be above -margin. A suite whose baseline is at the floor
    (nothing can regress from 0) or where both arms are at the ceiling cannot show anything and
    is reported so, never as a pass. `n_needed`: items for `power` at no true change with the
    observed discordance, and at least the items an all-tie suite needs.
    """
    cand, base, fams = _arrays(items)
    bound = proportions.paired_bound(cand, base, alpha)
    n = len(items)
    z = float(_st.norm.ppf(1 - alpha) + _st.norm.ppf(power))
    rate = (bound.x + bound.y) / n
    n_needed = (
        max(
            proportions.items_to_show(margin, alpha, bound.method == "exact_unconditional"),
            math.ceil(z * z * rate / margin**2),
        )
        if margin > 0
        else None
    )
    b_mean, c_mean = float(base.mean()), float(cand.mean())
    if b_mean == 0.0:
        status, reason = "cannot show", "the baseline scores 0 on every item: nothing can regress"
    elif b_mean == 1.0 and c_mean == 1.0:
        status, reason = "cannot show", "both arms score 1 on every item: the suite is saturated"
    elif bound.lower > -margin:
        status, reason = "shown", f"lower bound {bound.lower:+.3f} > -{margin:g}"
    else:
        status, reason = "not shown", f"lower bound {bound.lower:+.3f} not above -{margin:g}"
    return NonInferiorityResult(
        margin=margin,
        alpha=alpha,
        baseline_mean=b_mean,
        candidate_mean=c_mean,
        diff=bound.diff,
        lower=finite(bound.lower),
        passed=status == "shown",
        method=bound.method,
        n_items=n,
        n_clusters=len(set(fams)),
        n_needed=n_needed,
        underpowered=n_needed is not None and n < n_needed,
        status=status,
        reason=reason,
    )


def gain_of(
    candidate: Sequence[float],
    baseline: Sequence[float],
    families_of: Sequence[str],
    epochs: int,
    alpha: float = 0.05,
    seed: int = 0,
    estimand: Estimand | None = None,
) -> GainResult:
    """:func:`gain` on per-task mean scores paired by position (bench scripts, the demo): the
    same tests and intervals the certificate uses, without run directories."""

    def arm(score: float) -> ArmItem:
        return ArmItem(rewards=[score], successes=[score == 1.0], tokens=[0], failures=["ok"])

    items = [
        ItemScore(id=str(i), family=f, baseline=arm(b), candidate=arm(c), d=c - b)
        for i, (c, b, f) in enumerate(zip(candidate, baseline, families_of, strict=True))
    ]
    return gain(items, alpha, epochs, 20_000, seed, estimand)
