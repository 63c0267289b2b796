"""Does GRPO through workgym actually learn? A from-scratch run on CPU, measured, not asserted.

The environment (`bench/letter-or-symbol`) asks, per task, for a reply that starts either with a
letter (prompt: "letter") or with anything else (prompt: "symbol"); the verifier reads the first
character of the reply. The model is the tiny random-weight Qwen2 from `workgym.train.tiny`
(~35k parameters, byte-level vocabulary of ~516 tokens) answering with one token. At random
about half the vocabulary starts with a letter, so the untrained model scores ~0.5 on both kinds
of task. A prompt-blind policy can at best score the larger kind's share of the tasks (printed
as "blind ceiling"); reward 1.0 on *both* kinds of held-out dev task means the model learned to
read the prompt. Everything goes through `train_grpo` (the `workgym train grpo` pipeline) with
the `rollout_func` adapter: real episodes, real verifier, TRL's GRPO update.

    .venv/bin/python bench/grpo_learns.py     # ~2 min on 2 idle CPU cores; longer when shared
    .venv/bin/python bench/grpo_learns.py --steps 30 --out /tmp/grpo-bench

It prints the mean reward of every step's 64 training episodes, then the dev-split reward of the
starting model and of the checkpoint (held-out task families, 8 samples each, temperature 1).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import workgym as wg
from workgym.core.environment import Environment, Limits
from workgym.core.model import Sampling
from workgym.core.tasks import SplitSpec, Task, TaskSet
from workgym.core.verdict import Verdict


def opening(text: str) -> str:
    head = text[:1]
    return "letter" if head.isascii() and head.isalpha() else "symbol"


class LetterOrSymbol(Environment):
    """Start the reply with a letter, or with anything else, as the one-word prompt says."""

    id = "bench/letter-or-symbol"
    version = "1"
    limits = Limits(max_turns=1)
    instructions = "Answer with one character."

    def tasks(self) -> TaskSet:
        tasks = [
            Task(family=f"f{i:02d}", prompt=kind, answer=kind)
            for i in range(40)
            for kind in (("letter", "symbol")[i % 2],)
        ]
        return TaskSet(tasks, SplitSpec(salt="letter-or-symbol", train=0.6, dev=0.2, test=0.2))

    def verify(self, task: Task, episode: Any) -> Verdict:
        got = opening(str(episode.answer or ""))
        return Verdict.correct(got=got) if got == task.answer else Verdict.wrong(got=got)


def dev_reward(env: Environment, model: str, out: Path) -> tuple[float, dict[str, float]]:
    options = wg.EvalOptions(
        progress=False, seed=123, sampling=Sampling(temperature=1.0, max_tokens=1)
    )
    run = asyncio.run(wg.eval_async(env, model, split="dev", epochs=8, out=out, options=options))
    by_kind: dict[str, list[float]] = {"letter": [], "symbol": []}
    for episode in run.episodes():
        by_kind[env.taskset[episode.task_id].answer].append(episode.reward)
    rewards = [r for values in by_kind.values() for r in values]
    return statistics.fmean(rewards), {k: statistics.fmean(v) for k, v in by_kind.items() if v}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--learning-rate", type=float, default=1e-2)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    import torch
    from transformers.utils import logging

    from workgym.train.tiny import build_tiny
    from workgym.train.trl.grpo import GRPOSettings, train_grpo

    logging.disable_progress_bar()
    logging.set_verbosity_error()
    torch.set_num_threads(2)
    root = args.out or Path(tempfile.mkdtemp(prefix="grpo-learns-"))
    model_dir = build_tiny(root / "tiny", seed=args.seed)
    env = LetterOrSymbol()
    train = env.taskset.split("train")
    kinds = {k: sum(t.answer == k for t in train) for k in ("letter", "symbol")}
    print(f"env {env.id}: {len(train)} train tasks {kinds}, dev {len(env.taskset.split('dev'))}")
    print(f"blind ceiling (train): {max(kinds.values()) / len(train):.3f}")
    print(f"model: {model_dir} (random weights)\n")
    settings = GRPOSettings(
        steps=args.steps, num_generations=8, prompts_per_step=8,
        learning_rate=args.learning_rate, max_new_tokens=1, max_completion_length=8,
        seed=args.seed,
    )  # fmt: skip
    started = time.perf_counter()
    result = train_grpo(env, f"hf/{model_dir}", root / "run", settings)
    seconds = time.perf_counter() - started
    curve = [s.mean_reward or 0.0 for s in result.curve]
    first, last = statistics.fmean(curve[:5]), statistics.fmean(curve[-5:])
    print(f"\ntrain reward: first 5 steps {first:.3f} -> last 5 steps {last:.3f}")
    print(f"training wall time: {seconds:.0f} s for {len(curve)} steps")
    before, before_kinds = dev_reward(env, f"hf/{model_dir}", root / "dev-before")
    after, after_kinds = dev_reward(env, f"hf/{result.checkpoint}", root / "dev-after")
    print(f"dev reward (held-out families): start {before:.3f} {before_kinds}")
    print(f"                                 trained {after:.3f} {after_kinds}")
    print(f"run directory: {root / 'run'}")


if __name__ == "__main__":
    main()
