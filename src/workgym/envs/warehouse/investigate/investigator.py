"""`scripted/investigator`: a rule-based investigator, a test double (never a learning result).

It reads what the question states (`task.meta["question"]`: the metric, the table, the two
periods, the frame's dimensions), describes the fact table first as any agent would, then runs
the slice search the solvability gate runs (every one- and two-dimension slice, ranked by how
much of the change it explains, computed in SQL and read back through run_sql). When one slice
clearly dominates (the gate's own test) it profiles that slice against the rest in both periods
and names the mechanism whose trace it shows (`diagnose`), citing the slice's metric query;
otherwise it answers `normal_variation`. It exists to exercise `workgym investigate` and the
verifier end to end without a model, and as a heuristic baseline; it knows nothing a real agent
would not: every number it uses comes from a query it ran.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
from typing import TYPE_CHECKING, Any

from workgym.core.messages import Message, ToolCall
from workgym.core.model import Completion, Model, Sampling, Usage, message_tokens
from workgym.envs.warehouse.investigate import diagnose
from workgym.envs.warehouse.investigate.build import evidence_sql
from workgym.envs.warehouse.investigate.frame import Frame, Metric, plant_rows, rank_rows, ts
from workgym.envs.warehouse.investigate.oracle import RUN_SQL, SUBMIT
from workgym.envs.warehouse.investigate.slices import (
    MAX_PAIR_DIMS,
    MIN_SLICE_SHARE,
    Cell,
    Explained,
    SliceTable,
    canon,
    slice_terms,
)
from workgym.envs.warehouse.investigate.solvability import dominates
from workgym.envs.warehouse.investigate.vocab import NORMAL
from workgym.envs.warehouse.source.duck import qi

if TYPE_CHECKING:
    from workgym.core.environment import Environment
    from workgym.core.tasks import Task
    from workgym.core.tools import ToolSpec

NAME = "scripted/investigator"
MAX_ROWS = 200  # run_sql's own ceiling: the search returns the best-scoring slices first


def search_sql(frame: Frame, metric: Metric, question: dict[str, Any]) -> str:
    """Every one-dimension slice and every pair of the first dimensions, scored as
    `SliceTable.explain` scores them, the total first and then the best slices."""
    dims = frame.dims
    w0 = dt.datetime.fromisoformat(question["window"][0])
    cols = ", ".join(f"{frame.dim_sql(d)} AS {qi(d)}" for d in dims)
    den = metric.den(frame) or "0"
    sets: list[tuple[str, ...]] = [()] + [(d,) for d in dims]
    sets += list(itertools.combinations(dims[:MAX_PAIR_DIMS], 2))
    grouping = ", ".join("(" + ", ".join(qi(c) for c in s) + ")" for s in sets)
    names = ", ".join(qi(d) for d in dims)
    agg = ", ".join(
        f"coalesce(sum(__{x}) FILTER (WHERE {when}__w), 0) AS {x}_{side}"
        for x in ("x", "y")
        for when, side in (("NOT ", "b"), ("", "w"))
    )
    if metric.den(frame) is None:
        total = "(t.x_w - t.x_b)"
        rest = "((t.x_w - g.x_w) - (t.x_b - g.x_b))"
    else:
        total = "(t.x_w / nullif(t.y_w, 0) - t.x_b / nullif(t.y_b, 0))"
        rest = (
            "((t.x_w - g.x_w) / nullif(t.y_w - g.y_w, 0)"
            " - (t.x_b - g.x_b) / nullif(t.y_b - g.y_b, 0))"
        )
    share = "((g.rows_b + g.rows_w) / (t.rows_b + t.rows_w))"
    explained = f"(({total} - {rest}) / nullif({total}, 0))"
    full = (1 << len(dims)) - 1
    return (
        f"WITH base AS (SELECT ({frame.t} >= {ts(w0)}) AS __w, {cols}, "
        f"{metric.num(frame)} AS __x, {den} AS __y FROM {metric.source(frame)} "
        f"WHERE {diagnose.window_filter(frame, question)}), "
        f"g AS (SELECT GROUPING({names}) AS __g, {names}, count(*) FILTER (WHERE NOT __w) AS "
        f"rows_b, count(*) FILTER (WHERE __w) AS rows_w, {agg} FROM base "
        f"GROUP BY GROUPING SETS ({grouping})), "
        f"t AS (SELECT * FROM g WHERE __g = {full}) "
        f"SELECT g.* FROM g, t WHERE g.__g = {full} OR (g.rows_b + g.rows_w >= {rank_rows(frame)} "
        f"AND {share} >= {MIN_SLICE_SHARE} AND {share} < 1) "
        f"ORDER BY g.__g = {full} DESC, {explained} * abs({explained}) / {share} DESC NULLS LAST "
        f"LIMIT {MAX_ROWS}"
    )


def read_search(rows: list[list[Any]], frame: Frame, ratio: bool) -> SliceTable:
    """The search's rows as the gate's `SliceTable` (only the slices it returned)."""
    dims = frame.dims
    nd = len(dims)
    total = Cell()
    cells: dict[Any, Cell] = {}
    for row in rows:
        g = int(row[0])
        values = row[1 : 1 + nd]
        rows_b, rows_w, x_b, x_w, y_b, y_w = row[1 + nd : 7 + nd]
        cell = Cell(
            rows_b=int(rows_b), rows_w=int(rows_w), num_b=float(x_b), num_w=float(x_w),
            den_b=float(y_b), den_w=float(y_w),
        )  # fmt: skip
        present = [i for i in range(nd) if not (g >> (nd - 1 - i)) & 1]
        if not present:
            total = cell
        elif all(values[i] is not None for i in present):
            cells[canon([(dims[i], values[i]) for i in present])] = cell
    return SliceTable(
        ratio=ratio,
        total=total,
        cells=cells,
        min_rows=rank_rows(frame),
        plant_rows=plant_rows(frame),
    )


def _rows(message: Message | None) -> list[list[Any]] | None:
    if message is None:
        return None
    try:
        rows = json.loads(message.content)["rows"]
    except (ValueError, KeyError, TypeError):
        return None
    return rows if isinstance(rows, list) else None


def _call(i: str, sql: str) -> ToolCall:
    return ToolCall(
        id=f"inv_{i}", name=RUN_SQL, arguments=json.dumps({"sql": sql, "max_rows": MAX_ROWS})
    )


class _Turns:
    def __init__(self, task: Task) -> None:
        self.question = task.meta.get("question") or {}
        if "frame" not in self.question:
            raise ValueError(
                f"{NAME} answers F9 investigations only; task {task.id} is {task.family} "
                "(its other episodes are errors by design: count the F9 ones)"
            )
        self.frame = Frame.model_validate(self.question["frame"])
        self.metric = Metric.model_validate(self.question["metric"])
        self.ratio = self.metric.den(self.frame) is not None
        self.step = 0
        self.name = NAME
        self.table: SliceTable | None = None
        self.best: Explained | None = None

    async def complete(
        self, messages: list[Message], tools: list[ToolSpec], sampling: Sampling
    ) -> Completion:
        reply = self._next(messages)
        self.step += 1
        usage = Usage(
            prompt_tokens=sum(message_tokens(m) for m in messages),
            completion_tokens=message_tokens(reply),
        )
        return Completion(message=reply, usage=usage, finish_reason="stop")

    def _next(self, messages: list[Message]) -> Message:
        if self.step == 0:  # look at the fact table first, as any agent would
            call = ToolCall(
                id="inv_describe",
                name="describe_table",
                arguments=json.dumps({"name": self.frame.fact}),
            )
            return Message(role="assistant", content="Reading the table.", tool_calls=[call])
        if self.step == 1:
            sql = search_sql(self.frame, self.metric, self.question)
            return Message(
                role="assistant", content="Searching the slices.", tool_calls=[_call("search", sql)]
            )
        if self.step == 2:
            rows = _rows(_last_result(messages))
            self.table = read_search(rows or [], self.frame, self.ratio)
            ranked = self.table.explain()
            if ranked and dominates(ranked, ranked[0])[0]:
                self.best = ranked[0]
                return self._profile()
        return self._conclude(messages)

    def _profile(self) -> Message:
        assert self.best is not None
        terms = slice_terms(self.best.key)
        f, m, q = self.frame, self.metric, self.question
        calls = [
            _call("evidence", self._evidence_sql()),
            _call("profile", diagnose.profile_sql(f, m, q, terms)),
            _call("copies", diagnose.duplicates_sql(f, q, terms)),
        ]
        if diagnose.has_hours(f):
            calls.append(_call("hours", diagnose.hours_sql(f, q, terms)))
        return Message(role="assistant", content="Profiling the slice.", tool_calls=calls)

    def _evidence_sql(self) -> str:
        assert self.best is not None
        b0, b1 = (dt.datetime.fromisoformat(x) for x in self.question["baseline"])
        w0, w1 = (dt.datetime.fromisoformat(x) for x in self.question["window"])
        terms = slice_terms(self.best.key)
        return evidence_sql(self.frame, self.metric, (b0, b1), (w0, w1), terms)

    def _conclude(self, messages: list[Message]) -> Message:
        answer: dict[str, Any]
        if self.best is None or self.table is None:
            # Cite the search with a number it returned (the total's window numerator): a
            # query cited without a number shows a reader nothing to check.
            sql = search_sql(self.frame, self.metric, self.question)
            rows = _rows(_result_of(messages, "inv_search")) or []
            x_w = 4 + len(self.frame.dims)
            value = rows[0][x_w] if rows and len(rows[0]) > x_w else None
            number = isinstance(value, int | float) and not isinstance(value, bool)
            cited: Any = {"sql": sql, "value": value} if number else sql
            answer = {"kind": "conclusion", "cause_type": NORMAL, "evidence": [cited]}
        else:
            found = {c.id: _rows(_result_of(messages, c.id)) for c in _calls(messages)}
            sides = diagnose.read_sides(
                found.get("inv_profile") or [],
                found.get("inv_copies") or [],
                found.get("inv_hours"),
            )
            cause = diagnose.cause_of(sides, self.frame, self.metric, self.question)
            table = self.table
            change = table.change(table.total) or 0.0
            before = table.value(table.total, "b") or 0.0
            value = next(
                (r[1] for r in found.get("inv_evidence") or [] if r and r[0] == "window"), None
            )
            evidence: list[Any] = [
                {"sql": self._evidence_sql(), "value": value} if value is not None
                else self._evidence_sql()
            ]  # fmt: skip
            answer = {
                "kind": "conclusion",
                "cause_type": cause,
                "predicate": [t.model_dump() for t in slice_terms(self.best.key)],
                "window": list(self.question["window"]),
                "direction": "up" if change > 0 else "down",
                "magnitude": round(change / abs(before), 4) if before else None,
                "evidence": evidence,
                "prose": f"{cause} in {self.best.label()}: it explains "
                f"{self.best.explained:.0%} of the change.",
            }
        call = ToolCall(id="inv_submit", name=SUBMIT, arguments=json.dumps({"answer": answer}))
        return Message(role="assistant", tool_calls=[call])


def _calls(messages: list[Message]) -> list[ToolCall]:
    return [c for m in messages if m.role == "assistant" for c in (m.tool_calls or [])]


def _result_of(messages: list[Message], call_id: str) -> Message | None:
    return next(
        (m for m in messages if m.role == "tool" and m.tool_call_id == call_id),
        None,
    )


def _last_result(messages: list[Message]) -> Message | None:
    return next((m for m in reversed(messages) if m.role == "tool" and m.name == RUN_SQL), None)


class Investigator:
    """TaskAwareModel factory for the rule-based investigator test double."""

    name = NAME

    def for_task(self, task: Task, env: Environment) -> Model:
        return _Turns(task)
