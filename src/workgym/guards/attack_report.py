"""The attack report: its record (attack.json), a rich table for the terminal and an escaped
HTML section.

The HTML section is standalone (inline style, no scripts) so the viewer and the certificate can
embed it as is; every string that came from an environment or a verifier is escaped.
"""

from __future__ import annotations

import json
from collections import Counter
from html import escape
from pathlib import Path

from pydantic import BaseModel, Field
from rich.table import Table

from workgym.guards.probes import TodoProbe

MATRIX_MAX_FAMILIES = 6


ATTACK_JSON = "attack.json"
ATTACK_HTML = "attack.html"


class Cell(BaseModel):
    """One probe on one family: what was expected, what the verifier said, pass or fail."""

    probe: str
    family: str
    expected: str
    got: str
    passed: bool
    tasks: int
    detail: str = ""
    failing_tasks: list[str] = Field(default_factory=list)


class ProbeInfo(BaseModel):
    name: str
    group: str
    summary: str
    expect: str
    applied: bool  # the environment's tags let it run


class AttackReport(BaseModel):
    env_id: str
    env_hash: str
    tags: list[str]
    families: list[str]  # the families attacked
    families_total: int = 0  # the environment's families; more than attacked when capped
    per_family: int
    max_tasks: int | None = None  # the cap on sampled tasks, None for every family
    seed: int
    probes: list[ProbeInfo]
    cells: list[Cell]
    todo: list[TodoProbe]
    episodes: int
    elapsed_s: float

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.cells) and bool(self.cells)

    @property
    def coverage(self) -> str:
        """Which share of the families was attacked, said wherever the attack is reported."""
        if self.families_total <= len(self.families):
            return f"{self.per_family} task(s) per family"
        return (
            f"{self.per_family} task(s) per family on {len(self.families)} of "
            f"{self.families_total} families, every kind (capped at {self.max_tasks} tasks)"
        )

    def failures(self) -> list[Cell]:
        return [c for c in self.cells if not c.passed]

    def cell(self, probe: str, family: str) -> Cell | None:
        return next((c for c in self.cells if c.probe == probe and c.family == family), None)

    def write(self, out: Path) -> Path:
        out.mkdir(parents=True, exist_ok=True)
        body = self.model_dump(mode="json") | {"passed": self.passed}
        (out / ATTACK_JSON).write_text(json.dumps(body, indent=2) + "\n")
        (out / ATTACK_HTML).write_text(attack_page(self))
        return out / ATTACK_JSON


def _mark(passed: bool) -> str:
    return "[green]pass[/]" if passed else "[bold red]FAIL[/]"


def attack_tables(report: AttackReport) -> list[Table]:
    """A probe x family matrix when families are few, else one row per probe; then failures."""
    title = (
        f"workgym attack {report.env_id} ({report.episodes} probe runs, {report.elapsed_s:.1f} s)"
    )
    by_probe: dict[str, list[Cell]] = {}
    for cell in report.cells:
        by_probe.setdefault(cell.probe, []).append(cell)
    tables = []
    if len(report.families) <= MATRIX_MAX_FAMILIES:
        t = Table("probe", "expected", *report.families, title=title)
        for probe, cells in by_probe.items():
            row = {c.family: c for c in cells}
            t.add_row(
                probe,
                cells[0].expected,
                *(_matrix_cell(row.get(f)) for f in report.families),
            )
    else:
        t = Table("probe", "expected", "got (families)", "families", "result", title=title)
        for probe, cells in by_probe.items():
            gots = Counter(c.got for c in cells)
            got = ", ".join(f"{g} x{n}" for g, n in gots.most_common(2))
            ok = sum(c.passed for c in cells)
            t.add_row(probe, cells[0].expected, got, f"{ok}/{len(cells)}", _mark(ok == len(cells)))
    tables.append(t)
    failures = report.failures()
    if failures:
        f = Table("probe", "family", "expected", "got", "tasks", title="failing cells")
        for c in failures:
            f.add_row(c.probe, c.family, c.expected, c.got, ", ".join(c.failing_tasks[:3]))
        tables.append(f)
    return tables


def _matrix_cell(cell: Cell | None) -> str:
    if cell is None:
        return "[dim]n/a[/]"
    return (
        f"[green]pass[/] {escape_rich(cell.got)}"
        if cell.passed
        else f"[bold red]FAIL[/] {escape_rich(cell.got)}"
    )


def escape_rich(text: str) -> str:
    from rich.markup import escape as rich_escape

    return rich_escape(text)


_STYLE = """
.wg-attack{font:13px/1.4 system-ui,sans-serif;color:#222}
.wg-attack table{border-collapse:collapse;margin:.5em 0}
.wg-attack th,.wg-attack td{border:1px solid #ccc;padding:2px 6px;text-align:left}
.wg-attack td.pass{background:#e7f6e7}
.wg-attack td.fail{background:#fbe3e3;font-weight:600}
.wg-attack td.na{color:#999}
.wg-attack .verdict-pass{color:#176b17}
.wg-attack .verdict-fail{color:#a11}
"""


def attack_section(report: AttackReport) -> str:
    """The attack as an HTML fragment: summary, probe x family matrix, failures, TODO probes."""
    e = escape
    verdict = "PASS" if report.passed else "FAIL"
    out = [
        '<section class="wg-attack">',
        f"<h2>Attack: {e(report.env_id)} "
        f'<span class="verdict-{verdict.lower()}">{verdict}</span></h2>',
        f"<p>environment hash <code>{e(report.env_hash[:16])}</code>; tags "
        f"{e(', '.join(report.tags))}; {e(report.coverage)}; "
        f"{report.episodes} probe runs in {report.elapsed_s:.1f} s.</p>",
        "<table><thead><tr><th>probe</th><th>expected</th>",
        *(f"<th>{e(f)}</th>" for f in report.families),
        "</tr></thead><tbody>",
    ]
    cells = {(c.probe, c.family): c for c in report.cells}
    for info in report.probes:
        if not info.applied:
            continue
        row = [c for c in report.cells if c.probe == info.name]
        expected = row[0].expected if row else info.expect
        out.append(f'<tr><th title="{e(info.summary)}">{e(info.name)}</th><td>{e(expected)}</td>')
        for family in report.families:
            c = cells.get((info.name, family))
            if c is None:
                out.append('<td class="na">n/a</td>')
            else:
                cls = "pass" if c.passed else "fail"
                tip = f"expected {c.expected}; {c.detail}".strip("; ")
                out.append(f'<td class="{cls}" title="{e(tip)}">{e(c.got)}</td>')
        out.append("</tr>")
    out.append("</tbody></table>")
    skipped = [p for p in report.probes if not p.applied]
    if skipped:
        names = ", ".join(e(p.name) for p in skipped)
        out.append(f"<p>Not applicable to this environment's tags: {names}.</p>")
    if report.todo:
        out.append("<h3>Probes not built yet</h3><ul>")
        out += [
            f"<li><b>{e(t.name)}</b> ({e(t.group)}): {e(t.summary)} - needs {e(t.needs)}</li>"
            for t in report.todo
        ]
        out.append("</ul>")
    out.append("</section>")
    return "\n".join(out)


def attack_page(report: AttackReport) -> str:
    title = escape(f"workgym attack {report.env_id}")
    return (
        f'<!doctype html>\n<html><head><meta charset="utf-8"><title>{title}</title>'
        f"<style>{_STYLE}</style></head><body>\n{attack_section(report)}\n</body></html>\n"
    )
