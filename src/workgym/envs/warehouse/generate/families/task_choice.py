"""Choosing a family's tasks: awkward variants first up to a share, then plain ones, within a
validation budget; what one family cannot fill is offered to the others.

Every draft goes through `validate.check`; rejections are counted by reason (without their
particulars) so the generation report says why a family came out small.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, Field
from rich.progress import Progress

from workgym.envs.warehouse.generate.families import FAMILIES, NAMES, Context, Draft
from workgym.envs.warehouse.generate.families.gold import Rejected
from workgym.envs.warehouse.generate.families.validate import Checked, Runner, check

AWKWARD_SHARE = 0.45  # of a family's tasks, where the family has awkward variants
TRIES_PER_TASK = 4  # validation budget per task of a family's quota
MIN_TRIES = 60


class FamilyReport(BaseModel):
    family: str
    name: str
    quota: int = 0
    drafts: int = 0
    tried: int = 0
    kept: int = 0
    awkward: int = 0
    rejected: dict[str, int] = Field(default_factory=dict)


def _reason(text: str) -> str:
    """A rejection reason without its particulars, for counting."""
    return re.sub(r"\d+", "N", text.split(":")[0])[:70]


def select_tasks(
    ctx: Context, runner: Runner, budget: int, bar: Progress | None
) -> tuple[list[Checked], list[FamilyReport]]:
    codes = list(FAMILIES)
    base, extra = divmod(budget, len(codes))
    quotas = {c: base + (1 if i < extra else 0) for i, c in enumerate(codes)}
    pools: dict[str, _Pool] = {}
    for code in codes:
        drafts = list(FAMILIES[code](ctx))
        if not drafts:
            ctx.skip(code, "the warehouse offers no candidates for this family")
        task = bar.add_task(f"{code} {NAMES[code]}", total=quotas[code]) if bar else None
        pools[code] = _Pool(code, drafts, quotas[code], runner, bar, task)
        pools[code].fill()
    short = budget - sum(len(p.kept) for p in pools.values())
    for pool in pools.values():  # give what some families could not use to the others
        if short <= 0:
            break
        got = pool.top_up(short)
        short -= got
    for pool in pools.values():
        if len(pool.kept) < pool.report.quota:
            ctx.skip(
                pool.code,
                f"warehouse too small for the quota: {len(pool.kept)} of {pool.report.quota} tasks",
            )
    chosen = [c for p in pools.values() for c in p.kept]
    return chosen, [p.report for p in pools.values()]


class _Pool:
    """One family's drafts and the validation of them, awkward variants first up to a share."""

    def __init__(
        self,
        code: str,
        drafts: list[Draft],
        quota: int,
        runner: Runner,
        bar: Progress | None,
        task: Any,
    ) -> None:
        self.code = code
        self.runner = runner
        self.awkward = iter([d for d in drafts if d.naive is not None])
        self.plain = iter([d for d in drafts if d.naive is None])
        has_awkward = any(d.naive is not None for d in drafts)
        self.awkward_target = math.ceil(quota * AWKWARD_SHARE) if has_awkward else 0
        self.kept: list[Checked] = []
        self.keys: set[str] = set()
        self.results: set[tuple[str, str]] = set()
        self.rejected: Counter[str] = Counter()
        self.budget = max(MIN_TRIES, TRIES_PER_TASK * quota)
        self.report = FamilyReport(family=code, name=NAMES[code], quota=quota, drafts=len(drafts))
        self.bar, self.task = bar, task

    def _take(self, source: Iterator[Draft], until: int) -> None:
        for draft in source:
            if len(self.kept) >= until or self.report.tried >= self.budget:
                return
            if draft.key in self.keys:
                self.rejected["duplicate question"] += 1
                continue
            self.keys.add(draft.key)
            self.report.tried += 1
            try:
                found = check(draft, self.runner)
            except Rejected as exc:
                self.rejected[_reason(exc.reason)] += 1
                continue
            ident = (found.draft.shape, found.result_hash)
            if ident in self.results:
                self.rejected["duplicate result"] += 1
                continue
            self.results.add(ident)
            self.kept.append(found)
            if self.bar is not None:
                self.bar.update(self.task, completed=len(self.kept))
            if len(self.kept) >= until:
                return

    def fill(self) -> None:
        quota = self.report.quota
        self._take(self.awkward, self.awkward_target)
        self._take(self.plain, quota)
        self._take(self.awkward, quota)
        self._sync()

    def top_up(self, more: int) -> int:
        before = len(self.kept)
        self.budget += TRIES_PER_TASK * more
        target = before + more
        self._take(self.plain, target)
        self._take(self.awkward, target)
        self._sync()
        return len(self.kept) - before

    def _sync(self) -> None:
        if self.bar is not None and len(self.kept) != self.report.quota:
            # a family that fell short, or took up another's share, ends at kept/kept with the
            # quota in its label, never at 38/40 or 42/40
            self.bar.update(
                self.task,
                total=len(self.kept),
                completed=len(self.kept),
                description=f"{self.code} {NAMES[self.code]} (quota {self.report.quota})",
            )
        self.report.kept = len(self.kept)
        self.report.awkward = sum(1 for c in self.kept if c.awkward)
        self.report.rejected = dict(self.rejected.most_common())
