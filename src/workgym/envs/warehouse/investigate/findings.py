"""Findings on the real, unplanted warehouse: a trained policy investigates, every claim is checked.

On real data the true causes are unknown, so nothing here is a score. The policy (model, the
trained environment's instructions and tools, and its playbook) investigates the most surprising
alerts (`alerts`) on a fresh snapshot of the source; each submitted conclusion becomes a claim
whose evidence queries are re-run on that snapshot. A claim is *verified* only by evidence a
person would accept (`checks_of`, decision 0169): every cited query re-runs read-only,
reproduces the number it was cited with and was run by the agent; at least one of them carries a
number; the compared buckets are not artefacts (thin, or partial at the edge of the data); a
named cause's slice carries at least half of the change in the claimed direction (`support`);
"normal variation" only when no slice passes the single-cause test. Otherwise it is
*unverified*, with every rule that failed and why.
The report (findings.json, findings.md) and the transcripts (episodes.jsonl) are kept apart from
any run directory, so they never mix with scores on planted copies.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from pathlib import Path
from typing import Any

from workgym.core.environment import Environment
from workgym.core.episode import Episode
from workgym.core.loading import load
from workgym.core.model import Model, Sampling
from workgym.core.task_aware import TaskAwareModel
from workgym.core.tasks import Task
from workgym.core.verdict import Verdict
from workgym.envs.warehouse.investigate.alerts import Alert, pick_alerts
from workgym.envs.warehouse.investigate.evidence import (
    check_evidence,
    observed_queries,
)
from workgym.envs.warehouse.investigate.findings_report import (
    NOT_SCORED,
    Check,
    Finding,
    FindingsReport,
    Support,
    write_report,
)
from workgym.envs.warehouse.investigate.frame import between, ts
from workgym.envs.warehouse.investigate.grain import NOISE_Z, bucket_problem
from workgym.envs.warehouse.investigate.slices import (
    MIN_SLICE_ROWS,
    PredicateError,
    predicate_sql,
)
from workgym.envs.warehouse.investigate.solvability import MIN_EXPLAINED
from workgym.envs.warehouse.investigate.vocab import NORMAL, canonical
from workgym.envs.warehouse.runtime.conclusion_answer import ConclusionAnswer, parse_conclusion
from workgym.envs.warehouse.schema.card import SchemaCard
from workgym.envs.warehouse.schema.profile import profile_snapshot
from workgym.envs.warehouse.source.duck import connect
from workgym.envs.warehouse.source.snapshot import SNAPSHOT_FILE, build_snapshot
from workgym.run.policy import Policy, run_episode
from workgym.verifiers.sql_exec import execute_sql

SNAPSHOT_DIR = "warehouse"


class FindingsEnv(Environment):
    """The trained environment's tools and instructions over the real snapshot (build it with
    `findings_env`, which copies them onto a subclass)."""

    id = "workgym/warehouse-findings"
    version = "1"

    def __init__(self, database: Path, card: SchemaCard, trained: Environment | None) -> None:
        super().__init__(database.parent)
        self.database = database
        self.card = card
        self.trained = trained
        config = getattr(trained, "config", None)
        self.hard = bool(getattr(config, "hard", False))
        self.budget = getattr(config, "query_budget", None)

    def tasks(self) -> Any:
        from workgym.core.tasks import TaskSet

        return TaskSet([])

    def state(self, task: Task) -> Any:
        from workgym.envs.warehouse.runtime.tools import QUERY_BUDGET, WarehouseState

        return WarehouseState(
            database=self.database,
            card=self.card,
            hard=self.hard,
            query_budget=self.budget or QUERY_BUDGET,
        )

    def verify(self, task: Task, episode: Episode) -> Verdict:
        return Verdict(evidence={"note": NOT_SCORED})


def findings_env(database: Path, card: SchemaCard, trained: Environment | None) -> FindingsEnv:
    """A FindingsEnv with the tools, instructions and limits the policy was trained with."""
    from workgym.envs.warehouse.runtime.env import WarehouseEnv

    source: Any = trained if trained is not None else WarehouseEnv
    cls = type(
        "FindingsEnv",
        (FindingsEnv,),
        {
            "tools": list(source.tools),
            "instructions": source.instructions,
            "limits": source.limits,
        },
    )
    env: FindingsEnv = cls(database, card, trained)
    return env


def support_of(answer: ConclusionAnswer, alert: Alert, database: Path) -> Support:
    frame, metric = alert.frame, alert.metric
    try:
        hit = predicate_sql(answer.predicate, frame)
    except PredicateError as exc:
        return Support(rows=0, error=str(exc))
    den = metric.den(frame) or "0"
    sql = (
        f"SELECT coalesce(({hit}), FALSE) AS hit, {frame.t} >= {ts(alert.window[0])} AS w, "
        f"count(*), sum({metric.num(frame)}), sum({den}) FROM {metric.source(frame)} "
        f"WHERE {between(frame, alert.baseline[0], alert.window[1])} GROUP BY ALL"
    )
    result = execute_sql(sql, database, timeout_s=30.0, max_rows=10)
    if not result.ok:
        return Support(rows=0, error=result.error)
    cells: dict[tuple[bool, bool], tuple[int, float, float]] = {}
    for h, w, n, x, y in result.rows:
        cells[(bool(h), bool(w))] = (int(n), float(x or 0), float(y or 0))
    ratio = metric.den(frame) is not None

    def value(parts: list[tuple[int, float, float]]) -> float | None:
        num, den_ = sum(p[1] for p in parts), sum(p[2] for p in parts)
        return (num / den_ if den_ else None) if ratio else num

    none = (0, 0.0, 0.0)
    get = cells.get
    s_b, s_w = value([get((True, False), none)]), value([get((True, True), none)])
    r_b, r_w = value([get((False, False), none)]), value([get((False, True), none)])
    a_b = value([get((True, False), none), get((False, False), none)])
    a_w = value([get((True, True), none), get((False, True), none)])
    explained = None
    if None not in (a_b, a_w, r_b, r_w) and a_w != a_b:
        total = a_w - a_b  # type: ignore[operator]
        explained = (total - (r_w - r_b)) / total  # type: ignore[operator]
    matches = None
    if s_b is not None and s_w is not None and answer.direction in ("up", "down"):
        matches = (s_w > s_b) == (answer.direction == "up")
    rows = get((True, False), none)[0] + get((True, True), none)[0]
    return Support(
        rows=rows,
        slice_before=s_b,
        slice_after=s_w,
        explained=explained,
        direction_matches=matches,
    )


def check_finding(ep: Episode, alert: Alert, prompt: str, database: Path) -> Finding:
    """Turn one episode on real data into a checked claim."""
    finding = Finding(
        alert=alert,
        prompt=prompt,
        submitted=ep.submitted,
        outcome=ep.outcome,
        turns=ep.turns,
        queries=sum(c.name == "run_sql" for c in ep.tool_calls),
    )
    if ep.outcome == "error":
        finding.problem = f"episode error: {ep.error}"
        return finding
    if not ep.submitted:
        finding.problem = "no conclusion submitted"
        return finding
    try:
        answer = parse_conclusion(ep.answer)
    except ValueError as exc:
        finding.problem = str(exc)
        return finding
    finding.claim = answer.submission()
    finding.cause_type = canonical(answer.cause_type)
    finding.evidence = check_evidence(answer.queries(), database, observed_queries(ep.tool_calls))
    if finding.cause_type is None:
        finding.problem = f"{answer.cause_type!r} is not a cause type of the vocabulary"
    elif not finding.evidence:
        finding.problem = "no evidence cited"
    if finding.cause_type not in (None, NORMAL):
        finding.support = support_of(answer, alert, database)
    finding.checks = checks_of(finding, alert)
    finding.verified = finding.cause_type is not None and all(c.passed for c in finding.checks)
    return finding


def checks_of(finding: Finding, alert: Alert) -> list[Check]:
    """Every rule of `findings_report.RULES`, held or not, with what the data showed."""
    ev = finding.evidence
    bad = [i for i, c in enumerate(ev, 1) if not c.ok]
    out = [
        Check(
            rule="evidence",
            passed=bool(ev) and not bad,
            detail="no evidence cited" if not ev else f"cited queries {bad} do not hold up",
        )
    ]
    numbers = [c for c in ev if c.ok and c.value is not None and c.reproduced]
    out.append(
        Check(
            rule="number",
            passed=bool(numbers),
            detail="no cited query carries a number that it reproduced",
        )
    )
    problems = [
        why
        for b in (alert.buckets or ())
        if (why := bucket_problem(b, alert.frame.period)) is not None
    ]
    out.append(Check(rule="buckets", passed=not problems, detail="; ".join(problems)))
    out.append(
        Check(
            rule="noise",
            passed=alert.z is None or alert.z >= max(alert.z_needed, NOISE_Z),
            detail=f"the metric moved by {alert.z} standard errors (< "
            f"{max(alert.z_needed, NOISE_Z):g}, the bar for the moves compared)",
        )
    )
    if finding.cause_type == NORMAL:
        out.append(
            Check(
                rule="no_single_cause",
                passed=not alert.driver,
                detail=f"{alert.driver_label()} explains "
                f"{alert.driver_explained or 0:.0%} of the change and passes the single-cause test",
            )
        )
    elif finding.cause_type is not None:
        out.append(_slice_check(finding.support))
    return out


def _slice_check(s: Support | None) -> Check:
    if s is None or s.error:
        why = "the claimed predicate does not run" + (f" ({s.error})" if s and s.error else "")
        return Check(rule="slice", passed=False, detail=why)
    if s.rows < MIN_SLICE_ROWS:
        return Check(
            rule="slice",
            passed=False,
            detail=f"the claimed slice holds {s.rows} rows (< {MIN_SLICE_ROWS}) in the two periods",
        )
    if s.explained is None or s.explained < MIN_EXPLAINED:
        share = "n/a" if s.explained is None else f"{s.explained:.0%}"
        return Check(
            rule="slice",
            passed=False,
            detail=f"the claimed slice accounts for {share} of the change (< {MIN_EXPLAINED:.0%})",
        )
    if s.direction_matches is False:
        return Check(rule="slice", passed=False, detail="the slice moved against the claim")
    return Check(rule="slice", passed=True)


async def investigate_async(
    db: str,
    model: Model | TaskAwareModel | str,
    out: Path,
    *,
    env_dir: Path | None = None,
    playbook: str | None = None,
    alerts: int = 5,
    base_url: str | None = None,
    api_key: str | None = None,
    sampling: Sampling | None = None,
    concurrency: int = 4,
    seed: int = 0,
) -> FindingsReport:
    """Snapshot `db` into `out`, investigate its top alerts, write the checked findings."""
    # The policy first: a missing endpoint or key fails before minutes of snapshotting.
    policy = Policy(model, playbook=playbook, sampling=sampling, base_url=base_url, api_key=api_key)
    trained = load(env_dir) if env_dir is not None else None
    out.mkdir(parents=True, exist_ok=True)
    manifest = build_snapshot(db, out / SNAPSHOT_DIR, seed=seed)
    card = profile_snapshot(out / SNAPSHOT_DIR)
    database = out / SNAPSHOT_DIR / SNAPSHOT_FILE
    con = connect(database, read_only=True)
    try:
        picked = pick_alerts(con, card, alerts)
    finally:
        con.close()
    chosen = picked.alerts
    env = findings_env(database, card, trained)
    tasks = [a.task(f"{SNAPSHOT_DIR}/{SNAPSHOT_FILE}") for a in chosen]
    gate = asyncio.Semaphore(max(concurrency, 1))

    async def one(task: Task) -> Episode:
        async with gate:
            return await run_episode(env, task, policy, seed=seed, split="findings")

    episodes = await asyncio.gather(*(one(t) for t in tasks))
    with (out / "episodes.jsonl").open("w", encoding="utf-8") as fh:
        for ep in episodes:
            fh.write(ep.model_dump_json() + "\n")
    findings = [
        check_finding(ep, alert, task.messages()[0].content, database)
        for ep, alert, task in zip(episodes, chosen, tasks, strict=True)
    ]
    report = FindingsReport(
        source=manifest.source,
        snapshot_digest=manifest.digest(),
        model=policy.model_name,
        policy_hash=policy.hash,
        playbook=playbook,
        trained_env=str(env_dir) if env_dir is not None else None,
        created=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        skipped=picked.skipped,
        refused=picked.refused,
        artefacts=picked.artefacts,
        merged=picked.merged,
        noise=picked.noise,
        z_needed=picked.z_needed,
        findings=findings,
    )

    write_report(report, out)
    return report


def load_report(out: Path) -> FindingsReport:
    return FindingsReport.model_validate(json.loads((out / "findings.json").read_text()))
