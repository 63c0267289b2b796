"""The findings report: its records, and the files a person opens (findings.json, findings.md).

The markdown leads with what the report is not (a score), then what was not investigated and
why (tables whose grain refuses the period, moves in artefact buckets, moves that are the same
event as another alert), then one section per event: the alert, the other metrics it shows in,
the claim, its verification mark with every rule that failed and why, the support the data gives
the claimed slice, and every evidence query with what re-running it showed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from workgym.envs.warehouse.investigate.alerts import Alert, Refusal
from workgym.envs.warehouse.investigate.evidence import EvidenceCheck
from workgym.envs.warehouse.investigate.prompts import fmt_change, fmt_time, fmt_value

MARK = {True: "verified", False: "unverified"}
NOT_SCORED = "the true causes are unknown, so nothing here is scored"


class Support(BaseModel):
    """What the data says about the claimed slice (consistency, not truth)."""

    rows: int  # rows the predicate selects in baseline + window
    slice_before: float | None = None
    slice_after: float | None = None
    explained: float | None = None  # share of the alert's change the slice accounts for
    direction_matches: bool | None = None
    error: str | None = None


# What "verified" means: every rule holds (decision 0169). The reasons are printed in the report.
RULES: dict[str, str] = {
    "evidence": "every cited query re-ran read-only, reproduced the number it was cited with, "
    "and had been run by the agent",
    "number": "at least one cited query carries a number it reproduced: a query cited without a "
    "number shows nothing a person can check",
    "buckets": "both compared buckets hold enough rows and neither is a partial bucket at the "
    "edge of the data's range: otherwise the move is an artefact of the buckets",
    "noise": "the move is at least 4 standard errors of what sampling the two buckets' rows "
    "gives (means for an average, Poisson arrivals for a count or a sum), more when many moves "
    "were compared (Bonferroni at 5% for the whole pick): a smaller move is noise",
    "slice": "the claimed slice holds enough rows and accounts for at least half of the change in "
    "the claimed direction: a cause must carry the move it is named for",
    "no_single_cause": "'normal variation' holds only when no slice passes the single-cause test "
    "the planted tasks' gate uses",
}


class Check(BaseModel):
    """One rule of verification, held or not, with what the data showed."""

    rule: str
    passed: bool
    detail: str = ""


class Finding(BaseModel):
    alert: Alert
    prompt: str
    submitted: bool = False
    problem: str | None = None  # why there is no checkable claim
    claim: dict[str, Any] | None = None
    cause_type: str | None = None  # canonical, when the claim names a vocabulary type
    evidence: list[EvidenceCheck] = Field(default_factory=list)
    verified: bool = False
    checks: list[Check] = Field(default_factory=list)
    support: Support | None = None
    outcome: str = ""
    turns: int = 0
    queries: int = 0


class FindingsReport(BaseModel):
    source: str
    snapshot_digest: str
    model: str
    policy_hash: str
    playbook: str | None = None
    trained_env: str | None = None
    created: str
    note: str = NOT_SCORED
    skipped: list[str] = Field(default_factory=list)
    refused: list[Refusal] = Field(default_factory=list)
    artefacts: list[str] = Field(default_factory=list)  # per table: buckets carrying no alert
    merged: int = 0  # moves listed under another alert as the same event
    noise: int = 0  # moves within sampling noise
    z_needed: float = 0.0
    findings: list[Finding] = Field(default_factory=list)

    @property
    def verified(self) -> int:
        return sum(f.verified for f in self.findings)


def _evidence_line(i: int, c: EvidenceCheck) -> str:
    if c.ok:
        what = "re-ran" + ("" if c.value is None else f", reproduced {c.value:g}")
        head = f"{i}. [x] {what}"
    elif not c.observed:
        head = f"{i}. [ ] never run by the agent in this episode"
    elif c.status != "ok":
        head = f"{i}. [ ] does not re-run ({c.status}: {c.error})"
    else:
        head = f"{i}. [ ] does not reproduce the cited value {c.value}"
    return f"{head}\n\n   ```sql\n   {c.sql}\n   ```"


def _claim(f: Finding) -> list[str]:
    claim = f.claim or {}
    terms = " AND ".join(
        f"{t['column']} {t['op']} {t.get('value')!r}" for t in claim.get("predicate", [])
    )
    lines = [
        f"- claim ({MARK[f.verified]}): **{claim.get('cause_type')}**"
        + (f" where {terms}" if terms else ""),
        f"- window: {claim.get('window') or '-'}; direction: {claim.get('direction')}; "
        f"magnitude: {claim.get('magnitude')}",
    ]
    if f.problem:
        lines.append(f"- problem: {f.problem}")
    for c in f.checks:
        if not c.passed:
            lines.append(f"- not verified ({c.rule}): {c.detail}")
    s = f.support
    if s is not None:
        if s.error:
            lines.append(f"- support: the predicate does not run ({s.error})")
        else:
            share = "n/a" if s.explained is None else f"{s.explained:.0%}"
            before, after = fmt_value(s.slice_before, False), fmt_value(s.slice_after, False)
            text = (
                f"- support: the slice ({s.rows} rows) went from {before} to {after} and "
                f"accounts for {share} of the change"
            )
            if s.direction_matches is False:
                text += "; its direction contradicts the claim"
            lines.append(text)
    if claim.get("prose"):
        lines.append(f"- prose (not checked): {claim['prose']}")
    return lines


def markdown(report: FindingsReport) -> str:
    out = [
        f"# Findings on {report.source}",
        "",
        f"Real, unplanted data: {report.note}. Each claim below cites evidence queries that were "
        "re-run on the snapshot; a claim is *verified* only when every rule listed below "
        "holds. Scores on planted copies are separate (`workgym eval ENV`).",
        "",
        f"- model: {report.model} (policy {report.policy_hash})"
        + (f", trained in {report.trained_env}" if report.trained_env else ""),
        f"- playbook: {'yes' if report.playbook else 'none'}",
        f"- snapshot: {report.snapshot_digest[:16]}; created {report.created}",
        f"- claims verified: {report.verified} of {len(report.findings)}",
        f"- one event is one finding: {report.merged} more moves were the same event as a "
        "finding below (they share at least two thirds of the rows, or across tables of the "
        "time, behind the smaller move) and are listed under it",
        f"- moves within sampling noise (under {report.z_needed:g} standard errors, the bar "
        f"for the moves compared): {report.noise}",
        "- buckets that carry no alert (fewer than 30 rows, or partial at the edge of the "
        "data's range): " + ("; ".join(report.artefacts) or "none"),
        "",
        "A claim is verified when every rule holds: "
        + "; ".join(f"**{k}**: {v}" for k, v in RULES.items())
        + ".",
    ]
    if report.refused:
        out += ["", "## Tables whose grain refuses their period", ""]
        out += [f"- {r.reason}" for r in report.refused]
    for i, f in enumerate(report.findings, 1):
        a = f.alert
        vb, vw = a.values
        out += [
            "",
            f"## Finding {i}: {a.metric.label}",
            "",
            f"{fmt_time(a.baseline[0])} to {fmt_time(a.baseline[1])}: "
            f"{fmt_value(vb, a.metric.integer)}; {fmt_time(a.window[0])} to "
            f"{fmt_time(a.window[1])}: {fmt_value(vw, a.metric.integer)} "
            f"({fmt_change(vb, vw)}, {a.surprise:.1f}x the typical change).",
            "",
            f"- the rows behind the move: {a.driver_label()}"
            + (
                f" (explains {a.driver_explained:.0%} of the change)"
                if a.driver_explained is not None
                else " (no slice passes the single-cause test)"
            ),
        ]
        for m in a.also:
            out.append(
                f"- also shows in: {m.metric} ({fmt_time(m.window[0])} against "
                f"{fmt_time(m.baseline[0])}, {m.surprise:.1f}x; rows behind it: {m.driver}; "
                f"{m.overlap:.0%} of them shared)"
            )
        out.append("")
        if f.claim is None:
            out.append(f"- no claim: {f.problem} (outcome {f.outcome}, {f.turns} turns)")
            continue
        out += _claim(f)
        if f.evidence:
            out += ["", "Evidence:", ""]
            out += [_evidence_line(j, c) for j, c in enumerate(f.evidence, 1)]
    return "\n".join(out) + "\n"


def write_report(report: FindingsReport, out: Path) -> tuple[Path, Path]:
    json_path, md_path = out / "findings.json", out / "findings.md"
    json_path.write_text(report.model_dump_json(indent=2) + "\n")
    md_path.write_text(markdown(report))
    return json_path, md_path
