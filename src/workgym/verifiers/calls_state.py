"""Final-state verification: the expected changes happened, and nothing else changed.

A state is `{table: {key: record}}` with JSON records. The verdict is a diff of the state before
and after the episode against a declared expectation, so a policy that reaches the goal but also
edits another record (collateral change) fails, and so does one that creates the right record
twice. Records the agent creates get ids it cannot be expected to guess, so created records are
matched by content (one-to-one), and an expected value may point at a created record's field
(`{"$created": ["refunds", 0, "id"]}`: a ticket that must reference the refund the agent made).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from workgym.verifiers.calls_normalise import Normaliser, exact_equal, matches

Record = dict[str, Any]
State = dict[str, dict[str, Record]]
REF = "$created"


class StateRules(BaseModel):
    """How an environment's state is compared, declared once per environment."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ignore: dict[str, list[str]] = Field(default_factory=dict)  # volatile fields per table
    normalisers: dict[str, dict[str, Normaliser]] = Field(default_factory=dict)

    def kind(self, table: str, field: str) -> Normaliser:
        return self.normalisers.get(table, {}).get(field, "exact")

    def ignored(self, table: str, field: str) -> bool:
        return field in self.ignore.get(table, ())


def _refs(value: Any) -> Iterator[tuple[str, int, str]]:
    if isinstance(value, dict) and set(value) == {REF}:
        table, index, field = value[REF]
        yield str(table), int(index), str(field)


class ExpectedState(BaseModel):
    """The changes a correct episode makes. All empty means: nothing may change."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    update: dict[str, dict[str, Record]] = Field(default_factory=dict)
    create: dict[str, list[Record]] = Field(default_factory=dict)
    delete: dict[str, list[str]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _refs_point_backwards(self) -> ExpectedState:
        order = [(t, i) for t, records in self.create.items() for i in range(len(records))]
        seen: set[tuple[str, int]] = set()
        for table, index in order:
            for value in self.create[table][index].values():
                for ref_table, ref_index, _ in _refs(value):
                    if (ref_table, ref_index) not in seen:
                        raise ValueError(
                            f"create[{table}][{index}] refers to {ref_table}[{ref_index}], which "
                            "is not an earlier created record; list referenced records first"
                        )
            seen.add((table, index))
        for table, records in self.update.items():
            for key, fields in records.items():
                if any(list(_refs(v)) for v in fields.values()):
                    raise ValueError(f"update[{table}][{key}]: $created refs are for create only")
        return self

    @property
    def empty(self) -> bool:
        return not (self.update or self.create or self.delete)


class StateDiff(BaseModel):
    """What changed between two states, volatile fields left out."""

    created: dict[str, dict[str, Record]] = Field(default_factory=dict)
    deleted: dict[str, list[str]] = Field(default_factory=dict)
    updated: dict[str, dict[str, dict[str, list[Any]]]] = Field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not (self.created or self.deleted or self.updated)

    def touched(self, table: str) -> bool:
        return table in self.created or table in self.deleted or table in self.updated

    def summary(self) -> dict[str, Any]:
        return {
            "created": {t: sorted(r) for t, r in self.created.items()},
            "deleted": self.deleted,
            "updated": {t: {k: sorted(f) for k, f in r.items()} for t, r in self.updated.items()},
        }


def diff_states(before: State, after: State, rules: StateRules | None = None) -> StateDiff:
    rules = rules or StateRules()
    diff = StateDiff()
    for table in sorted(set(before) | set(after)):
        old, new = before.get(table, {}), after.get(table, {})
        created = {k: new[k] for k in sorted(set(new) - set(old))}
        deleted = sorted(set(old) - set(new))
        updated: dict[str, dict[str, list[Any]]] = {}
        for key in sorted(set(old) & set(new)):
            fields = {}
            for name in sorted(set(old[key]) | set(new[key])):
                if rules.ignored(table, name):
                    continue
                a, b = old[key].get(name), new[key].get(name)
                if not exact_equal(a, b):
                    fields[name] = [a, b]
            if fields:
                updated[key] = fields
        if created:
            diff.created[table] = created
        if deleted:
            diff.deleted[table] = deleted
        if updated:
            diff.updated[table] = updated
    return diff


class StateCheck(BaseModel):
    ok: bool
    problems: list[str] = Field(default_factory=list)
    collateral: list[str] = Field(default_factory=list)
    diff: StateDiff
    bound: dict[str, str] = Field(default_factory=dict)  # "refunds[0]" -> created key


def check_state(
    before: State, after: State, expected: ExpectedState, rules: StateRules | None = None
) -> StateCheck:
    """Compare the final state with the expectation; anything else that changed is collateral."""
    rules = rules or StateRules()
    diff = diff_states(before, after, rules)
    problems: list[str] = []
    collateral: list[str] = []
    for table, records in expected.update.items():
        for key, fields in records.items():
            record = after.get(table, {}).get(key)
            if record is None:
                problems.append(f"{table}/{key} should exist after the episode but does not")
                continue
            for name, want in fields.items():
                if not matches(rules.kind(table, name), want, record.get(name)):
                    problems.append(f"{table}/{key}.{name} is {record.get(name)!r}, not {want!r}")
    for table, records in diff.updated.items():
        for key, fields in records.items():
            allowed = expected.update.get(table, {}).get(key, {})
            extra = sorted(set(fields) - set(allowed))
            if extra:
                collateral.append(f"{table}/{key}: {', '.join(extra)} changed unasked")
    for table in sorted(set(diff.deleted) | set(expected.delete)):
        got, want = set(diff.deleted.get(table, [])), set(expected.delete.get(table, []))
        if want - got:
            problems.append(f"{table}: {sorted(want - got)} should have been deleted")
        if got - want:
            collateral.append(f"{table}: {sorted(got - want)} deleted unasked")
    bound, create_problems = _match_created(after, diff, expected, rules)
    problems.extend(create_problems)
    for table, created in diff.created.items():
        if len(created) > len(expected.create.get(table, [])):
            extra_keys = sorted(set(created) - set(bound.values()))
            collateral.append(f"{table}: created {extra_keys} unasked")
    return StateCheck(
        ok=not problems and not collateral,
        problems=problems,
        collateral=collateral,
        diff=diff,
        bound=bound,
    )


def _match_created(
    after: State, diff: StateDiff, expected: ExpectedState, rules: StateRules
) -> tuple[dict[str, str], list[str]]:
    """One-to-one match of expected to created records (backtracking; the lists are short)."""
    slots = [(t, i) for t, records in expected.create.items() for i in range(len(records))]
    problems = []
    for table, records in expected.create.items():
        have = len(diff.created.get(table, {}))
        if have < len(records):
            problems.append(f"{table}: {len(records)} record(s) should be created, got {have}")
    if problems:
        return {}, problems
    binding: dict[tuple[str, int], str] = {}

    def value_of(want: Any) -> Any:
        for table, index, name in _refs(want):
            return after[table][binding[(table, index)]].get(name)
        return want

    def fits(table: str, index: int, key: str) -> bool:
        record = diff.created[table][key]
        return all(
            matches(rules.kind(table, name), value_of(want), record.get(name))
            for name, want in expected.create[table][index].items()
        )

    def solve(pos: int) -> bool:
        if pos == len(slots):
            return True
        table, index = slots[pos]
        used = {k for (t, _), k in binding.items() if t == table}
        for key in diff.created[table]:
            if key not in used and fits(table, index, key):
                binding[(table, index)] = key
                if solve(pos + 1):
                    return True
                del binding[(table, index)]
        return False

    if not solve(0):
        return {}, [
            "created records do not match what the task asks for: "
            + "; ".join(f"{t}: want {expected.create[t]}" for t in expected.create)
        ]
    return {f"{t}[{i}]": k for (t, i), k in binding.items()}, []
