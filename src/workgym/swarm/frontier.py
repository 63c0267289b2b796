"""The comparison's picture: reward against tokens per task, the baseline line, matched points.

Matplotlib with the Agg backend (no display) and no timestamp in the PNG, so the same comparison
draws the same bytes.
"""

from __future__ import annotations

from pathlib import Path

from workgym.core.missing_extra import require
from workgym.swarm.compare import Comparison

LINE = "#4e79a7"
TARGET = "#e15759"


def frontier_png(comp: Comparison, path: Path) -> Path:
    """Each run with 95% CIs on both axes; baseline runs joined in order of cost; a dotted arrow
    from each target down (or up) to the baseline's reward at its cost, where that exists."""
    require("plots", "the swarm's frontier chart", "matplotlib")
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.2, 4.4), dpi=100)
    line = sorted((r for r in comp.runs if r.baseline), key=lambda r: r.tokens)
    ax.plot([r.tokens for r in line], [r.reward for r in line], "-", color=LINE, alpha=0.6)
    for run in comp.runs:
        color, marker = (LINE, "o") if run.baseline else (TARGET, "s")
        ax.errorbar(
            [run.tokens],
            [run.reward],
            xerr=[[run.tokens - run.tokens_ci[0]], [run.tokens_ci[1] - run.tokens]],
            yerr=[[run.reward - run.reward_ci[0]], [run.reward_ci[1] - run.reward]],
            fmt=marker,
            color=color,
            capsize=3,
        )
        ax.annotate(
            run.label,
            (run.tokens, run.reward),
            textcoords="offset points",
            xytext=(6, 5),
            fontsize=8,
        )
    for m in comp.matched_cost:
        if m.available and m.reference_value is not None:
            target = next(r for r in comp.runs if r.label == m.target)
            ax.annotate(
                "",
                xy=(m.at, m.reference_value),
                xytext=(m.at, target.reward),
                arrowprops={"arrowstyle": "->", "color": "#999999", "linestyle": ":"},
            )
            ax.plot([m.at], [m.reference_value], "x", color=LINE)
    ax.plot([], [], "o-", color=LINE, label="baseline line")
    ax.plot([], [], "s", color=TARGET, label="compared run")
    ax.plot([], [], "x", color=LINE, label="baseline at matched cost")
    ax.set_xlabel("tokens per task (prompt + completion, all agents)")
    ax.set_ylabel("mean reward")
    ax.set_ylim(-0.05, 1.08)
    ax.set_xlim(left=0)
    title = f"{comp.env_id}: reward vs cost ({comp.items} items)"
    if comp.scripted:
        title += " — scripted models, not a learning result"
    ax.set_title(title, fontsize=9)
    ax.legend(frameon=False, loc="lower right", fontsize=8)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png", metadata={"Software": None})
    plt.close(fig)
    return path
