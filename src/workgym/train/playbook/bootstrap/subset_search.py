"""The gated search on dev: which worked examples go into the playbook.

Two searches, after DSPy's BootstrapFewShot family (facts, not code, carried over):

- `greedy`: forward selection. Each round scores the current set plus each remaining candidate on
  dev and keeps the best addition only if it passes the gate against the current set; it stops
  at the first round whose best addition fails, or at `max_examples`.
- `random`: like BootstrapFewShotWithRandomSearch, score the empty set, the first candidates in
  order, and `subsets` random subsets (sizes 1..max_examples, drawn from the run seed); the best
  scoring set is kept only if it passes the gate against the empty set.

The gate is gate B's rule: the mean paired per-task difference (`stats.paired_t_test`, as in gate
B) must exceed `se_multiple` paired standard errors and `min_gain`, and gate B's audit condition
(`gate.audit_check`) holds: the audit reward, in which flagged episodes earn nothing, must rise
too, so a set whose dev gain comes only from flagged episodes is refused. Sets rank by that audit
reward first, so a set lifted by flagged episodes does not take a round from a clean one
(decision 0150); then by reward, and ties go to fewer playbook tokens. Scores are per-task
mean rewards on the same dev tasks and seeds for every set, so two sets are compared pairwise.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Sequence
from statistics import fmean
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict

from workgym.stats.tests import paired_t_test
from workgym.train.playbook.bootstrap.bootstrap_config import BootstrapConfig
from workgym.train.playbook.bootstrap.examples import WorkedExample
from workgym.train.playbook.gate import audit_check


class Scores(NamedTuple):
    """One set's per-task mean rewards on dev, and the same with flagged episodes earning 0."""

    reward: Sequence[float]
    audit: Sequence[float]


Score = Callable[[tuple[WorkedExample, ...]], Awaitable[Scores]]
Fits = Callable[[tuple[WorkedExample, ...]], bool]


def _always(_: tuple[WorkedExample, ...]) -> bool:
    return True


class Step(BaseModel):
    """One scored set of examples and its gate against the set it was compared with."""

    model_config = ConfigDict(frozen=True)

    round: int
    examples: tuple[str, ...]  # episode refs of the examples in the set
    reward: float
    tokens: int  # playbook tokens of the examples
    diff: float = 0.0
    se: float = 0.0
    audit_diff: float = 0.0
    audit_flagged: bool = False  # the reward rose, the audit reward did not: refused
    passed: bool | None = None  # None: scored, not gated (a random subset that was not best)


class Chosen(BaseModel):
    model_config = ConfigDict(frozen=True)

    examples: tuple[WorkedExample, ...]
    reward: float
    baseline: float
    steps: tuple[Step, ...]


class Gated(NamedTuple):
    diff: float
    se: float
    audit_diff: float
    audit_flagged: bool
    passed: bool


def gate(candidate: Scores, current: Scores, cfg: BootstrapConfig) -> Gated:
    """Gate B's rule with the search's margins (`se_multiple`, `min_gain`) and its audit check."""
    test = paired_t_test(candidate.reward, current.reward, alternative="two-sided")
    diff, se = test.diff, test.se
    rose = diff > cfg.min_gain and diff > cfg.se_multiple * se + 1e-12
    audit_diff, flagged = audit_check(rose, candidate.audit, current.audit)
    return Gated(diff, se, audit_diff, flagged, rose and not flagged)


def _tokens(examples: Sequence[WorkedExample]) -> int:
    return sum(e.tokens for e in examples)


async def greedy(
    candidates: Sequence[WorkedExample], score: Score, cfg: BootstrapConfig, fits: Fits = _always
) -> Chosen:
    """Forward selection; `fits` says whether a set stays within the playbook's token budget."""
    current: tuple[WorkedExample, ...] = ()
    cur_scores = await score(current)
    baseline = fmean(cur_scores.reward)
    steps = [Step(round=0, examples=(), reward=baseline, tokens=0)]
    left = list(candidates)
    for rnd in range(1, cfg.max_examples + 1):
        left = [c for c in left if fits((*current, c))]
        if not left:
            break
        scored = []
        for cand in left:
            s = await score((*current, cand))
            scored.append((fmean(s.reward), -cand.tokens, cand, s))
        best = max(scored, key=_rank)
        _, _, cand, s = best
        g = gate(s, cur_scores, cfg)
        for reward, _, c, _ in scored:
            if c is not cand:
                steps.append(
                    Step(
                        round=rnd,
                        examples=tuple(e.episode for e in (*current, c)),
                        reward=reward,
                        tokens=_tokens((*current, c)),
                    )
                )
        steps.append(_gated(rnd, (*current, cand), fmean(s.reward), g))
        if not g.passed:
            break
        current, cur_scores = (*current, cand), s
        left.remove(cand)
    reward = fmean(cur_scores.reward)
    return Chosen(examples=current, reward=reward, baseline=baseline, steps=tuple(steps))


def _rank(x: tuple[float, int, WorkedExample, Scores]) -> tuple[float, float, int]:
    return fmean(x[3].audit), x[0], x[1]


def _gated(rnd: int, examples: tuple[WorkedExample, ...], reward: float, g: Gated) -> Step:
    return Step(
        round=rnd,
        examples=tuple(e.episode for e in examples),
        reward=reward,
        tokens=_tokens(examples),
        diff=g.diff,
        se=g.se,
        audit_diff=g.audit_diff,
        audit_flagged=g.audit_flagged,
        passed=g.passed,
    )


async def random_subsets(
    candidates: Sequence[WorkedExample], score: Score, cfg: BootstrapConfig, fits: Fits = _always
) -> Chosen:
    """Random search over subsets; sets over the token budget (`fits`) are not scored."""
    rng = random.Random(f"{cfg.seed}|bootstrap-subsets")
    top = min(cfg.max_examples, len(candidates))
    sets: list[tuple[WorkedExample, ...]] = []
    if top:
        sets.append(tuple(candidates[:top]))
        for _ in range(cfg.subsets):
            size = rng.randint(1, top)
            picked = sorted(rng.sample(range(len(candidates)), size))
            sets.append(tuple(candidates[i] for i in picked))
    unique = [x for x in dict.fromkeys(sets) if fits(x)]
    base_scores = await score(())
    baseline = fmean(base_scores.reward)
    steps = [Step(round=0, examples=(), reward=baseline, tokens=0)]
    scored = []
    for i, subset in enumerate(unique, 1):
        s = await score(subset)
        scored.append((fmean(s.reward), -_tokens(subset), i, subset, s))
    if not scored:
        return Chosen(examples=(), reward=baseline, baseline=baseline, steps=tuple(steps))
    best = max(scored, key=lambda x: (fmean(x[4].audit), x[0], x[1]))
    g = gate(best[4], base_scores, cfg)
    for reward, neg_tokens, i, subset, _ in scored:
        if i == best[2]:
            steps.append(_gated(i, subset, reward, g))
        else:
            steps.append(
                Step(
                    round=i,
                    examples=tuple(e.episode for e in subset),
                    reward=reward,
                    tokens=-neg_tokens,
                )
            )
    return Chosen(
        examples=best[3] if g.passed else (),
        reward=best[0] if g.passed else baseline,
        baseline=baseline,
        steps=tuple(steps),
    )


SEARCHES = {"greedy": greedy, "random": random_subsets}
