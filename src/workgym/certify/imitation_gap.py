"""The imitation gap: teacher-forced score against free-running success, per family and model.

The claim under test: scoring a model by imitation (at each step, given the gold prefix, does it
pick the gold action?) overstates what it can do on its own. For each model (a base model,
checkpoints along training, an SFT checkpoint) and each family, this puts side by side, on the
same tasks:

- teacher-forced (gold prefix): the per-step rate, the all-steps rate (every step of a task
  matched) and the gold trajectory's mean token log-likelihood;
- own prefix: the per-step rate of the model's free-running steps, each labelled by the
  environment's state-conditional oracle (`core.next_action`), where the environment has one;
- free-running: the success rate of the same model in the real episode loop (a normal resumable
  run directory under `out/free/`).

The headline numbers (docs/imitation.md): **exposure bias**, gold-prefix minus own-prefix
per-step accuracy (one unit, null 0: `exposure_bias`); the **compounding check**, the success
the per-step teacher-forced accuracies predict against observed free success; and the
**Bland-Altman** fit of tf - f against the mean of the two, with a **same-data null**
(`gap_null`) in which no cell overstates. The old slope of (tf - f) on (1 - f) is kept as a
labelled secondary number: f is on both axes, so it is positive for any imperfect metric.

The all-steps rate cannot overstate under greedy decoding with deterministic tools: a model that
matches every gold step replays the gold trajectory exactly, so it also succeeds free-running
(up to greedy decoding's dependence on the other episodes in a local model's batch).
Everything is resumable: teacher-forced results are appended to `out/teacher_forced.jsonl` per
(model, task) and skipped on a re-run; free-running runs resume like any `workgym eval`; the
own-prefix labels are recomputed from those runs (no model call) into `out/own_prefix.jsonl`.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from workgym.certify.exposure_bias import (
    OWN,
    ByState,
    OwnScore,
    on_own_states,
    on_own_steps,
    own_counts_by_task,
    own_position_accuracy,
    position_accuracy,
    predicted_success,
    score_episode,
    state_rates,
)
from workgym.certify.gap_null import (
    AgreementFit,
    Measures,
    NullReport,
    bland_altman,
    same_data_null,
)
from workgym.certify.teacher_forcing import TaskScore, score_task
from workgym.core.missing_extra import require
from workgym.core.model import Sampling
from workgym.core.next_action import next_action_oracle
from workgym.run.gold import gold_trajectory

if TYPE_CHECKING:
    from collections.abc import Iterable

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
    gold_steps: list[int] = []
    """Gold steps of each task times its teacher-forced draws (the same-data null draws this
    many step answers per task)."""
    free_episodes: int = 0
    """Free-running episodes played in this cell."""
    own_step_rate: float | None = None
    """Share of the model's own free-running steps that were the right next action, over every
    episode of the cell (None: no state-conditional oracle, or no own step)."""
    tf_on_own_steps: float | None = None
    """Gold-prefix accuracy weighted by each task's own steps: the share of the own steps the
    teacher-forced rates say would be right (`exposure_bias.on_own_steps`)."""
    tf_by_position: list[float] = []
    """Gold-prefix accuracy at the 1st, 2nd, ... step, over the tasks that have it."""
    own_by_position: list[float] = []
    """Own-prefix accuracy at the 1st, 2nd, ... step, over the episodes that reached it."""
    predicted_success: float | None = None
    """Success predicted from `tf_by_position` (independent steps, any miss loses the task)."""
    by_state: ByState | None = None
    """The own steps against the gold-prefix accuracy of the gold state with the same right
    actions (`exposure_bias.on_own_states`); None without an oracle or a matched own step."""

    @property
    def gap(self) -> float:
        """Teacher-forced per-step rate minus free-running success (the old, mixed-unit gap)."""
        return self.tf_step_rate - self.free_success

    @property
    def exposure_bias(self) -> float | None:
        """Gold-prefix minus own-prefix per-step accuracy on the same own steps: null 0."""
        if self.own_step_rate is None or self.tf_on_own_steps is None:
            return None
        return self.tf_on_own_steps - self.own_step_rate


class ModelExposure(BaseModel):
    """Exposure bias of one model: the mean over its families of the cells' exposure bias."""

    model: str
    n_families: int
    gold_prefix: float
    """Mean over the families of the gold-prefix accuracy weighted by the own steps."""
    own_prefix: float
    """Mean own-prefix per-step accuracy over the families."""
    exposure_bias: float
    lower: float | None
    upper: float | None
    """95% t interval over families (G - 1 df, scipy; families are the clusters)."""
    gold_by_position: list[float] = []
    """Gold-prefix accuracy at the 1st, 2nd, ... step, pooled over the model's tasks."""
    own_by_position: list[float] = []
    """Own-prefix accuracy at the 1st, 2nd, ... step, pooled over the model's episodes."""
    by_state: float | None = None
    """Mean over families of the cells' exposure bias by state (`ByState.bias`)."""
    by_state_lower: float | None = None
    by_state_upper: float | None = None
    """95% t interval over the families that have a matched own step."""
    by_state_families: int = 0
    by_state_matched: int = 0
    """Own steps matched to a gold state, of `by_state_own_steps`."""
    by_state_own_steps: int = 0
    off_gold_steps: int = 0
    """Matched own steps taken after the model's own first miss in an episode (`ByState`)."""
    off_gold_expected: float | None = None
    off_gold_observed: float | None = None
    """Gold-state and own accuracy on those steps, pooled over the model's families."""


class ModelCompounding(BaseModel):
    """The compounding check of one model: predicted against observed free success."""

    model: str
    predicted: float
    """Mean over families of the success the per-step teacher-forced accuracies predict."""
    observed: float
    """Mean over families of the observed free-running success."""

    @property
    def shortfall(self) -> float:
        """Predicted minus observed: positive when free running loses more than the per-step
        rates predict (errors compound beyond independent misses)."""
        return self.predicted - self.observed


class Slope(BaseModel):
    """The old fitted line gap = a + b (1 - free-running success), over every cell. Secondary:
    f is on both axes, so b = 1 - slope(tf on f), positive for any imperfect metric."""

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
    state_oracle: bool
    """The environment declares a state-conditional oracle, so own-prefix accuracy and exposure
    bias are measured; otherwise teacher-forced against free-running only."""
    exposure: list[ModelExposure]
    """Exposure bias per model (empty without a state-conditional oracle)."""
    compounding: list[ModelCompounding]
    """Predicted against observed free success, per model."""
    agreement: AgreementFit
    """Bland-Altman: tf - f against (tf + f) / 2 over every cell."""
    null: NullReport
    """The same-data null (equal expectations per cell) for the old slope and Bland-Altman."""
    old_slope: Slope
    """Secondary, definitional: the old slope of (tf - f) on (1 - f); read it against
    `null.old_slope`, never against 0."""
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


Key = tuple[str, str, int]
"""(model, task id, teacher-forced epoch): one line of teacher_forced.jsonl."""


def read_scores(path: Path) -> dict[Key, TaskScore]:
    """Teacher-forced results already on disk; a torn last line (a kill mid-write) is dropped."""
    found: dict[Key, TaskScore] = {}
    if not path.exists():
        return found
    for line in path.read_text().splitlines():
        try:
            score = TaskScore.model_validate_json(line)
        except ValueError:
            continue
        found[(score.model, score.task_id, score.epoch)] = score
    return found


def _check_temperature(done: dict[Key, TaskScore], models: list[str], temperature: float) -> None:
    """A folder holds one decoding: mixing greedy and sampled draws would average two measures."""
    from workgym.core.errors import ConfigError

    for (label, _, _), score in done.items():
        if label in models and score.temperature != temperature:
            raise ConfigError(
                f"{label} was teacher-forced at temperature {score.temperature} in this folder, "
                f"not {temperature}: pass another --out or the same --temperature"
            )


def teacher_forced_epochs(sampling: Sampling, epochs: int) -> int:
    """Greedy decoding gives one answer per prefix, so it is drawn once; sampling draws as many
    teacher-forced epochs as free-running ones, so both sides of a cell rest on equal draws."""
    return epochs if sampling.temperature > 0 else 1


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
    sampling: Sampling | None = None,
    seed: int = 0,
) -> ImitationReport:
    """Run (or resume) the experiment for every model and write imitation.json and the plot.

    `sampling` is one decoding for all three measures (greedy by default). With a temperature,
    each task is teacher-forced `epochs` times, draw k seeded as free-running epoch k of the same
    task (`run.attempt.episode_seed`), and `concurrency` tasks are scored at a time."""
    from workgym.run.attempt import episode_seed
    from workgym.run.options import EvalOptions
    from workgym.run.policy import Policy
    from workgym.run.runner import eval_async

    decoding = sampling or Sampling()
    out.mkdir(parents=True, exist_ok=True)
    tasks = list(env.taskset.split(split))[: limit if limit is not None else None]
    golds, skipped = await gold_for(env, tasks, system_prompt)
    scored = [t for t in tasks if t.id in golds]
    done = read_scores(out / SCORES)
    _check_temperature(done, list(models), decoding.temperature)
    tf_epochs = teacher_forced_epochs(decoding, epochs)
    gate = asyncio.Semaphore(concurrency)
    with (out / SCORES).open("a") as sink:

        async def one(label: str, model: Model | TaskAwareModel, task: Task, epoch: int) -> None:
            draw = decoding.with_seed(episode_seed(seed, task.id, epoch))
            async with gate:
                score = await score_task(
                    model, label, env, task, golds[task.id], sampling=draw, epoch=epoch
                )
            sink.write(score.model_dump_json() + "\n")
            sink.flush()
            done[(label, task.id, epoch)] = score

        for label, model in models.items():
            await asyncio.gather(
                *(
                    one(label, model, task, epoch)
                    for task in scored
                    for epoch in range(tf_epochs)
                    if (label, task.id, epoch) not in done
                )
            )
    free: dict[str, dict[str, float]] = {}
    played: dict[str, dict[str, int]] = {}
    oracle = next_action_oracle(env)
    by_id = {t.id: t for t in scored}
    own: list[OwnScore] = []
    for label, model in models.items():
        run = await eval_async(
            env,
            split=split,
            epochs=epochs,
            out=out / "free" / slug(label),
            options=EvalOptions(
                policy=Policy(model, system_prompt=system_prompt, sampling=decoding),
                limit=limit,
                seed=seed,
                concurrency=concurrency,
                progress=progress,
            ),
        )
        wins: dict[str, list[float]] = defaultdict(list)
        for episode in run.dir.episodes():
            wins[episode.task_id].append(1.0 if episode.success else 0.0)
            played_task = by_id.get(episode.task_id)
            if oracle is not None and played_task is not None:
                labelled = score_episode(oracle, played_task, episode, label)
                if labelled is not None:
                    own.append(labelled)
        free[label] = {k: sum(v) / len(v) for k, v in wins.items()}
        played[label] = {k: len(v) for k, v in wins.items()}
    # Recomputed from the free runs on every call (no model call), so it is never stale.
    (out / OWN).write_text("".join(o.model_dump_json() + "\n" for o in own))
    cells = build_cells(models, scored, done, free, played, own if oracle is not None else None)
    report = ImitationReport(
        env_id=env.id,
        env_hash=env.content_hash(),
        split=split,
        models=list(models),
        cells=cells,
        state_oracle=oracle is not None,
        exposure=(
            exposure_by_model(
                cells, [done[k] for k in done if k[0] in models and k[1] in by_id], own
            )
            if oracle is not None
            else []
        ),
        compounding=compounding_by_model(cells),
        agreement=bland_altman([measures(c) for c in cells]),
        null=same_data_null([measures(c) for c in cells]),
        old_slope=fit(cells),
        skipped=skipped,
        scripted=all(name.startswith("scripted/") for name in (m.name for m in models.values())),
    )
    (out / REPORT).write_text(report.model_dump_json(indent=2) + "\n")
    plot(report, out / PLOT)
    return report


def build_cells(
    models: dict[str, Model | TaskAwareModel],
    tasks: list[Task],
    scores: dict[Key, TaskScore],
    free: dict[str, dict[str, float]],
    played: dict[str, dict[str, int]] | None = None,
    own: list[OwnScore] | None = None,
) -> list[Cell]:
    """One cell per (model, family); `own` is None when the environment has no state oracle.
    A task's teacher-forced rates are the means over its draws (one under greedy decoding), so
    every task weighs the same in a cell; the per-position rates pool every draw."""
    cells: list[Cell] = []
    families = sorted({t.family for t in tasks})
    own_by: dict[tuple[str, str], list[OwnScore]] = defaultdict(list)
    for o in own or []:
        own_by[(o.model, o.family)].append(o)
    draws: dict[tuple[str, str], list[TaskScore]] = defaultdict(list)
    for (label, task_id, _), score in sorted(scores.items()):
        draws[(label, task_id)].append(score)
    for label in models:
        for family in families:
            mine = [
                draws[(label, t.id)] for t in tasks if t.family == family and draws[(label, t.id)]
            ]
            if not mine:
                continue
            pooled = [d for task_draws in mine for d in task_draws]
            logps = [d.mean_logprob for d in pooled if d.mean_logprob is not None]
            ids = {d[0].task_id for d in mine}
            theirs = [o for o in own_by[(label, family)] if o.task_id in ids]
            tf_rate = {d[0].task_id: _mean(x.step_rate for x in d) for d in mine}
            weighted = on_own_steps(tf_rate, own_counts_by_task(theirs))
            cells.append(
                Cell(
                    model=label,
                    family=family,
                    n_tasks=len(mine),
                    tf_step_rate=sum(tf_rate.values()) / len(mine),
                    tf_all_steps=sum(_mean(d.all_steps for d in task) for task in mine) / len(mine),
                    free_success=sum(free[label].get(d[0].task_id, 0.0) for d in mine) / len(mine),
                    mean_logprob=sum(logps) / len(logps) if logps else None,
                    gold_steps=[len(task[0].steps) * len(task) for task in mine],
                    free_episodes=sum((played or {}).get(label, {}).get(i, 0) for i in ids),
                    own_step_rate=weighted[1] if own is not None and weighted else None,
                    tf_on_own_steps=weighted[0] if own is not None and weighted else None,
                    tf_by_position=position_accuracy(pooled),
                    own_by_position=own_position_accuracy(theirs),
                    predicted_success=predicted_success(pooled),
                    by_state=on_own_states(state_rates(pooled), theirs) if own else None,
                )
            )
    return cells


def _mean(values: Iterable[float]) -> float:
    items = list(values)
    return sum(items) / len(items)


def measures(cell: Cell) -> Measures:
    return Measures(
        tf=cell.tf_step_rate,
        free=cell.free_success,
        gold_steps=tuple(n for n in cell.gold_steps if n > 0),
        episodes=cell.free_episodes,
    )


def _t_interval(values: list[float]) -> tuple[float | None, float | None]:
    from scipy import stats as st

    if len(values) < 2:
        return None, None
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
    half = float(st.t.ppf(0.975, len(values) - 1)) * sd / math.sqrt(len(values))
    return mean - half, mean + half


def exposure_by_model(
    cells: list[Cell], gold: list[TaskScore], own: list[OwnScore]
) -> list[ModelExposure]:
    """Per model, the families' exposure bias averaged (each family weighs the same) with a t
    interval over families, the clusters: tasks of one family share their phrasing. The
    per-position curves pool every task (gold) and every episode (own) of the model."""
    rows: list[ModelExposure] = []
    for label in dict.fromkeys(c.model for c in cells):
        mine = [c for c in cells if c.model == label and c.exposure_bias is not None]
        if not mine:
            continue
        biases = [c.exposure_bias or 0.0 for c in mine]
        lower, upper = _t_interval(biases)
        states = [c.by_state for c in mine if c.by_state is not None]
        by_state = [b.bias for b in states]
        state_lower, state_upper = _t_interval(by_state)
        # The off-gold accuracies pooled over every family: states are keyed by task, so one
        # pass over the model's scores gives them.
        mine_gold = [g for g in gold if g.model == label]
        mine_own = [o for o in own if o.model == label]
        pooled = on_own_states(state_rates(mine_gold), mine_own)
        rows.append(
            ModelExposure(
                model=label,
                n_families=len(mine),
                gold_prefix=sum(c.tf_on_own_steps or 0.0 for c in mine) / len(mine),
                own_prefix=sum(c.own_step_rate or 0.0 for c in mine) / len(mine),
                exposure_bias=sum(biases) / len(biases),
                lower=lower,
                upper=upper,
                gold_by_position=position_accuracy(mine_gold),
                own_by_position=own_position_accuracy(mine_own),
                by_state=sum(by_state) / len(by_state) if by_state else None,
                by_state_lower=state_lower,
                by_state_upper=state_upper,
                by_state_families=len(states),
                by_state_matched=sum(b.matched for b in states),
                by_state_own_steps=sum(b.own_steps for b in states),
                off_gold_steps=pooled.off_gold if pooled else 0,
                off_gold_expected=pooled.off_gold_expected if pooled else None,
                off_gold_observed=pooled.off_gold_observed if pooled else None,
            )
        )
    return rows


def compounding_by_model(cells: list[Cell]) -> list[ModelCompounding]:
    rows: list[ModelCompounding] = []
    for label in dict.fromkeys(c.model for c in cells):
        mine = [c for c in cells if c.model == label and c.predicted_success is not None]
        if mine:
            rows.append(
                ModelCompounding(
                    model=label,
                    predicted=sum(c.predicted_success or 0.0 for c in mine) / len(mine),
                    observed=sum(c.free_success for c in mine) / len(mine),
                )
            )
    return rows


def plot(report: ImitationReport, path: Path) -> None:
    """Three panels, one colour per model: Bland-Altman (tf - f against the mean of the two,
    with the null's range of the bias), own-prefix against gold-prefix step accuracy (the
    diagonal is no exposure bias), and predicted against observed free success."""
    require("plots", "the imitation-gap chart", "matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ba, eb, comp) = plt.subplots(1, 3, figsize=(13.5, 4.4))
    # Small cells share a few coordinates; each model is drawn a little to the side of the
    # others (the fits use the true values) so that no model hides behind another.
    step = 0.012
    for i, label in enumerate(report.models):
        mine = [c for c in report.cells if c.model == label]
        shift = (i - (len(report.models) - 1) / 2) * step
        means = [(c.tf_step_rate + c.free_success) / 2 + shift for c in mine]
        ba.scatter(means, [c.gap for c in mine], label=label, s=24, alpha=0.8)
        own = [c for c in mine if c.exposure_bias is not None]
        eb.scatter(
            [(c.tf_on_own_steps or 0.0) + shift for c in own],
            [(c.own_step_rate or 0.0) + shift for c in own],
            s=24,
            alpha=0.8,
        )
        comp.scatter(
            [(c.predicted_success or 0.0) + shift for c in mine],
            [c.free_success + shift for c in mine],
            s=24,
            alpha=0.8,
        )
    a = report.agreement
    if a.slope is not None and a.intercept is not None:
        ba.plot([0, 1], [a.intercept, a.intercept + a.slope], color="black", lw=1)
    if a.bias is not None:
        ba.axhline(a.bias, color="black", lw=0.8, ls="--")
    nb = report.null.bias
    if nb.null_lower is not None and nb.null_upper is not None:
        ba.axhspan(nb.null_lower, nb.null_upper, color="grey", alpha=0.2, label="null bias 95%")
    ba.axhline(0, color="grey", lw=0.5)
    ba.set_xlabel("(tf step rate + free success) / 2")
    ba.set_ylabel("tf step rate - free success")
    ba.set_title("Bland-Altman" + ("" if a.slope is None else f": slope {a.slope:.2f}"))
    eb.plot([0, 1], [0, 1], color="grey", lw=0.5)
    eb.set_xlabel("gold-prefix step accuracy")
    eb.set_ylabel("own-prefix step accuracy")
    eb.set_title(
        "exposure bias: below the diagonal"
        if report.state_oracle
        else "no state-conditional oracle: not measured"
    )
    comp.plot([0, 1], [0, 1], color="grey", lw=0.5)
    comp.set_xlabel("success predicted from tf step accuracies")
    comp.set_ylabel("observed free success")
    comp.set_title("compounding check")
    if report.scripted:
        ba.text(0.02, 0.95, "test doubles: plumbing only", transform=ba.transAxes, va="top")
    ba.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def summary_rows(report: ImitationReport) -> list[dict[str, Any]]:
    """The report as table rows (the CLI prints these)."""
    return [
        {**json.loads(c.model_dump_json()), "gap": c.gap, "exposure_bias": c.exposure_bias}
        for c in sorted(report.cells, key=lambda c: (c.model, c.family))
    ]
