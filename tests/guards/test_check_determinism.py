"""`check`'s "verdicts are deterministic": the same decision on every scoring, whatever the
evidence says about how the verifier reached it (ops-api replays an episode read back from
disk, where the live scoring had the session's state)."""

from __future__ import annotations

import asyncio
from typing import Any

from workgym.core.episode import Episode
from workgym.core.verdict import Verdict
from workgym.guards.check import _unstable


class _Env:
    """Just what `_unstable` reads: the task set and `score_async`."""

    def __init__(self, scorings: list[Verdict]) -> None:
        self.taskset = {"t1": object()}
        self._scorings = iter(scorings)

    async def score_async(self, task: Any, episode: Episode) -> Verdict:
        return next(self._scorings)


def _unstable_of(live: Verdict, rescored: list[Verdict]) -> list[str]:
    episode = Episode(task_id="t1", family="f", split="dev", verdict=live)
    return asyncio.run(_unstable(_Env(rescored), [episode]))  # type: ignore[arg-type]


def test_evidence_of_how_a_replay_was_scored_is_not_instability() -> None:
    live = Verdict.correct(answer=3)
    replayed = Verdict.correct(answer=3, state_from="replay")
    assert _unstable_of(live, [replayed, replayed.model_copy()]) == []


def test_a_decision_that_changes_is_unstable() -> None:
    live = Verdict.correct(answer=3)
    assert _unstable_of(live, [Verdict.correct(answer=3), Verdict.wrong(answer=3)]) == ["t1"]
    assert _unstable_of(live, [Verdict.wrong(), Verdict.wrong()]) == ["t1"]


def test_rescorings_that_disagree_in_their_evidence_are_unstable() -> None:
    live = Verdict.correct()
    assert _unstable_of(live, [Verdict.correct(n=1), Verdict.correct(n=2)]) == ["t1"]
