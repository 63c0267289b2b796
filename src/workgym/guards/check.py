"""`workgym check`: the model-free self test of an environment.

The oracle must solve every task (else the task or the verifier is wrong), scoring the same
episode twice must give the same verdict (else rewards are noise), a policy that answers nothing
must score near zero (else the reward pays for nothing), data files too large to hash on every
load must still be the ones the tasks were generated against, every probe must get its expected
verdict on every family, the constant and enumerating baselines must stay under their
thresholds, and every split must hold tasks (GUARDS.md, admission gate). The result is recorded
in admission.json (workgym.guards.admission), which training and certification read.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field

from workgym.core.environment import Environment
from workgym.core.tasks import SPLITS
from workgym.core.version import __version__
from workgym.guards import hooks
from workgym.guards.admission import AdmissionRecord, record_admission
from workgym.guards.attack import attack_async
from workgym.guards.attack_report import AttackReport
from workgym.guards.baselines import BaselineReport, run_baselines
from workgym.run.options import EvalOptions
from workgym.run.runner import eval_async

NULL_THRESHOLD = 0.05


class CheckItem(BaseModel):
    name: str
    passed: bool
    detail: str
    failures: list[str] = Field(default_factory=list)


class CheckReport(BaseModel):
    env_id: str
    env_hash: str
    items: list[CheckItem]
    attack: AttackReport | None = None
    baselines: BaselineReport | None = None
    thresholds: dict[str, float] = Field(default_factory=dict)  # set by the environment
    threshold_reason: str = ""

    @property
    def passed(self) -> bool:
        return all(i.passed for i in self.items)

    def admission_record(self) -> AdmissionRecord:
        """What admission.json keeps of this check: pass or fail, and the first failures."""
        failures = [f"{i.name}: {i.detail}" for i in self.items if not i.passed]
        if self.attack is not None:
            failures += [f"probe {c.probe} on {c.family}: {c.got}" for c in self.attack.failures()]
        return AdmissionRecord(
            env_id=self.env_id,
            env_hash=self.env_hash,
            passed=self.passed,
            checked_at=datetime.now(UTC).isoformat(timespec="seconds"),
            workgym_version=__version__,
            checks={i.name: i.passed for i in self.items},
            failures=failures[:50],
            thresholds=self.thresholds,
            threshold_reason=self.threshold_reason,
        )


async def check_async(
    env: Environment,
    out: Path,
    *,
    progress: bool = True,
    attack: bool = True,
    per_family: int = 2,
    admission_dir: Path | None = None,
) -> CheckReport:
    """Run the admission checks into `out`; record the result in `admission_dir` (default: the
    parent of `out`, i.e. runs/check/admission.json for the CLI's default `--out`)."""
    items: list[CheckItem] = []
    oracle = await eval_async(
        env,
        "scripted/oracle",
        split="all",
        out=out / "oracle",
        options=EvalOptions(progress=progress, concurrency=16),
    )
    episodes = list(oracle.episodes())
    failed = [e.task_id for e in episodes if not e.success]
    items.append(
        CheckItem(
            name="oracle solves every task",
            passed=not failed and len(episodes) == len(env.taskset),
            detail=f"{len(episodes) - len(failed)}/{len(env.taskset)} solved",
            failures=failed[:20],
        )
    )
    unstable = []
    for ep in episodes:
        task = env.taskset[ep.task_id]
        first = env.score(task, ep).model_dump_json()
        if any(env.score(task, ep).model_dump_json() != first for _ in range(2)):
            unstable.append(ep.task_id)
    items.append(
        CheckItem(
            name="verdicts are deterministic",
            passed=not unstable,
            detail=f"{len(episodes) - len(unstable)}/{len(episodes)} stable over 3 scorings",
            failures=unstable[:20],
        )
    )
    baselines = await run_baselines(env, out, split="all", progress=progress)
    null_mean = baselines.result("null").mean_reward
    items.append(
        CheckItem(
            name="null baseline stays near zero",
            passed=null_mean <= NULL_THRESHOLD,
            detail=f"mean reward {null_mean:.3f} (threshold {NULL_THRESHOLD})",
        )
    )
    others = [r for r in baselines.results if r.name != "null"]
    own = hooks.baseline_thresholds(env)
    reason = hooks.threshold_reason(env) or "no reason given"
    items.append(
        CheckItem(
            name="baselines stay at or below their thresholds",
            passed=all(r.passed for r in others),
            detail=", ".join(
                f"{r.name} {r.mean_reward:.3f}"
                + (f" (<= {r.threshold})" if r.threshold is not None else " (reported)")
                for r in others
            )
            + (f"; set by the environment: {own} because {reason}" if own else ""),
            failures=[r.name for r in others if not r.passed],
        )
    )
    if progress:  # digesting large database copies can take minutes (TPC-H): say so
        from rich.console import Console

        with Console(stderr=True).status("verifying data files against their manifests"):
            data = await asyncio.to_thread(env.verify_data)
    else:
        data = await asyncio.to_thread(env.verify_data)
    items.append(
        CheckItem(
            name="data files match the tasks",
            passed=not data.problems,
            detail=(
                f"{data.checked - len(data.problems)}/{data.checked} files as generated"
                if data.checked
                else "no data files beyond the hashed content"
            ),
            failures=data.problems[:20],
        )
    )
    empty = [s for s in SPLITS if not env.taskset.split(s)]
    items.append(
        CheckItem(
            name="held-out tasks exist for every split",
            passed=not empty,
            detail=", ".join(f"{s} {len(env.taskset.split(s))}" for s in SPLITS),
            failures=empty,
        )
    )
    quality = await asyncio.to_thread(env.quality_check)
    if quality is not None:
        items.append(
            CheckItem(
                name=quality.name,
                passed=quality.passed,
                detail=quality.detail,
                failures=list(quality.failures)[:20],
            )
        )
    report_attack = None
    if attack:
        report_attack = await attack_async(env, per_family=per_family, progress=progress)
        report_attack.write(out)
        bad = report_attack.failures()
        items.append(
            CheckItem(
                name="probes give their expected verdicts",
                passed=report_attack.passed,
                detail=(
                    f"{len(report_attack.cells) - len(bad)}/{len(report_attack.cells)} "
                    f"probe x family cells pass ({report_attack.elapsed_s:.1f} s); "
                    f"{len(report_attack.todo)} catalog probes not built yet"
                ),
                failures=[f"{c.probe}@{c.family}" for c in bad[:20]],
            )
        )
    report = CheckReport(
        env_id=env.id,
        env_hash=env.content_hash(),
        items=items,
        attack=report_attack,
        baselines=baselines,
        thresholds=own,
        threshold_reason=hooks.threshold_reason(env) if own else "",
    )
    (out / "check.json").write_text(
        json.dumps(report.model_dump(mode="json") | {"passed": report.passed}, indent=2) + "\n"
    )
    record_admission(report.admission_record(), admission_dir or out.parent)
    return report
