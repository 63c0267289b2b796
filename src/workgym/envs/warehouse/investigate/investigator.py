"""`scripted/investigator`: a rule-based investigator, a test double (never a learning result).

It reads what the question states (`task.meta["question"]`: the metric, the table, the two
periods, and the frame's first three dimensions, which it also shows itself by describing the
fact table first), breaks the metric down by each of those dimensions with run_sql, ranks the
values with the same explainer the gate uses, and concludes `segment_shock` on the best slice
when it explains at least half of the change, else `normal_variation`, citing the breakdown it
ran. It exists to exercise `workgym investigate` and the verifier end to end without a model,
and as a heuristic baseline; it knows nothing a real agent would not."""

from __future__ import annotations

import datetime as dt
import json
from typing import TYPE_CHECKING, Any

from workgym.core.messages import Message, ToolCall
from workgym.core.model import Completion, Model, Sampling, Usage, message_tokens
from workgym.envs.warehouse.investigate.frame import Frame, Metric, between, ts
from workgym.envs.warehouse.investigate.oracle import RUN_SQL, SUBMIT
from workgym.envs.warehouse.investigate.slices import Cell, Explained, SliceTable
from workgym.envs.warehouse.investigate.solvability import MIN_EXPLAINED
from workgym.envs.warehouse.investigate.vocab import NORMAL
from workgym.envs.warehouse.source.duck import qi

if TYPE_CHECKING:
    from workgym.core.environment import Environment
    from workgym.core.tasks import Task
    from workgym.core.tools import ToolSpec

NAME = "scripted/investigator"
MAX_VALUES = 40


def breakdown_sql(frame: Frame, metric: Metric, dim: str, question: dict[str, Any]) -> str:
    b0 = dt.datetime.fromisoformat(question["baseline"][0])
    w0, w1 = (dt.datetime.fromisoformat(x) for x in question["window"])
    den = metric.den(frame) or "0"
    return (
        f"SELECT f.{qi(dim)} AS value, {frame.t} >= {ts(w0)} AS in_window, "
        f"sum({metric.num(frame)}) AS num, sum({den}) AS den, count(*) AS n "
        f"FROM {metric.source(frame)} WHERE {between(frame, b0, w1)} "
        f"GROUP BY ALL ORDER BY ALL"
    )


def _table(rows: list[list[Any]], ratio: bool, dim: str) -> SliceTable:
    total = Cell()
    cells: dict[Any, Cell] = {}
    for value, in_window, num, den, n in rows:
        key = ((dim, value),)
        cell = cells.setdefault(key, Cell())
        for c in (cell, total):
            if in_window:
                c.rows_w += int(n)
                c.num_w += float(num or 0)
                c.den_w += float(den or 0)
            else:
                c.rows_b += int(n)
                c.num_b += float(num or 0)
                c.den_b += float(den or 0)
    return SliceTable(
        ratio=ratio, total=total, cells={k: v for k, v in cells.items() if k[0][1] is not None}
    )


class _Turns:
    def __init__(self, task: Task) -> None:
        self.question = task.meta.get("question") or {}
        self.frame = Frame.model_validate(self.question["frame"])
        self.metric = Metric.model_validate(self.question["metric"])
        self.step = 0
        self.name = NAME

    def _dims(self) -> list[str]:
        return self.frame.dims[:3]

    async def complete(
        self, messages: list[Message], tools: list[ToolSpec], sampling: Sampling
    ) -> Completion:
        if self.step == 0:  # look at the fact table first, as any agent would
            call = ToolCall(
                id="inv_describe",
                name="describe_table",
                arguments=json.dumps({"name": self.frame.fact}),
            )
            reply = Message(role="assistant", content="Reading the table.", tool_calls=[call])
        elif self.step == 1:
            calls = [
                ToolCall(
                    id=f"inv_{i}",
                    name=RUN_SQL,
                    arguments=json.dumps(
                        {
                            "sql": breakdown_sql(self.frame, self.metric, d, self.question),
                            "max_rows": 200,
                        }
                    ),
                )
                for i, d in enumerate(self._dims())
            ]
            reply = Message(role="assistant", content="Breaking the metric down.", tool_calls=calls)
        else:
            reply = self._conclude(messages)
        self.step += 1
        usage = Usage(
            prompt_tokens=sum(message_tokens(m) for m in messages),
            completion_tokens=message_tokens(reply),
        )
        return Completion(message=reply, usage=usage, finish_reason="stop")

    def _conclude(self, messages: list[Message]) -> Message:
        ratio = self.metric.den(self.frame) is not None
        best: tuple[Explained, str, SliceTable] | None = None
        results = [m for m in messages if m.role == "tool" and m.name == RUN_SQL]
        for dim, msg in zip(self._dims(), results[-len(self._dims()) :], strict=False):
            try:
                rows = json.loads(msg.content)["rows"]
            except (ValueError, KeyError, TypeError):
                continue
            if len(rows) > 2 * MAX_VALUES:
                continue
            table = _table(rows, ratio, dim)
            ranked = table.explain()
            if ranked and (best is None or ranked[0].score > best[0].score):
                sql = breakdown_sql(self.frame, self.metric, dim, self.question)
                best = (ranked[0], sql, table)
        answer: dict[str, Any]
        if best is None or best[0].explained < MIN_EXPLAINED:
            sql = breakdown_sql(self.frame, self.metric, self.frame.dims[0], self.question)
            answer = {"kind": "conclusion", "cause_type": NORMAL, "evidence": [sql]}
        else:
            top, sql, table = best
            change = table.change(table.total) or 0.0
            before = table.value(table.total, "b") or 0.0
            cell = table.cells[top.key]
            answer = {
                "kind": "conclusion",
                "cause_type": "segment_shock",
                "predicate": [{"column": c, "op": "=", "value": v} for c, v in top.key],
                "window": list(self.question["window"]),
                "direction": "up" if change > 0 else "down",
                "magnitude": round(change / abs(before), 4) if before else None,
                "evidence": [{"sql": sql, "value": cell.num_w}],
                "prose": f"{top.label()} explains {top.explained:.0%} of the change.",
            }
        call = ToolCall(id="inv_submit", name=SUBMIT, arguments=json.dumps({"answer": answer}))
        return Message(role="assistant", tool_calls=[call])


class Investigator:
    """TaskAwareModel factory for the rule-based investigator test double."""

    name = NAME

    def for_task(self, task: Task, env: Environment) -> Model:
        return _Turns(task)
