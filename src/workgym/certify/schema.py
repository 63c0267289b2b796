"""The certificate's file format (``workgym-certificate/1``): what is stored, and why.

Everything a reader needs to recompute the verdict is here: the frozen inputs (policies, margins,
alpha, epochs, seed, admission, which look at the test split this was, the training's learning
curve when one was given), the environment and split hashes, the run directories with a digest
of their episodes, and every item's per-epoch scores.
`workgym certify --recompute` rebuilds the file from the stored episodes and compares bytes.

Floats that do not exist (the open end of a one-sided interval, an undefined correlation) are
``null``: JSON has no inf or NaN.
"""

from __future__ import annotations

import json
import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

CERT_FORMAT = "workgym-certificate/1"
Arm = Literal["baseline", "candidate"]
ConditionName = Literal["gain", "non_regression", "admission"]


def finite(x: float | None) -> float | None:
    """``x`` when it is a finite number, else None (JSON has no inf/NaN)."""
    return None if x is None or not math.isfinite(x) else float(x)


class PolicyRecord(BaseModel):
    """A policy's identity: its hash, and what went into it (texts by digest)."""

    hash: str
    model: str
    playbook_sha256: str | None = None
    system_prompt_sha256: str | None = None
    sampling: dict[str, Any] = Field(default_factory=dict)


class EnvRecord(BaseModel):
    """An environment and the frozen item list the certificate used."""

    id: str
    version: str
    hash: str
    ref: str
    split: str
    split_hash: str
    n_items: int
    n_families: int


class RunRecord(BaseModel):
    arm: Arm
    path: str
    policy_hash: str
    seed: int
    epochs: int
    forced: list[str] = Field(default_factory=list)
    episodes_sha256: str
    n_episodes: int
    # RUN/reviews.jsonl as it was read: a flagged success whose flags were all accepted counts
    reviews_sha256: str | None = None
    n_reviews: int = 0


class ArmItem(BaseModel):
    """One arm on one item, per epoch. `rewards` are the counted rewards: errors, limit hits,
    verifier errors and flagged successes not accepted in review count as 0, and `failures`
    says which it was."""

    rewards: list[float]
    successes: list[bool]
    tokens: list[int]
    failures: list[str]
    flags: list[str] = Field(default_factory=list)

    @property
    def mean(self) -> float:
        return sum(self.rewards) / len(self.rewards)


class ItemScore(BaseModel):
    id: str
    family: str
    baseline: ArmItem
    candidate: ArmItem
    d: float


class TestResult(BaseModel):
    """One test of the gain; `gate` tests must all reject for the gain to count."""

    name: str
    p_value: float | None
    lower: float | None = None
    statistic: float | None = None
    gate: bool
    rejects: bool
    detail: str = ""


class FamilyRow(BaseModel):
    family: str
    n: int
    baseline: float
    candidate: float
    diff: float


class GainResult(BaseModel):
    baseline_mean: float
    candidate_mean: float
    diff: float
    se: float
    lower: float | None
    ci95: tuple[float | None, float | None]
    p_value: float | None
    correlation: float | None
    n_items: int
    n_clusters: int | None
    method: str
    tests: list[TestResult]
    significant: bool
    mde: float | None
    underpowered: bool
    pass_hat_k: dict[str, float] | None = None
    pass_at_k: dict[str, float] | None = None
    families: list[FamilyRow] = Field(default_factory=list)
    # the declared question (items: these held-out tasks; families: new families of this job),
    # why, and the smallest p its gate can reach on any data (docs/decisions/0070)
    estimand: Literal["items", "families"] = "items"
    estimand_reason: str = ""
    smallest_p: float | None = None
    passable: bool = True


class ArmCost(BaseModel):
    """Tokens per task (server counts) and the by-role split (estimated, 4 chars a token)."""

    tokens_per_task: float
    prompt_per_task: float
    completion_per_task: float
    by_role_per_task: dict[str, float]
    mean_reward: float
    errors: int
    truncated: int
    verifier_errors: int
    flagged_successes: int  # flagged and not (all) accepted in review: counted as 0
    reviewed_successes: int = 0  # flagged, every flag accepted in review: counted


class CostResult(BaseModel):
    baseline: ArmCost
    candidate: ArmCost
    ratio: float | None


class NonInferiorityResult(BaseModel):
    margin: float
    alpha: float
    baseline_mean: float
    candidate_mean: float
    diff: float
    lower: float | None
    passed: bool
    method: str
    n_items: int
    n_clusters: int | None
    n_needed: int | None
    underpowered: bool
    # shown: lower bound above -margin; not shown: it is not; cannot show: the suite cannot
    # tell (baseline at the floor, or both arms at the ceiling), so it is left out of the gate
    status: Literal["shown", "not shown", "cannot show"] = "not shown"
    reason: str = ""


class Comparison(BaseModel):
    """Baseline and candidate on one environment: runs, item scores, cost."""

    env: EnvRecord
    runs: list[RunRecord]
    items: list[ItemScore]
    cost: CostResult


class TaskResult(Comparison):
    gain: GainResult
    non_inferiority: NonInferiorityResult
    matched: str | None = None


class SuiteResult(Comparison):
    non_inferiority: NonInferiorityResult


class AdmissionRecord(BaseModel):
    """Whether the environment passed the admission gate, and whether that was overridden."""

    passed: bool
    forced: bool
    source: str
    detail: str


class LooksRecord(BaseModel):
    """Which look at the test split this certificate is (workgym.certify.looks).

    `head` is the hash of the look's line in the hash-chained log and `seq` its position, so a
    log cut short is caught against the certificate; both are absent from certificates written
    before the log was chained (they recompute unchanged)."""

    log: str
    attempt: int
    previous_attempts: int
    head: str | None = None
    seq: int | None = None


class CurvePoint(BaseModel):
    """One point of a training curve; `lower`/`upper` only where the trainer measured a spread."""

    model_config = ConfigDict(allow_inf_nan=False)

    x: int
    reward: float
    lower: float | None = None
    upper: float | None = None


class LearningCurve(BaseModel):
    """The training's own curve (`--curve`), as the trainer wrote it. It shows how the candidate
    was reached, on data training saw or selected on, so it never enters the verdict; `sha256` is
    of the file it was read from (workgym.certify.curve)."""

    trainer: Literal["grpo", "playbook"]
    path: str  # relative to the certificate's folder
    sha256: str
    x_label: str
    y_label: str
    band: str | None = None  # what `lower`/`upper` of the points are
    points: list[CurvePoint]
    dropped: int = 0  # lines of the file with no reward (every episode of the batch masked)
    references: dict[str, float] = Field(default_factory=dict)  # e.g. the untrained baselines
    chosen: int | None = None  # x of the checkpoint training kept, when the trainer says


class Frozen(BaseModel):
    """Inputs fixed before the run; a recomputation takes them from here, never from flags."""

    created_at: str
    workgym_version: str
    alpha: float
    epochs: int
    seed: int
    task_margin: float
    margins: dict[str, float]
    limit: int | None = None
    n_resamples: int
    baseline: PolicyRecord
    candidate: PolicyRecord
    admission: AdmissionRecord
    looks: LooksRecord
    rules: list[str]
    curve: LearningCurve | None = None  # kept, not recomputed: it is not made from the episodes
    # items or families, fixed before the first test episode; None in files from before it
    # existed (the default rule then applies)
    estimand: Literal["items", "families"] | None = None


class Condition(BaseModel):
    name: ConditionName
    passed: bool
    detail: str


class CostMatched(BaseModel):
    """Present only when a swarm (a team, workgym.swarm) is in either arm: are the arms at equal
    cost per task, and what each agent role spent (computed by workgym.certify.costmatch)."""

    teams: dict[str, dict[str, Any]]
    tolerance: float
    baseline_tokens: float
    candidate_tokens: float
    ratio: float | None
    matched: bool
    token_diff: float
    token_lower: float | None
    token_upper: float | None
    by_role: dict[str, dict[str, float]]
    statement: str
    scripted: bool


class Certificate(BaseModel):
    format: str = CERT_FORMAT
    verdict: Literal["PASS", "FAIL"]
    failed: list[ConditionName]
    conditions: list[Condition]
    warnings: list[str]
    frozen: Frozen
    task: TaskResult
    suites: list[SuiteResult]
    cost_matched: CostMatched | None = None

    def to_json(self) -> str:
        """Canonical bytes: sorted keys, fixed indentation, no NaN; what --recompute compares.
        A certificate without a swarm has no `cost_matched` key at all, and one without
        `--curve` no `frozen.curve` key, and a run without reviews no review keys (older files
        recompute)."""
        skip: dict[str, Any] = {}
        if self.cost_matched is None:
            skip["cost_matched"] = True
        frozen: dict[str, Any] = {
            k: True for k in ("curve", "estimand") if getattr(self.frozen, k) is None
        }
        if self.frozen.looks.head is None:
            frozen["looks"] = {"head", "seq"}
        if frozen:
            skip["frozen"] = frozen
        body = self.model_dump(mode="json", exclude=skip or None)
        for comparison in [body["task"], *body["suites"]]:
            for run in comparison["runs"]:
                if run["reviews_sha256"] is None:
                    del run["reviews_sha256"], run["n_reviews"]
        return json.dumps(body, sort_keys=True, indent=1, allow_nan=False)
