"""The gated search on dev: which worked examples go into the playbook.

Two searches, after DSPy's BootstrapFewShot family (facts, not code, carried over):

- `greedy`: forward selection. Each round scores the current set plus each remaining candidate on
  dev and keeps the best addition only if it passes the gate against the current set; it stops
  at the first round whose best addition fails, or at `max_examples`.
- `random`: like BootstrapFewShotWithRandomSearch, score the empty set, the first candidates in
  order, and `subsets` random subsets (sizes 1..max_examples, drawn from the run seed); the best
  scoring set is kept only if it passes the gate against the empty set.

The gate is gate B's rule: the mean paired per-task difference must exceed `se_multiple` paired
standard errors and `min_gain`. Ties in score go to fewer playbook tokens. Scores are per-task
mean rewards on the same dev tasks and seeds for every set, so two sets are compared pairwise.
"""

from __future__ import annotations

import math
import random
from collections.abc import Awaitable, Callable, Sequence
from statistics import fmean, stdev

from pydantic import BaseModel, ConfigDict

from workgym.train.playbook.bootstrap.bootstrap_config import BootstrapConfig
from workgym.train.playbook.bootstrap.examples import WorkedExample

Score = Callable[[tuple[WorkedExample, ...]], Awaitable[Sequence[float]]]
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
    passed: bool | None = None  # None: scored, not gated (a random subset that was not best)


class Chosen(BaseModel):
    model_config = ConfigDict(frozen=True)

    examples: tuple[WorkedExample, ...]
    reward: float
    baseline: float
    steps: tuple[Step, ...]


def paired(candidate: Sequence[float], current: Sequence[float]) -> tuple[float, float]:
    """Mean paired difference and its standard error (0 with fewer than two tasks)."""
    diffs = [a - b for a, b in zip(candidate, current, strict=True)]
    se = stdev(diffs) / math.sqrt(len(diffs)) if len(diffs) > 1 else 0.0
    return fmean(diffs), se


def gate(diff: float, se: float, cfg: BootstrapConfig) -> bool:
    return diff > cfg.min_gain and diff > cfg.se_multiple * se + 1e-12


def _tokens(examples: Sequence[WorkedExample]) -> int:
    return sum(e.tokens for e in examples)


async def greedy(
    candidates: Sequence[WorkedExample], score: Score, cfg: BootstrapConfig, fits: Fits = _always
) -> Chosen:
    """Forward selection; `fits` says whether a set stays within the playbook's token budget."""
    current: tuple[WorkedExample, ...] = ()
    cur_scores = list(await score(current))
    baseline = fmean(cur_scores)
    steps = [Step(round=0, examples=(), reward=baseline, tokens=0)]
    left = list(candidates)
    for rnd in range(1, cfg.max_examples + 1):
        left = [c for c in left if fits((*current, c))]
        if not left:
            break
        scored = []
        for cand in left:
            s = list(await score((*current, cand)))
            scored.append((fmean(s), -cand.tokens, cand, s))
        best = max(scored, key=lambda x: (x[0], x[1]))
        _, _, cand, s = best
        diff, se = paired(s, cur_scores)
        ok = gate(diff, se, cfg)
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
        steps.append(
            Step(
                round=rnd,
                examples=tuple(e.episode for e in (*current, cand)),
                reward=fmean(s),
                tokens=_tokens((*current, cand)),
                diff=diff,
                se=se,
                passed=ok,
            )
        )
        if not ok:
            break
        current, cur_scores = (*current, cand), s
        left.remove(cand)
    return Chosen(examples=current, reward=fmean(cur_scores), baseline=baseline, steps=tuple(steps))


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
    base_scores = list(await score(()))
    baseline = fmean(base_scores)
    steps = [Step(round=0, examples=(), reward=baseline, tokens=0)]
    scored = []
    for i, subset in enumerate(unique, 1):
        s = list(await score(subset))
        scored.append((fmean(s), -_tokens(subset), i, subset, s))
    if not scored:
        return Chosen(examples=(), reward=baseline, baseline=baseline, steps=tuple(steps))
    best = max(scored, key=lambda x: (x[0], x[1]))
    diff, se = paired(best[4], base_scores)
    ok = gate(diff, se, cfg)
    for reward, neg_tokens, i, subset, _ in scored:
        is_best = i == best[2]
        steps.append(
            Step(
                round=i,
                examples=tuple(e.episode for e in subset),
                reward=reward,
                tokens=-neg_tokens,
                diff=diff if is_best else 0.0,
                se=se if is_best else 0.0,
                passed=ok if is_best else None,
            )
        )
    chosen = best[3] if ok else ()
    return Chosen(
        examples=chosen,
        reward=best[0] if ok else baseline,
        baseline=baseline,
        steps=tuple(steps),
    )


SEARCHES = {"greedy": greedy, "random": random_subsets}
