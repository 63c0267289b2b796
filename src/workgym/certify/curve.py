"""`workgym certify --curve`: the training's learning curve, read from what either trainer wrote.

The curve sits beside the held-out result to show how the candidate was reached: GRPO's mean
reward on its own train episodes per optimizer step (`reward_curve.jsonl`, one `RolloutStats`
line per generation batch, workgym.train.trl), or the playbook trainer's dev-select reward per
checkpoint (`report.json`, workgym.train.playbook.result). Both are measured on data training saw
or selected on, so the curve never enters the verdict. It is read once, before the look at the
test split is recorded (a wrong path costs no look), and stored with the frozen inputs together
with the sha256 of its file, so `--recompute` carries it unchanged.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from workgym.certify.schema import CurvePoint, LearningCurve
from workgym.core.errors import ConfigError

GRPO_FILE = "reward_curve.jsonl"
PLAYBOOK_FILE = "report.json"
PLAYBOOK_LOG = "log.jsonl"
ACCEPTS = (
    "--curve takes a training --out folder or its curve file: reward_curve.jsonl "
    "(workgym train grpo) or report.json (workgym train playbook)"
)
Z95 = 1.959963984540054  # two-sided 95% normal quantile, for the playbook's SE bars


class _GRPOLine(BaseModel):
    """The fields of a `RolloutStats` line (workgym.train.trl.rollout) the curve needs."""

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)

    step: int
    episodes: int
    mean_reward: float | None


class _Checkpoint(BaseModel):
    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)

    iteration: int
    reward: float
    se: float


class _Baseline(BaseModel):
    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)

    name: str
    reward: float


class _Best(BaseModel):
    model_config = ConfigDict(extra="ignore")

    iteration: int


class _Report(BaseModel):
    """The parts of a playbook run's report.json the curve needs."""

    model_config = ConfigDict(extra="ignore")

    checkpoints: list[_Checkpoint]
    baselines: list[_Baseline]
    best: _Best


def curve_file(path: Path) -> Path:
    """The curve file that `path` names: itself, or the one a training --out folder holds."""
    if path.is_dir():
        for name in (GRPO_FILE, PLAYBOOK_FILE):
            if (path / name).is_file():
                return path / name
        if (path / PLAYBOOK_LOG).is_file():
            raise ConfigError(
                f"{path} is a playbook training run that has not finished (no {PLAYBOOK_FILE}): "
                "re-run its `workgym train playbook` command to finish it; " + ACCEPTS
            )
        raise ConfigError(f"{path} holds no learning curve; " + ACCEPTS)
    if not path.is_file():
        raise ConfigError(f"no curve at {path}; " + ACCEPTS)
    return path


def read_curve(path: Path, base_dir: Path) -> LearningCurve:
    """The learning curve at `path` (a folder or a file, from either trainer); its recorded path
    is relative to `base_dir`, the certificate's folder, like the run directories."""
    file = curve_file(path)
    data = file.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{file} is not a text file; " + ACCEPTS) from None
    if not text.strip():
        raise ConfigError(f"{file} is empty; " + ACCEPTS)
    common: dict[str, Any] = {
        "path": os.path.relpath(file, base_dir),
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    try:
        whole = json.loads(text)
    except ValueError:
        whole = None
    try:
        if isinstance(whole, dict) and "checkpoints" in whole:
            return _playbook(file, whole, common)
        return _grpo(file, text, common)
    except ValidationError as exc:
        raise ConfigError(f"{file} is not a learning curve ({_first(exc)}); " + ACCEPTS) from exc


def _first(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(part) for part in err["loc"])
    return f"{where}: {err['msg']}" if where else str(err["msg"])


def _grpo(file: Path, text: str, common: dict[str, Any]) -> LearningCurve:
    if file.name == PLAYBOOK_LOG:
        raise ConfigError(
            f"{file} is the playbook trainer's log, not its curve (report.json is written when "
            "the run finishes); " + ACCEPTS
        )
    points: list[CurvePoint] = []
    dropped = 0
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = _GRPOLine.model_validate_json(line)
        except ValidationError as exc:
            raise ConfigError(
                f"{file}:{lineno} is not a reward-curve point ({_first(exc)}); " + ACCEPTS
            ) from exc
        if row.mean_reward is None:
            dropped += 1
        else:
            points.append(CurvePoint(x=row.step, reward=row.mean_reward))
    if not points:
        raise ConfigError(
            f"{file} has no point with a reward ({dropped} batches had every episode masked), "
            "so there is no curve to draw; " + ACCEPTS
        )
    return LearningCurve(
        trainer="grpo",
        x_label="optimizer step",
        y_label="mean reward (train episodes)",
        points=points,
        dropped=dropped,
        **common,
    )


def _playbook(file: Path, body: dict[str, Any], common: dict[str, Any]) -> LearningCurve:
    report = _Report.model_validate(body)
    if not report.checkpoints:
        raise ConfigError(f"{file} lists no checkpoints; " + ACCEPTS)
    points = [
        CurvePoint(
            x=c.iteration,
            reward=c.reward,
            lower=c.reward - Z95 * c.se,
            upper=c.reward + Z95 * c.se,
        )
        for c in report.checkpoints
    ]
    return LearningCurve(
        trainer="playbook",
        x_label="iteration",
        y_label="dev-select reward",
        band="95% interval, reward ± 1.96 SE over the dev-select tasks",
        points=points,
        references={b.name: b.reward for b in report.baselines},
        chosen=report.best.iteration,
        **common,
    )
