"""The imitation gap: teacher-forced score against free-running success, per family and model.

The claim under test: scoring a model by imitation (at each step, given the gold prefix, does it
pick the gold action?) overstates what it can do on its own, and more so the more room there is
to fail. For each model (a base model, checkpoints along training, an SFT checkpoint) and each
family, this puts two numbers side by side on the same tasks:

- teacher-forced: the per-step rate (the share of gold steps the model matched given the gold
  prefix: what an imitation metric reports), the all-steps rate (every step of a task matched),
  and the gold trajectory's mean token log-likelihood;
- free-running: the success rate of the same model in the real episode loop (a normal resumable
  run directory under `out/free/`).

The gap is the per-step rate minus free-running success; the slope of the gap against (1 -
free-running success) over all (family, model) cells, with its 95% interval, is the headline
number. The all-steps rate is reported beside it but cannot overstate under greedy decoding with
deterministic tools: a model that matches every gold step replays the gold trajectory exactly,
so it also succeeds free-running (all-steps <= free success, up to sampling and to greedy
decoding's dependence on the other episodes in a local model's batch: docs/imitation.md).
Everything is resumable: teacher-forced results are appended to `out/teacher_forced.jsonl` per
(model, task) and skipped on a re-run; free-running runs resume like any `workgym eval`.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from workgym.certify.teacher_forcing import TaskScore, score_task
from workgym.run.gold import gold_trajectory

if TYPE_CHECKING:
    from workgym.core.environment import Environment
    from workgym.core.model import Model
    from workgym.core.task_aware import TaskAwareModel
    from workgym.core.tasks import Task
    from workgym.stats.regression import SlopeFit

SCORES = "teacher_forced.jsonl"
REPORT = "imitation.json"
PLOT = "imitation.png"


class Cell(BaseModel):
    """One (model, family) point of the experiment."""

    model: str
    family: str
    n_tasks: int
    """Tasks with a gold trajectory in this family (each scored both ways)."""
    tf_step_rate: float
    """Mean over tasks of the share of gold steps matched given the gold prefix."""
    tf_all_steps: float
    """Share of tasks whose every gold step was matched (teacher-forced 'success')."""
    free_success: float
    """Success rate in the real episode loop (mean over epochs and tasks)."""
    mean_logprob: float | None = None
    """Mean gold-token log-likelihood, for models that score tokens (`hf/`)."""

    @property
    def gap(self) -> float:
        """Teacher-forced per-step rate minus free-running success."""
        return self.tf_step_rate - self.free_success


class Slope(BaseModel):
    """The fitted line gap = a + b (1 - free-running success), over every cell."""

    slope: float | None
    lower: float | None
    upper: float | None
    intercept: float | None
    r_squared: float | None
    n_points: int


class ImitationReport(BaseModel):
    """What `workgym imitation-gap` writes to imitation.json."""

    env_id: str
    env_hash: str
    split: str
    models: list[str]
    cells: list[Cell]
    slope: Slope
    skipped: dict[str, str]
    """Tasks left out (no oracle, or the oracle does not solve them) and why."""
    scripted: bool
    """Every model is a test double: the numbers check the plumbing, they measure nothing."""


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def fit(cells: list[Cell]) -> Slope:
    from workgym.stats.regression import ols_slope

    line: SlopeFit = ols_slope(
        [1.0 - c.free_success for c in cells], [c.gap for c in cells], confidence=0.95
    )
    return Slope(
        slope=_finite(line.slope),
        lower=_finite(line.lower),
        upper=_finite(line.upper),
        intercept=_finite(line.intercept),
        r_squared=_finite(line.r_squared),
        n_points=line.n,
    )


def read_scores(path: Path) -> dict[tuple[str, str], TaskScore]:
    """Teacher-forced results already on disk; a torn last line (a kill mid-write) is dropped."""
    found: dict[tuple[str, str], TaskScore] = {}
    if not path.exists():
        return found
    for line in path.read_text().splitlines():
        try:
            score = TaskScore.model_validate_json(line)
        except ValueError:
            continue
        found[(score.model, score.task_id)] = score
    return found


async def gold_for(
    env: Environment, tasks: list[Task], system_prompt: str
) -> tuple[dict[str, list[Any]], dict[str, str]]:
    golds: dict[str, list[Any]] = {}
    skipped: dict[str, str] = {}
    for task in tasks:
        try:
            golds[task.id] = await gold_trajectory(env, task, system_prompt)
        except (NotImplementedError, ValueError) as exc:
            skipped[task.id] = str(exc) or type(exc).__name__
    return golds, skipped


async def measure(
    env: Environment,
    models: dict[str, Model | TaskAwareModel],
    *,
    split: str,
    out: Path,
    epochs: int = 1,
    limit: int | None = None,
    concurrency: int = 4,
    system_prompt: str = "",
    progress: bool = True,
) -> ImitationReport:
    """Run (or resume) the experiment for every model and write imitation.json and the plot."""
    from workgym.run.options import EvalOptions
    from workgym.run.policy import Policy
    from workgym.run.runner import eval_async

    out.mkdir(parents=True, exist_ok=True)
    tasks = list(env.taskset.split(split))[: limit if limit is not None else None]
    golds, skipped = await gold_for(env, tasks, system_prompt)
    scored = [t for t in tasks if t.id in golds]
    done = read_scores(out / SCORES)
    with (out / SCORES).open("a") as sink:
        for label, model in models.items():
            for task in scored:
                if (label, task.id) in done:
                    continue
                score = await score_task(model, label, env, task, golds[task.id])
                sink.write(score.model_dump_json() + "\n")
                sink.flush()
                done[(label, task.id)] = score
    free: dict[str, dict[str, float]] = {}
    for label, model in models.items():
        run = await eval_async(
            env,
            split=split,
            epochs=epochs,
            out=out / "free" / slug(label),
            options=EvalOptions(
                policy=Policy(model, system_prompt=system_prompt),
                limit=limit,
                concurrency=concurrency,
                progress=progress,
            ),
        )
        wins: dict[str, list[float]] = defaultdict(list)
        for episode in run.dir.episodes():
            wins[episode.task_id].append(1.0 if episode.success else 0.0)
        free[label] = {k: sum(v) / len(v) for k, v in wins.items()}
    cells = build_cells(models, scored, done, free)
    report = ImitationReport(
        env_id=env.id,
        env_hash=env.content_hash(),
        split=split,
        models=list(models),
        cells=cells,
        slope=fit(cells),
        skipped=skipped,
        scripted=all(name.startswith("scripted/") for name in (m.name for m in models.values())),
    )
    (out / REPORT).write_text(report.model_dump_json(indent=2) + "\n")
    plot(report, out / PLOT)
    return report


def build_cells(
    models: dict[str, Model | TaskAwareModel],
    tasks: list[Task],
    scores: dict[tuple[str, str], TaskScore],
    free: dict[str, dict[str, float]],
) -> list[Cell]:
    cells: list[Cell] = []
    families = sorted({t.family for t in tasks})
    for label in models:
        for family in families:
            mine = [scores[(label, t.id)] for t in tasks if t.family == family]
            if not mine:
                continue
            logps = [s.mean_logprob for s in mine if s.mean_logprob is not None]
            cells.append(
                Cell(
                    model=label,
                    family=family,
                    n_tasks=len(mine),
                    tf_step_rate=sum(s.step_rate for s in mine) / len(mine),
                    tf_all_steps=sum(s.all_steps for s in mine) / len(mine),
                    free_success=sum(free[label].get(s.task_id, 0.0) for s in mine) / len(mine),
                    mean_logprob=sum(logps) / len(logps) if logps else None,
                )
            )
    return cells


def plot(report: ImitationReport, path: Path) -> None:
    """Gap against room to fail, one colour per model, with the fitted line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    # Cells of 1-2 tasks share a few coordinates; each model is drawn a little to the side of the
    # others (the fit uses the true values) so that no model hides behind another.
    step = 0.012
    for i, label in enumerate(report.models):
        mine = [c for c in report.cells if c.model == label]
        shift = (i - (len(report.models) - 1) / 2) * step
        xs = [1 - c.free_success + shift for c in mine]
        ax.scatter(xs, [c.gap for c in mine], label=label, s=28, alpha=0.8)
    s = report.slope
    if s.slope is not None and s.intercept is not None:
        ax.plot([0, 1], [s.intercept, s.intercept + s.slope], color="black", lw=1)
        ci = "" if s.lower is None else f" [{s.lower:.2f}, {s.upper:.2f}]"
        ax.set_title(f"slope {s.slope:.2f}{ci} over {s.n_points} (family, model) points")
    ax.axhline(0, color="grey", lw=0.5)
    ax.set_xlabel("1 - free-running success (models offset sideways)")
    ax.set_ylabel("teacher-forced step rate - free-running success")
    if report.scripted:
        ax.text(0.02, 0.95, "test doubles: plumbing only", transform=ax.transAxes, va="top")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def summary_rows(report: ImitationReport) -> list[dict[str, Any]]:
    """The report as table rows (the CLI prints these)."""
    return [
        {**json.loads(c.model_dump_json()), "gap": c.gap}
        for c in sorted(report.cells, key=lambda c: (c.model, c.family))
    ]
