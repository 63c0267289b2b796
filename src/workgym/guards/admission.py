"""The admission gate (docs/guards.md, Admission): training and certification refuse an
environment that has not passed `workgym check`, unless forced, and a forced run says so in its
run.json and certificate.

Where the record lives: `admission.json` in the admission directory, keyed by environment content
hash (so any change to tasks, tools, limits or data needs a new check). The `workgym check`
command writes it in `runs/check/admission.json` whatever its `--out` (`--admission-dir` moves
it), which is also the default that `require_admitted` and `workgym certify` read; pass the same
directory to both when you move it. The library's `check_async` writes it in the parent of its
`out` unless given `admission_dir`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from workgym.core.errors import ConfigError

if TYPE_CHECKING:
    from workgym.core.environment import Environment

ADMISSION_FILE = "admission.json"
DEFAULT_DIR = Path("runs") / "check"


class NotAdmittedError(ConfigError):
    """The environment has not passed admission and the caller did not force it."""


class AdmissionRecord(BaseModel):
    env_id: str
    env_hash: str
    passed: bool
    checked_at: str
    workgym_version: str
    checks: dict[str, bool]
    failures: list[str] = Field(default_factory=list)
    # Baseline ceilings the environment set instead of the defaults, and its reason.
    thresholds: dict[str, float] = Field(default_factory=dict)
    threshold_reason: str = ""
    # The environment's quality rules the check ran ("warehouse-lint/2"); "" in records made
    # before rules were versioned, or for environments without versioned rules.
    rules: str = ""


def admission_rules(env: Environment) -> str:
    """The rules a check judges `env` by: its own quality rules and the baselines' version
    ("warehouse-lint/7, baselines/2"), so a change to either says so on older admissions."""
    from workgym.guards.baselines import BASELINE_RULES  # baselines runs evals: imported late

    return ", ".join(r for r in (env.quality_rules, BASELINE_RULES) if r)


def rules_note(record: AdmissionRecord, current: str) -> str:
    """One line when `record` was made under other quality rules than `current`, else ""."""
    if record.rules == current:
        return ""
    was = record.rules or "unversioned rules"
    return (
        f"admitted under {was}; the current rules are {current or 'unversioned'}: "
        "re-run `workgym check` to be judged by them"
    )


class Admission(BaseModel):
    """What `require_admitted` found; `forced` goes into RunSpec.forced and the certificate."""

    env_id: str
    env_hash: str
    admitted: bool
    forced: list[str] = Field(default_factory=list)
    record: AdmissionRecord | None = None
    note: str = ""  # admitted under older quality rules (rules_note), shown by callers


def admission_path(directory: str | Path | None = None) -> Path:
    return Path(directory if directory is not None else DEFAULT_DIR) / ADMISSION_FILE


def read_admissions(directory: str | Path | None = None) -> dict[str, AdmissionRecord]:
    path = admission_path(directory)
    if not path.exists():
        return {}
    try:
        raw = json.loads(path.read_text())
        return {k: AdmissionRecord.model_validate(v) for k, v in raw.items()}
    except ValueError as exc:
        raise ConfigError(
            f"{path} is corrupt ({exc}); delete it and re-run `workgym check` for each environment"
        ) from exc


def record_admission(record: AdmissionRecord, directory: str | Path | None = None) -> Path:
    """Merge one record into admission.json (atomic replace; other environments kept)."""
    path = admission_path(directory)
    path.parent.mkdir(parents=True, exist_ok=True)
    records = read_admissions(directory)
    records[record.env_hash] = record
    tmp = path.with_suffix(".tmp")
    body = {k: v.model_dump() for k, v in sorted(records.items())}
    tmp.write_text(json.dumps(body, indent=2) + "\n")
    os.replace(tmp, path)
    return path


def admission_of(env: Environment, directory: str | Path | None = None) -> AdmissionRecord | None:
    return read_admissions(directory).get(env.content_hash())


def require_admitted(
    env: Environment, *, force: bool = False, directory: str | Path | None = None
) -> Admission:
    """Raise NotAdmittedError unless `env` (this exact content hash) passed `workgym check`.

    With `force=True` it returns instead, with `forced` naming what was overridden; the caller
    writes `forced` into RunSpec.forced and into the certificate.
    """
    record = admission_of(env, directory)
    short = env.content_hash()[:12]
    ref = str(env.root) if env.root is not None else env.id  # what `workgym check` can load
    if record is not None and record.passed:
        return Admission(
            env_id=env.id,
            env_hash=env.content_hash(),
            admitted=True,
            record=record,
            note=rules_note(record, admission_rules(env)),
        )
    if record is None:
        why = f"has no admission record in {admission_path(directory)}"
    else:
        why = f"failed admission on {record.checked_at} ({len(record.failures)} failures)"
    if not force:
        raise NotAdmittedError(
            f"environment {env.id} (hash {short}) {why}: run `workgym check {ref}` and fix "
            "what fails, or pass --force-unadmitted (recorded in the run and the certificate)"
        )
    return Admission(
        env_id=env.id,
        env_hash=env.content_hash(),
        admitted=False,
        forced=[f"unadmitted-environment:{env.id}@{short}"],
        record=record,
    )
