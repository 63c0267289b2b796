"""What an environment of a given kind shows the probes, beyond `submit` (workgym.guards.hooks).

An environment tagged `sql_answer` implements `GoldResult` and one or both answer channels
(`RowsChannel`, `SqlChannel`), so result-set probes can build
near-miss answers from the gold result without knowing how the environment stores it or how the
agent submits it (rows through a tool, or SQL whose result is compared). These are protocols, not
base classes: the warehouse environment implements them where it defines its verifier.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from workgym.core.messages import Message
    from workgym.core.tasks import Task


class ResultSet(BaseModel):
    """A result set as the verifier's semantics see it (docs/warehouse.md, Verification)."""

    columns: list[str]
    rows: list[list[Any]] = Field(default_factory=list)
    ordered: bool = False  # the task declares an order; otherwise rows are a bag
    allow_extra_columns: bool = False  # the task accepts columns beyond the gold ones


@runtime_checkable
class GoldResult(Protocol):
    """Every `sql_answer` environment: the gold result with its declared semantics."""

    def gold_result(self, task: Task) -> ResultSet | None:
        """The gold result of `task`, with its declared order and column semantics; None for a
        task whose answer is not a result set (result-set probes skip it)."""
        ...


@runtime_checkable
class RowsChannel(Protocol):
    """An environment where the agent submits the result rows themselves."""

    def submit_result(self, task: Task, result: ResultSet) -> list[Message]:
        """Assistant turns that submit `result` as the answer."""
        ...


@runtime_checkable
class SqlChannel(Protocol):
    """An environment where the agent submits SQL whose result the verifier compares."""

    def gold_sql(self, task: Task) -> str:
        """The reference query (a single SELECT, no trailing semicolon)."""
        ...

    def submit_sql(self, task: Task, sql: str) -> list[Message]:
        """Assistant turns that submit `sql` as the answer."""
        ...


NOT_ATTACKABLE = (
    "declares sql_answer but cannot be attacked: implement gold_result() and submit_result() "
    "and/or gold_sql()/submit_sql() (workgym.guards.surfaces)"
)


@runtime_checkable
class StateAttacks(Protocol):
    """An environment whose tools change records (tags `state`/`tool_calls`): the exploits only
    it can build, as assistant turns played through the real tools, or None when the exploit
    has no meaning for the task. Each must make the verifier fail."""

    def attack_collateral(self, task: Task) -> list[Message] | None:
        """Reach the goal and also change a record the task is not about."""
        ...

    def attack_forbidden(self, task: Task) -> list[Message] | None:
        """Reach the goal through a tool (or endpoint) the task forbids."""
        ...

    def attack_out_of_order(self, task: Task) -> list[Message] | None:
        """Make dependent calls in the wrong order."""
        ...


@runtime_checkable
class ConclusionAnswers(Protocol):
    """An environment whose answer is a list of causes (tag `conclusion`), each a dict with at
    least `cause_type` and `evidence` (ids), and usually the component or slice it names."""

    def cause_vocabulary(self) -> dict[str, list[str]]:
        """Canonical cause types and their declared aliases."""
        ...

    def planted_causes(self, task: Task) -> list[dict[str, Any]]:
        """The planted causes of `task`, in the submission format; empty for a task that is
        not an investigation (probes skip it). Nothing planted is the "normal" cause."""
        ...

    def symptom_components(self, task: Task) -> list[str]:
        """Where the planted causes showed up downstream (the tempting wrong component)."""
        ...

    def submit_causes(
        self, task: Task, causes: Any, *, observe: bool = True, text: str = ""
    ) -> list[Message]:
        """Turns that (when `observe`) read the cited evidence, then submit `causes`."""
        ...
