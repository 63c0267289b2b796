"""What a playbook run reports: the token-matched statement, the learning curve, the frontier.

"Matches the best untrained agent at X% of its tokens" is a non-inferiority claim, so it is made
with the certificate's bound (`workgym.stats.proportions.non_inferior`, decisions 0070, 0100) and a
margin fixed before the run: the lower bound of the one-sided interval of the reward difference
must lie above -margin. It is over tasks, and identical arms do not match for free (n tied pairs
of 0/1 rewards give about -(1 - alpha^(1/n))). The amortised version adds
the tokens training spent, and the break-even count is how many tasks the trained agent must
serve before that spending is paid back.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from workgym.core.missing_extra import require
from workgym.stats.proportions import non_inferior

AMORTISE_AT = (100, 1_000, 10_000)


class TokenEfficiency(BaseModel):
    candidate: str
    baseline: str
    where: str
    n: int
    candidate_reward: float
    baseline_reward: float
    diff: float
    lower: float
    margin: float
    alpha: float
    non_inferior: bool
    method: str
    candidate_tokens_per_task: float
    baseline_tokens_per_task: float
    ratio: float  # candidate tokens / baseline tokens, per task
    training_tokens: int
    amortised_ratio: dict[int, float]
    break_even_tasks: int | None  # None: the candidate is not cheaper per task
    statement: str


def break_even(candidate_tpt: float, baseline_tpt: float, training_tokens: int) -> int | None:
    """Tasks after which training has paid for itself: ceil(T / (b - c)); None if c >= b."""
    saving = baseline_tpt - candidate_tpt
    if saving <= 0:
        return None
    return max(0, math.ceil(training_tokens / saving - 1e-9))


def amortised_ratio(
    candidate_tpt: float, baseline_tpt: float, training_tokens: int, tasks: int
) -> float:
    """(c N + T) / (b N): the candidate's tokens over N tasks, training included, relative."""
    if baseline_tpt <= 0:
        return math.inf
    return (candidate_tpt * tasks + training_tokens) / (baseline_tpt * tasks)


def token_efficiency(
    *,
    candidate: str,
    baseline: str,
    candidate_scores: Sequence[float],
    baseline_scores: Sequence[float],
    candidate_tpt: float,
    baseline_tpt: float,
    training_tokens: int,
    margin: float,
    alpha: float = 0.05,
    where: str = "",
    clusters: Sequence[str] | None = None,
) -> TokenEfficiency:
    """The token-matched comparison on per-task scores paired by position (same tasks, seeds)."""
    del clusters  # tasks are the unit; the clustered t was degenerate with few families
    ni = non_inferior(candidate_scores, baseline_scores, margin, alpha)
    ratio = candidate_tpt / baseline_tpt if baseline_tpt else math.inf
    even = break_even(candidate_tpt, baseline_tpt, training_tokens)
    amort = {
        n: amortised_ratio(candidate_tpt, baseline_tpt, training_tokens, n) for n in AMORTISE_AT
    }
    detail = (
        f"reward {ni.diff:+.3f}, one-sided {1 - alpha:.0%} lower bound {ni.lower:+.3f} "
        f"vs margin -{margin:g}, n={ni.n} tasks{', ' + where if where else ''}"
    )
    if ni.passed:
        statement = (
            f"{candidate} matches {baseline} at {ratio:.0%} of its tokens per task ({detail})"
        )
        if even is None:
            statement += "; it is not cheaper per task, so training never pays back in tokens"
        else:
            statement += (
                f"; counting the {training_tokens:,} training tokens it breaks even after "
                f"{even:,} tasks (at 1,000 tasks: {amort[1_000]:.0%} of the tokens)"
            )
    else:
        statement = (
            f"{candidate} does NOT match {baseline} within the margin ({detail}); it uses "
            f"{ratio:.0%} of its tokens per task"
        )
    return TokenEfficiency(
        candidate=candidate,
        baseline=baseline,
        where=where,
        n=ni.n,
        candidate_reward=sum(candidate_scores) / len(candidate_scores),
        baseline_reward=sum(baseline_scores) / len(baseline_scores),
        diff=ni.diff,
        lower=ni.lower,
        margin=margin,
        alpha=alpha,
        non_inferior=ni.passed,
        method=ni.method,
        candidate_tokens_per_task=candidate_tpt,
        baseline_tokens_per_task=baseline_tpt,
        ratio=ratio,
        training_tokens=training_tokens,
        amortised_ratio=amort,
        break_even_tasks=even,
        statement=statement,
    )


def plot_learning_curve(
    checkpoints: Sequence[dict[str, Any]],
    baselines: Sequence[dict[str, Any]],
    path: Path,
) -> Path:
    """Two panels: dev-select reward by iteration against the baselines, and the reward-vs-tokens
    frontier of every configuration."""
    require("plots", "the playbook's learning curve", "matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (curve, frontier) = plt.subplots(1, 2, figsize=(11, 4.2))
    xs = [c["iteration"] for c in checkpoints]
    ys = [c["reward"] for c in checkpoints]
    errs = [c.get("se", 0.0) for c in checkpoints]
    curve.errorbar(xs, ys, yerr=errs, marker="o", capsize=3, label="playbook checkpoints")
    for b in baselines:
        curve.axhline(b["reward"], linestyle="--", linewidth=1, label=b["name"])
    curve.set_xlabel("iteration")
    curve.set_ylabel("dev-select reward")
    curve.set_title("learning curve")
    curve.legend(fontsize=7)
    for c in checkpoints:
        frontier.scatter(c["tokens_per_task"], c["reward"], color="tab:blue")
        frontier.annotate(f"it{c['iteration']}", (c["tokens_per_task"], c["reward"]), fontsize=7)
    for b in baselines:
        frontier.scatter(b["tokens_per_task"], b["reward"], marker="s", color="tab:gray")
        frontier.annotate(b["name"], (b["tokens_per_task"], b["reward"]), fontsize=7)
    frontier.set_xlabel("tokens per task")
    frontier.set_ylabel("dev-select reward")
    frontier.set_title("reward vs tokens")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
