"""The certificate: held-out gain, non-regression on every suite, and admission — or which failed.

`build` is a pure function of the frozen inputs and the stored episodes, so `recompute` can
rebuild a certificate.json from its own contents and the run directories it names, and compare
bytes. Running the arms (what is missing) is `workgym.certify.arms`; this module only reads.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workgym.certify import comparison
from workgym.certify.schema import (
    AdmissionRecord,
    Arm,
    Certificate,
    Condition,
    ConditionName,
    CostMatched,
    EnvRecord,
    Frozen,
    PolicyRecord,
    RunRecord,
    SuiteResult,
    TaskResult,
)
from workgym.core.errors import ConfigError
from workgym.core.tasks import canonical_json
from workgym.run.rundir import RunSpec, read_spec

if TYPE_CHECKING:
    from workgym.core.environment import Environment

CERT_JSON = "certificate.json"
CERT_HTML = "certificate.html"

RULES = [
    "items: each item's K epochs are averaged first; d_i = candidate - baseline",
    "failures: errors, limit hits, verifier errors and flagged successes count 0 in both arms; "
    "a flagged success counts once a person accepted every flag it carries (RUN/reviews.jsonl, "
    "whose digest is recorded per run)",
    "estimand: declared before the look; default families when the test split has enough "
    "families that a family-level test can reach p <= alpha (2^-G <= alpha), items otherwise",
    "gain, items: exact McNemar (K=1, binary rewards) or the sign-flip test over items; interval: "
    "the exact unconditional interval (binary) or the score interval on fractional discordance "
    "(graded)",
    "gain, families: sign-flip test over family mean differences, exact for G <= 16, with its "
    "smallest attainable p printed and its inverted interval; a gate that cannot reach alpha "
    "cannot pass",
    "non-regression: per suite, the one-sided (1-alpha) bound over items (exact unconditional "
    "for binary rewards, bounded score for graded) must be above "
    "-margin; a suite whose baseline is at the floor or whose arms are both at the ceiling "
    "cannot show regression and is left out; all other suites must pass (intersection-union), "
    "and at least one must be informative",
    "admission: the environment must have passed admission; --force is recorded and fails it",
]


def _sha(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(text.encode()).hexdigest()


def policy_record(policy: dict[str, Any], policy_hash: str) -> PolicyRecord:
    """Identity of a policy from its description (as run.json stores it)."""
    return PolicyRecord(
        hash=policy_hash,
        model=str(policy.get("model", "")),
        playbook_sha256=_sha(policy.get("playbook")),
        system_prompt_sha256=_sha(policy.get("system_prompt") or None),
        sampling=dict(policy.get("sampling") or {}),
    )


def split_hash(spec: dict[str, Any], split: str, items: list[tuple[str, str]]) -> str:
    body = canonical_json({"spec": spec, "split": split, "items": [list(i) for i in items]})
    return hashlib.sha256(body.encode()).hexdigest()


def env_record(env: Environment, ref: str, split: str, items: list[tuple[str, str]]) -> EnvRecord:
    return EnvRecord(
        id=env.id,
        version=env.version,
        hash=env.content_hash(),
        ref=ref,
        split=split,
        split_hash=split_hash(env.taskset.split_spec.model_dump(), split, items),
        n_items=len(items),
        n_families=len({f for _, f in items}),
    )


def check_admission(
    env: Environment, *, force: bool = False, directory: Path | None = None
) -> tuple[AdmissionRecord, list[str]]:
    """Has `env` (this exact content hash) passed admission? The one integration point with the
    guards' gate (`workgym.guards.admission`, fed by `workgym check`).

    Raises NotAdmittedError unless `force`; returns the certificate's admission record and the
    names of the gates that were forced, for run.json and the certificate.
    """
    from workgym.guards.admission import admission_path, require_admitted

    found = require_admitted(env, force=force, directory=directory)
    where = admission_path(directory)
    record = found.record
    if found.admitted and record is not None:
        detail = f"`workgym check` passed on {record.checked_at} ({where})"
        if record.thresholds:
            detail += (
                f"; baseline thresholds set by the environment: {record.thresholds} because "
                f"{record.threshold_reason or 'no reason given'}"
            )
        if found.note:
            detail += f"; {found.note}"
    elif record is None:
        detail = f"no admission record for hash {env.content_hash()[:12]} in {where}"
    else:
        shown = "; ".join(record.failures[:3])
        detail = f"`workgym check` failed on {record.checked_at}: {shown} ({where})"
    return (
        AdmissionRecord(
            passed=found.admitted,
            forced=bool(found.forced),
            source="workgym.guards.admission",
            detail=detail,
        ),
        list(found.forced),
    )


@dataclass(frozen=True)
class Side:
    """One environment of the comparison: its record, the two run directories, the items."""

    env: EnvRecord
    baseline_run: Path
    candidate_run: Path
    items: list[tuple[str, str]]


def _run_record(arm: Arm, run: Path, side: Side, frozen: Frozen, base_dir: Path) -> RunRecord:
    spec: RunSpec = read_spec(run)
    expected: PolicyRecord = getattr(frozen, arm)
    problems = []
    if spec.env_hash != side.env.hash:
        problems.append(f"environment hash {spec.env_hash[:12]} != {side.env.hash[:12]}")
    if spec.split != side.env.split:
        problems.append(f"split {spec.split!r} != {side.env.split!r}")
    if spec.epochs != frozen.epochs:
        problems.append(f"epochs {spec.epochs} != {frozen.epochs}")
    if spec.seed != frozen.seed:
        problems.append(f"seed {spec.seed} != {frozen.seed} (the arms must share seeds)")
    if spec.policy_hash != expected.hash:
        problems.append(f"policy {spec.policy_hash} is not the {arm} {expected.hash}")
    if problems:
        raise ConfigError(f"{run} does not fit this certificate: " + "; ".join(problems))
    digest, lines = comparison.episodes_digest(run)
    reviews_sha, n_reviews = comparison.reviews_digest(run)
    return RunRecord(
        arm=arm,
        path=os.path.relpath(run, base_dir),
        policy_hash=spec.policy_hash,
        seed=spec.seed,
        epochs=spec.epochs,
        forced=spec.forced,
        episodes_sha256=digest,
        n_episodes=lines,
        reviews_sha256=reviews_sha,
        n_reviews=n_reviews,
    )


def _compare(side: Side, frozen: Frozen, base_dir: Path) -> dict[str, Any]:
    runs = [
        _run_record("baseline", side.baseline_run, side, frozen, base_dir),
        _run_record("candidate", side.candidate_run, side, frozen, base_dir),
    ]
    base, base_cost = comparison.read_arm(side.baseline_run, side.items, frozen.epochs)
    cand, cand_cost = comparison.read_arm(side.candidate_run, side.items, frozen.epochs)
    ratio = (
        cand_cost.tokens_per_task / base_cost.tokens_per_task
        if base_cost.tokens_per_task > 0
        else None
    )
    return {
        "env": side.env,
        "runs": runs,
        "items": comparison.item_scores(side.items, base, cand),
        "cost": {"baseline": base_cost, "candidate": cand_cost, "ratio": ratio},
    }


def build(frozen: Frozen, task: Side, suites: list[Side], base_dir: Path) -> Certificate:
    """The certificate from frozen inputs and stored episodes (deterministic)."""
    parts = _compare(task, frozen, base_dir)
    gain = comparison.gain(
        parts["items"],
        frozen.alpha,
        frozen.epochs,
        frozen.n_resamples,
        frozen.seed,
        frozen.estimand,
    )
    task_ni = comparison.non_inferiority(parts["items"], frozen.task_margin, frozen.alpha)
    task_result = TaskResult(**parts, gain=gain, non_inferiority=task_ni)
    ratio = task_result.cost.ratio
    if ratio is not None and ratio < 1.0 and task_ni.passed:
        how = "better" if gain.significant else "non-inferior"
        task_result.matched = (
            f"matched at {ratio:.0%} tokens: the candidate is {how} on the held-out items "
            f"(margin {frozen.task_margin:g}) with {ratio:.0%} of the baseline's tokens per task"
        )
    power = 0.8 ** (1.0 / max(1, len(suites)))
    suite_results = []
    for side in suites:
        margin = frozen.margins.get(side.env.id)
        if margin is None:
            raise ConfigError(f"no margin frozen for suite {side.env.id}; pass --margin")
        sp = _compare(side, frozen, base_dir)
        ni = comparison.non_inferiority(sp["items"], margin, frozen.alpha, power)
        suite_results.append(SuiteResult(**sp, non_inferiority=ni))
    conditions = _conditions(frozen, task_result, suite_results)
    failed: list[ConditionName] = [c.name for c in conditions if not c.passed]
    return Certificate(
        verdict="FAIL" if failed else "PASS",
        failed=failed,
        conditions=conditions,
        warnings=_warnings(frozen, task_result, suite_results),
        frozen=frozen,
        task=task_result,
        suites=suite_results,
        cost_matched=_cost_matched(task, task_result, frozen.epochs),
    )


def _cost_matched(side: Side, task: TaskResult, epochs: int) -> CostMatched | None:
    """The cost-matched section when a swarm is in either arm (workgym.certify.costmatch)."""
    from workgym.certify.costmatch import cost_matched

    return cost_matched(side.baseline_run, side.candidate_run, task.items, epochs)


def _conditions(frozen: Frozen, task: TaskResult, suites: list[SuiteResult]) -> list[Condition]:
    g = task.gain
    lower = "-inf" if g.lower is None else f"{g.lower:+.3f}"
    p = "n/a" if g.p_value is None else f"{g.p_value:.3g}"
    if g.significant:
        gain_detail = (
            f"gain {g.diff:+.3f} on {g.n_items} held-out items ({g.estimand}); one-sided "
            f"{1 - frozen.alpha:.0%} lower bound {lower} > 0, p = {p}"
        )
    elif not g.passable:
        gain_detail = (
            f"this gate cannot pass: the {g.estimand}-level test's smallest attainable p is "
            f"{g.smallest_p:.3g} > alpha {frozen.alpha:g} ({g.n_clusters} families); gain "
            f"{g.diff:+.3f}, p = {p}"
        )
    else:
        failing = [t.name for t in g.tests if t.gate and not t.rejects]
        gain_detail = (
            f"no significant gain: {g.diff:+.3f} on {g.n_items} held-out items ({g.estimand}), "
            f"one-sided {1 - frozen.alpha:.0%} lower bound {lower}, p = {p} "
            f"(not rejected by: {', '.join(failing)})"
        )
    reg_ok, reg_detail = _non_regression(suites, frozen.alpha)
    adm = frozen.admission
    adm_detail = adm.detail + (" — certified anyway with --force" if adm.forced else "")
    if not adm.passed:
        adm_detail = "environment has not passed admission: " + adm_detail
    return [
        Condition(name="gain", passed=g.significant, detail=gain_detail),
        Condition(name="non_regression", passed=reg_ok, detail=reg_detail),
        Condition(name="admission", passed=adm.passed, detail=adm_detail),
    ]


def _non_regression(suites: list[SuiteResult], alpha: float) -> tuple[bool, str]:
    """Intersection-union over the suites that can show something (decision 0070)."""
    if not suites:
        return False, "no regression suites were run: non-regression is unproven"
    mute = [s for s in suites if s.non_inferiority.status == "cannot show"]
    told = [s for s in suites if s.non_inferiority.status != "cannot show"]
    silent = "; ".join(
        f"suite {s.env.id} cannot show regression here ({s.non_inferiority.reason})" for s in mute
    )
    if not told:
        from workgym.stats.proportions import items_to_show

        margin = min(s.non_inferiority.margin for s in suites)
        binary = any(s.non_inferiority.method == "exact_unconditional" for s in suites)
        need = items_to_show(margin, alpha, binary)
        return False, (
            f"non-regression not shown: {silent}. An informative suite is one the baseline "
            f"partly solves, with at least {need} items for the margin "
            f"{margin:g} even if every pair ties"
        )
    bad = [s for s in told if not s.non_inferiority.passed]
    if bad:
        detail = "; ".join(
            f"suite {s.env.id} "
            + f"not shown non-inferior: {s.non_inferiority.diff:+.3f}, lower bound "
            f"{_num(s.non_inferiority.lower)} not above -{s.non_inferiority.margin:g}"
            + (
                f" (about {s.non_inferiority.n_needed} items needed)"
                if s.non_inferiority.underpowered
                and s.non_inferiority.diff > -s.non_inferiority.margin
                else ""
            )
            for s in bad
        )
        return False, detail + (f"; {silent}" if silent else "")
    detail = f"{len(told)} of {len(suites)} suites non-inferior within their margins"
    return True, detail + (f"; {silent}" if silent else "")


def _num(x: float | None) -> str:
    return "-inf" if x is None else f"{x:+.3f}"


def _warnings(frozen: Frozen, task: TaskResult, suites: list[SuiteResult]) -> list[str]:
    out = []
    looks = frozen.looks
    if looks.previous_attempts:
        out.append(
            f"this is attempt {looks.attempt} on this test split ({looks.previous_attempts} "
            "earlier): repeated looks inflate the chance of a lucky PASS"
        )
    g = task.gain
    if g.underpowered and g.mde is not None:
        out.append(
            f"underpowered: the minimum detectable effect {g.mde:.3f} is larger than the gain "
            f"{g.diff:+.3f}; use more items or epochs"
        )
    for s in suites:
        ni = s.non_inferiority
        if ni.underpowered:
            out.append(
                f"suite {s.env.id}: {ni.n_items} items, about {ni.n_needed} needed for the "
                f"margin {ni.margin:g}; a FAIL there may be noise, a PASS is still valid"
            )
    for name, comp in [("task", task), *[(s.env.id, s) for s in suites]]:
        for arm in ("baseline", "candidate"):
            c = getattr(comp.cost, arm)
            if c.flagged_successes:
                n = len(comp.items) * frozen.epochs
                share = c.flagged_successes / n
                out.append(
                    f"{name}: {c.flagged_successes} flagged {arm} successes counted as 0 "
                    "(not yet accepted in review)"
                    + (
                        f" ({share:.0%} of its episodes): this comparison means little until "
                        "the flags are reviewed"
                        if share > 0.1
                        else ""
                    )
                )
            if c.reviewed_successes:
                out.append(
                    f"{name}: {c.reviewed_successes} flagged {arm} successes counted because a "
                    "person accepted every flag they carry (reviews.jsonl)"
                )
            if c.errors or c.verifier_errors:
                out.append(
                    f"{name}: {arm} had {c.errors} errored episodes and {c.verifier_errors} "
                    "verifier errors (counted as failures)"
                )
    if frozen.baseline.hash == frozen.candidate.hash:
        out.append("baseline and candidate are the same policy")
    return out


def write(cert: Certificate, out: Path) -> tuple[Path, Path]:
    """certificate.json (canonical bytes) and certificate.html next to it."""
    from workgym.certify.report_html import render

    out.mkdir(parents=True, exist_ok=True)
    json_path, html_path = out / CERT_JSON, out / CERT_HTML
    json_path.write_text(cert.to_json(), encoding="utf-8")
    html_path.write_text(render(cert), encoding="utf-8")
    return json_path, html_path


def sides_of(cert: Certificate, base_dir: Path) -> tuple[Side, list[Side]]:
    def side(comp: TaskResult | SuiteResult) -> Side:
        runs = {r.arm: base_dir / r.path for r in comp.runs}
        return Side(
            env=comp.env,
            baseline_run=runs["baseline"],
            candidate_run=runs["candidate"],
            items=[(i.id, i.family) for i in comp.items],
        )

    return side(cert.task), [side(s) for s in cert.suites]


def recompute(path: Path) -> tuple[Certificate, bool, list[str]]:
    """Rebuild a certificate from its frozen inputs and stored episodes; compare bytes.

    Returns the rebuilt certificate, whether its bytes equal the file's, and which runs'
    episodes changed since it was written (when any did).
    """
    if not path.exists():
        raise ConfigError(f"no certificate at {path}; pass the certificate.json to recompute")
    stored = path.read_text(encoding="utf-8")
    try:
        cert = Certificate.model_validate_json(stored)
    except ValueError as exc:
        raise ConfigError(f"{path} is not a workgym certificate ({exc})") from exc
    base_dir = path.parent
    task, suites = sides_of(cert, base_dir)
    changed = []
    for comp in [cert.task, *cert.suites]:
        for r in comp.runs:
            run = base_dir / r.path
            digest = comparison.episodes_digest(run)[0] if (run / "episodes.jsonl").exists() else ""
            if digest != r.episodes_sha256:
                changed.append(f"{run} ({r.arm} on {comp.env.id})")
            elif comparison.reviews_digest(run)[0] != r.reviews_sha256:
                changed.append(f"{run} reviews ({r.arm} on {comp.env.id})")
    rebuilt = build(cert.frozen, task, suites, base_dir)
    return rebuilt, rebuilt.to_json() == stored, changed
