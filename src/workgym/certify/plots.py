"""The certificate's plots, as base64 PNG strings to embed in one self-contained HTML file.

Matplotlib with the Agg backend (no display needed) and no timestamp metadata in the PNG, so the
same certificate renders to the same bytes.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence
from typing import Any

from workgym.certify.schema import Certificate, Comparison, LearningCurve
from workgym.core.missing_extra import require

BASE = "#4e79a7"
CAND = "#e15759"
REFS = ("#4e79a7", "#76b7b2", "#9c755f", "#bab0ac")


def _figure(width: float, height: float) -> tuple[Any, Any]:
    require("plots", "the certificate's charts", "matplotlib")
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(width, height), dpi=100)
    return fig, ax


def _png(fig: Any) -> str:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", metadata={"Software": None})
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def difference_histogram(d: Sequence[float], mean: float, lower: float | None) -> str:
    """Per-item differences (candidate - baseline): where the gain comes from, and how spread."""
    import numpy as np

    fig, ax = _figure(6.4, 3.4)
    values = np.asarray(d, dtype=float)
    span = max(1.0, float(np.abs(values).max()) if values.size else 1.0)
    bins = np.linspace(-span, span, 21)
    ax.hist(values, bins=bins, color="#9c9c9c", edgecolor="white")
    ax.axvline(0.0, color="black", linewidth=1)
    ax.axvline(mean, color=CAND, linewidth=2, label=f"mean {mean:+.3f}")
    if lower is not None:
        ax.axvline(lower, color=CAND, linewidth=1.5, linestyle="--", label=f"lower {lower:+.3f}")
    ax.set_xlabel("per-item difference in reward (candidate - baseline)")
    ax.set_ylabel("items")
    ax.legend(frameon=False, loc="upper left")
    ax.spines[["top", "right"]].set_visible(False)
    return _png(fig)


def _arm_point(comp: Comparison, arm: str) -> tuple[float, float, tuple[float, float]]:
    """Tokens, mean reward and the reward's 95% interval as error-bar lengths (below, above):
    the run summaries' interval (exact for binary rewards; workgym.stats.proportions)."""
    from workgym.stats.proportions import reward_interval

    est = reward_interval([getattr(i, arm).mean for i in comp.items])
    tokens = getattr(comp.cost, arm).tokens_per_task
    return tokens, est.mean, (est.mean - est.lower, est.upper - est.mean)


def frontier(cert: Certificate) -> str:
    """Reward against tokens per task, per arm, for the task and each suite (95% CI bars).

    Up and to the left is better: more reward for fewer tokens. An arrow runs from the baseline
    to the candidate of the same environment.
    """
    comps: list[tuple[str, Comparison]] = [("task", cert.task)]
    comps += [(s.env.id, s) for s in cert.suites]
    fig, axes = _figure(6.4, 3.6)
    for label, comp in comps:
        bx, by, be = _arm_point(comp, "baseline")
        cx, cy, ce = _arm_point(comp, "candidate")
        axes.annotate(
            "",
            xy=(cx, cy),
            xytext=(bx, by),
            arrowprops={"arrowstyle": "->", "color": "#bbbbbb", "linewidth": 1},
        )
        axes.errorbar([bx], [by], yerr=[[be[0]], [be[1]]], fmt="o", color=BASE, capsize=3)
        axes.errorbar([cx], [cy], yerr=[[ce[0]], [ce[1]]], fmt="s", color=CAND, capsize=3)
        axes.annotate(label, (cx, cy), textcoords="offset points", xytext=(6, 4), fontsize=8)
    axes.plot([], [], "o", color=BASE, label="baseline")
    axes.plot([], [], "s", color=CAND, label="candidate")
    axes.set_xlabel("tokens per task (prompt + completion)")
    axes.set_ylabel("mean reward")
    axes.set_ylim(-0.05, 1.08)
    axes.set_xlim(left=0)
    axes.legend(frameon=False, loc="lower right")
    axes.spines[["top", "right"]].set_visible(False)
    return _png(fig)


def learning_curve(curve: LearningCurve) -> str:
    """The training's own curve (`--curve`): how the candidate was reached, with the trainer's
    spread as bars where it measured one, its reference agents as dashed lines, and a star on the
    checkpoint it kept. Drawn apart from the held-out plots because it is not held-out evidence."""
    fig, ax = _figure(6.4, 3.4)
    xs = [p.x for p in curve.points]
    ys = [p.reward for p in curve.points]
    bx: list[int] = []
    by: list[float] = []
    below: list[float] = []
    above: list[float] = []
    for p in curve.points:
        if p.lower is not None and p.upper is not None:
            bx.append(p.x)
            by.append(p.reward)
            below.append(p.reward - p.lower)
            above.append(p.upper - p.reward)
    if bx:
        ax.errorbar(bx, by, yerr=[below, above], fmt="none", ecolor="#bbbbbb", capsize=3)
    ax.plot(xs, ys, marker="o", markersize=3, color=CAND, label=f"{curve.trainer} training")
    for i, (name, value) in enumerate(sorted(curve.references.items())):
        ax.axhline(value, color=REFS[i % len(REFS)], linewidth=1, linestyle="--", label=name)
    kept = [p for p in curve.points if p.x == curve.chosen]
    if kept:
        ax.plot(
            [p.x for p in kept],
            [p.reward for p in kept],
            linestyle="none",
            marker="*",
            markersize=12,
            color=CAND,
            label="kept checkpoint",
        )
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # steps and iterations are counts
    ax.set_xlabel(curve.x_label)
    ax.set_ylabel(curve.y_label)
    ax.legend(frameon=False, fontsize=8, loc="best")
    ax.spines[["top", "right"]].set_visible(False)
    return _png(fig)
