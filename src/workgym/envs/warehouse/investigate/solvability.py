"""The solvability gate: admit a planted task only when an oracle explainer can find the plant.

The explainer ranks every one- and two-dimension slice of the planted copy by how much of the
metric's change it explains (`slices.SliceTable.explain`). A planted task is admitted only when

1. the planted slice ranks first,
2. its score is at least `RATIO` times the best slice unrelated to it (neither a sub- nor a
   super-slice), and
3. it explains at least `MIN_EXPLAINED` of the change.

The measured trap this guards against (docs/investigate.md): a delay planted on UA flights from
EWR was outranked by origin=EWR alone, because EWR had already shifted naturally that week; such a
task rewards whoever names EWR, so it is rejected and the builder plants again elsewhere.

A task with no plant is admitted only when no slice would pass that same test, so "normal
variation" is the answer an investigator can actually reach.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from workgym.envs.warehouse.investigate.slices import (
    Explained,
    SliceKey,
    SliceTable,
    canon,
    related,
)

RATIO = 2.0
MIN_EXPLAINED = 0.5
TOP_RECORDED = 5
NO_CHANGE = "the metric did not change"
TOO_SMALL = "the planted slice is too small to rank"
NO_RANKED = "no slice is large enough to rank"


class GateResult(BaseModel):
    admitted: bool
    reason: str
    rule: str = ""  # the reason without numbers or slices: rejections are counted by it
    change: float | None = None
    planted: Explained | None = None
    top: list[Explained] = Field(default_factory=list)


def dominates(ranked: list[Explained], best: Explained) -> tuple[bool, str]:
    """Whether `best` is the clear single explanation: its explained share and score margin."""
    if best.explained < MIN_EXPLAINED:
        return False, f"{best.label()} explains {best.explained:.0%} (< {MIN_EXPLAINED:.0%})"
    rival = next((r for r in ranked if not related(r.key, best.key)), None)
    if rival is not None and rival.score > 0 and best.score < RATIO * rival.score:
        return False, (
            f"{best.label()} scores {best.score:.3g}, under {RATIO:g}x the unrelated "
            f"{rival.label()} ({rival.score:.3g})"
        )
    return True, f"{best.label()} explains {best.explained:.0%}"


def dominance_rule(best: Explained) -> str:
    """Which test of `dominates` failed for `best`, in words that do not vary."""
    if best.explained < MIN_EXPLAINED:
        return f"the slice explains under {MIN_EXPLAINED:.0%} of the change"
    return f"an unrelated slice scores more than 1/{RATIO:g} of the slice's score"


def admit_planted(table: SliceTable, planted: SliceKey) -> GateResult:
    """Gate for a planted task whose planted slice is `planted`."""
    ranked = table.explain()
    total = table.change(table.total)
    top = ranked[:TOP_RECORDED]
    if not ranked:
        why = NO_CHANGE if not total else NO_RANKED
        return GateResult(admitted=False, reason=why, rule=why, change=total)
    mine = next((r for r in ranked if r.key == canon(planted)), None)
    if mine is None:
        return GateResult(admitted=False, reason=TOO_SMALL, rule=TOO_SMALL, change=total, top=top)
    if ranked[0].key != mine.key:
        return GateResult(
            admitted=False,
            reason=f"the planted slice {mine.label()} is outranked by {ranked[0].label()}",
            rule="the planted slice is outranked by another slice",
            change=total,
            planted=mine,
            top=top,
        )
    ok, why = dominates(ranked, mine)
    rule = "" if ok else dominance_rule(mine)
    return GateResult(admitted=ok, reason=why, rule=rule, change=total, planted=mine, top=top)


def admit_null(table: SliceTable) -> GateResult:
    """Gate for a task with no plant: no slice may look like a single cause."""
    ranked = table.explain()
    total = table.change(table.total)
    top = ranked[:TOP_RECORDED]
    if not ranked:
        why = NO_CHANGE if not total else NO_RANKED
        return GateResult(admitted=False, reason=why, rule=why, change=total)
    ok, why = dominates(ranked, ranked[0])
    if ok:
        return GateResult(
            admitted=False,
            reason=f"looks like a single cause: {why}",
            rule="a slice looks like a single cause (no plant to explain it)",
            change=total,
            top=top,
        )
    why = f"no single slice dominates ({why})"
    return GateResult(admitted=True, reason=why, change=total, top=top)
