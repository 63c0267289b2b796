"""How an investigation reads: an alert about a metric, in one of several surface forms.

Every form states the metric exactly (what is counted, summed or averaged, over which rows),
both periods as half-open UTC intervals, and both values, then the same answer clause: the cause
vocabulary with one line per type, the predicate and window conventions, and the rule that a
conclusion names exactly one cause. Planted and unplanted tasks read alike; the prompt never says
whether anything was planted. Tables and columns are named by their words in the brief ("the
average net paid of store sales", "dated by its sold date"); the raw table name appears only in
the answer clause, where the predicate's columns are defined (decision 0195). Templates are
numbered `F9.t<i>`; the split holds some out.
"""

from __future__ import annotations

import datetime as dt

from workgym.envs.warehouse.investigate.frame import Frame, MetricWords
from workgym.envs.warehouse.investigate.vocab import NORMAL
from workgym.envs.warehouse.schema.naming import row_nouns

TEMPLATES = [
    "Our dashboard shows {metric} at {vw} for the {period} {w0} to {w1}, against {vb} for the "
    "{period} before ({b0} to {b1}). Find out why it changed.",
    "Alert: {metric} moved from {vb} ({b0} to {b1}) to {vw} ({w0} to {w1}), a change of "
    "{pct}. Investigate the {rows} data and explain the change.",
    "A stakeholder asks why {metric} is {vw} for {w0} to {w1} when it was {vb} the {period} "
    "before ({b0} to {b1}). Diagnose what happened, or tell them it is ordinary variation.",
    "Period-over-period check on {rows}: {metric} went from {vb} to {vw} between the {period} "
    "starting {b0} and the {period} starting {w0} (each runs to the next one's start). Is there "
    "a specific cause?",
]

MEANINGS = {
    "segment_shock": "the values of one slice moved",
    "volume_drop": "a share of one slice's rows went missing",
    "duplication": "some of one slice's rows were loaded twice",
    "data_bug": "one slice's values are corrupted (NULL, zero, wrong unit or wrong sign)",
    "mix_shift": "one slice's share of the rows changed while its own values did not",
    "join_break": "one slice's foreign keys stopped matching their table",
    "freshness_gap": "one slice's most recent rows never arrived",
    "clock_shift": "one slice's timestamps are shifted by some hours",
    NORMAL: "nothing specific: ordinary fluctuation",
}

ANSWER_CLAUSE = """\
Times are UTC; periods are half-open [start, end). Submit one conclusion with submit_answer:
{{"kind": "conclusion", "cause_type": ...,
"predicate": [{{"column": ..., "op": ..., "value": ...}}],
"window": [start, end], "direction": "up" or "down", "magnitude": the cause's relative effect on
the window's value, against what it would have been without the cause (e.g. -0.2),
"evidence": [{{"sql": a query you ran, "value": a number it returned}}], "prose": "..."}}.
cause_type is one of: {causes}.
The predicate selects the affected rows of `{table}` (conditions are AND-ed; columns of `{table}`,
or table.column of a table its foreign keys reference); the window is when the cause acted
(ISO 8601). Name exactly one cause. If nothing specific caused the change, answer cause_type
"{normal}" with an empty predicate, an empty window and direction "none". Cite at least one
query you ran as evidence; every query is re-run and its number checked."""


def clock_of(frame: Frame, words: MetricWords) -> str:
    """Which column puts a row in a period, in words ("Each store sale is dated by its sold
    date."): a table with ship, commit and receipt dates has three weekly series."""
    return f"Each {words.lex.row(frame.fact)} is dated by {words.dated_by(frame)}."


def fmt_time(value: dt.datetime) -> str:
    if value.hour == value.minute == value.second == 0:
        return value.strftime("%Y-%m-%d")
    return value.strftime("%Y-%m-%d %H:%M")


def fmt_value(value: float | None, integer: bool) -> str:
    if value is None:
        return "no value"
    if integer and float(value).is_integer():
        return f"{int(value):,}"
    text = f"{value:,.4f}".rstrip("0").rstrip(".")
    return text if text not in ("-0", "") else "0"


def fmt_change(before: float | None, after: float | None) -> str:
    if before is None or after is None or before == 0:
        return "not defined"
    pct = (after - before) / abs(before) * 100
    return f"{pct:+.1f}%"


def render(
    index: int,
    *,
    metric: str,
    table: str,
    period: str,
    baseline: tuple[dt.datetime, dt.datetime],
    window: tuple[dt.datetime, dt.datetime],
    values: tuple[float | None, float | None],
    integer: bool,
    clock: str = "",
) -> str:
    """The question: template `index`, which column times the rows (`clock`: a table with
    ship, commit and receipt dates has three weekly series), and the answer clause."""
    vb, vw = values
    body = TEMPLATES[index].format(
        metric=metric,
        rows=row_nouns(table)[1],
        period=period,
        b0=fmt_time(baseline[0]),
        b1=fmt_time(baseline[1]),
        w0=fmt_time(window[0]),
        w1=fmt_time(window[1]),
        vb=fmt_value(vb, integer),
        vw=fmt_value(vw, integer),
        pct=fmt_change(vb, vw),
    )
    causes = "; ".join(f"{name} ({meaning})" for name, meaning in MEANINGS.items())
    clause = ANSWER_CLAUSE.format(causes=causes, table=table, normal=NORMAL)
    if clock:
        body = f"{body} {clock}"
    return f"{body}\n\n{clause}"
