"""Rollout speed of the real built-in model: `workgym eval` through `hf/` against raw batching.

    PYTHONPATH=src python bench/real_model.py --concurrency 1,8,32 --max-tokens 24 --max-turns 3

For each concurrency C it runs C toy-shop dev episodes of at most `--max-turns` turns through
`workgym.eval` (the `hf/` provider with its continuous-batching worker, greedy, `--max-tokens`
per turn) and reports completion tokens/s, seconds per episode, how many prefills the worker ran
and how many rows its decode steps held on average. Against it: raw `model.generate` of the
same model on the same cores, batch C, on the episodes' opening prompts, with exactly
`--max-tokens` new tokens per row. The provider's figure includes everything an episode does
(templates, tools, verifier); the ratio is the share of raw batched throughput `workgym eval`
reaches. Peak RSS is this process's. Numbers depend on the machine and on what else runs on it:
the script prints the load average and torch's thread count with them. Last, `--grpo-steps`
steps of `train_grpo` on workgym/lookup (8 episodes a step) report seconds per step.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

import workgym as wg
from workgym.core.environment import Limits
from workgym.core.model import Sampling
from workgym.envs.toy.env import ToyShop
from workgym.models.hf import HFModel


class ShortToyShop(ToyShop):
    """toy-shop with at most `--max-turns` turns an episode, so a bench run stays bounded."""

    id = "bench/toy-shop-short"
    limits = Limits(max_turns=3, max_total_tokens=20_000)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def raw_tokens_per_s(model: HFModel, prompts: list[list[int]], new_tokens: int) -> float:
    """`model.generate` on one left-padded batch of `prompts`, exactly `new_tokens` each."""
    import torch

    width = max(len(p) for p in prompts)
    pad = model.tokenizer.pad_token_id
    ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts])
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
    started = time.perf_counter()
    with torch.no_grad():
        model.model.generate(
            ids,
            attention_mask=mask,
            do_sample=False,
            max_new_tokens=new_tokens,
            min_new_tokens=new_tokens,
            pad_token_id=pad,
        )
    return len(prompts) * new_tokens / (time.perf_counter() - started)


def opening_prompts(model: HFModel, env: ToyShop, n: int) -> list[list[int]]:
    tasks = env.taskset.split("dev")
    out = []
    for i in range(n):
        task = tasks[i % len(tasks)]
        messages = wg.Policy(model).render(env, task)
        prompt = model.chat.prompt_ids(messages, env.toolkit(task).specs) + model.prefill_ids
        out.append(prompt)
    return out


def provider_run(model: HFModel, env: ToyShop, n: int, new_tokens: int) -> dict[str, Any]:
    generator: Any = model.generator
    generator.batches.clear()
    generator.steps.clear()
    tasks = env.taskset.split("dev")
    limit = min(n, len(tasks))
    out = Path(tempfile.mkdtemp(prefix="bench-real-")) / "run"
    started = time.perf_counter()
    run = wg.eval(env, model, split="dev", limit=limit, epochs=max(1, -(-n // limit)),
                  concurrency=n, out=out, progress=False,
                  sampling=Sampling(temperature=0.0, max_tokens=new_tokens))  # fmt: skip
    elapsed = time.perf_counter() - started
    episodes = list(run.episodes())
    tokens = sum(e.usage.completion_tokens for e in episodes)
    return {
        "episodes": len(episodes),
        "tokens": tokens,
        "elapsed": elapsed,
        "tok_s": tokens / elapsed,
        "s_per_episode": elapsed / max(len(episodes), 1),
        "turns": sum(e.turns for e in episodes),
        "success": sum(e.success for e in episodes),
        "batches": list(generator.batches),
        "steps": list(generator.steps),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", default="1,8,32")
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--max-turns", type=int, default=3)
    parser.add_argument("--grpo-steps", type=int, default=2, help="0 skips the GRPO timing")
    args = parser.parse_args()
    ShortToyShop.limits = Limits(max_turns=args.max_turns, max_total_tokens=20_000)
    import torch

    levels = [int(x) for x in args.concurrency.split(",")]
    started = time.perf_counter()
    model = HFModel("hf/smollm2-135m")
    print(f"load: {time.perf_counter() - started:.1f}s  torch threads {torch.get_num_threads()}  "
          f"cores {os.cpu_count()}  load avg {os.getloadavg()[0]:.1f}")  # fmt: skip
    env = ShortToyShop()
    asyncio.run(model.complete(*_warm(model, env), Sampling(max_tokens=2)))
    print(
        "concurrency  provider tok/s  raw tok/s  ratio  s/episode  episodes  turns  prefills  "
        "rows/step"
    )
    for c in levels:
        got = provider_run(model, env, c, args.max_tokens)
        raw = raw_tokens_per_s(model, opening_prompts(model, env, c), args.max_tokens)
        steps = got["steps"]
        shown = f"{len(got['batches']):8d}  {sum(steps) / max(len(steps), 1):9.1f}"
        print(f"{c:11d}  {got['tok_s']:13.1f}  {raw:9.1f}  {got['tok_s'] / raw:5.2f}  "
              f"{got['s_per_episode']:9.1f}  {got['episodes']:8d}  {got['turns']:5d}  {shown}  "
              f"load {os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
    print(f"peak RSS {peak_rss_mb():.0f} MB")
    if args.grpo_steps > 0:
        grpo_seconds_per_step(args.grpo_steps, args.max_tokens)
        print(f"peak RSS, GRPO included {peak_rss_mb():.0f} MB")


def grpo_seconds_per_step(steps: int, new_tokens: int) -> None:
    """`train_grpo` on workgym/lookup: 2 tasks x 4 samples a step, LoRA off, checkpointing on."""
    from workgym.envs.lookup.env import Lookup
    from workgym.train.trl.grpo import GRPOSettings, train_grpo

    settings = GRPOSettings(
        steps=steps, num_generations=4, prompts_per_step=2, micro_batch=2, learning_rate=2e-5,
        temperature=0.3, max_new_tokens=new_tokens, max_completion_length=1024, seed=0,
    )  # fmt: skip
    out = Path(tempfile.mkdtemp(prefix="bench-grpo-")) / "grpo"
    started = time.perf_counter()
    result = train_grpo(Lookup(), "hf/smollm2-135m", out, settings, echo=lambda _: None)
    elapsed = time.perf_counter() - started
    rewards = " ".join(f"{p.mean_reward:.2f}" for p in result.curve)
    print(f"GRPO: {steps} steps of 8 episodes in {elapsed:.0f} s, {elapsed / steps:.0f} s/step "
          f"(model load and checkpoint save included); mean reward by step {rewards}")  # fmt: skip


def _warm(model: HFModel, env: ToyShop) -> tuple[list[wg.Message], list[Any]]:
    task = env.taskset.split("dev")[0]
    return wg.Policy(model).render(env, task), env.toolkit(task).specs


if __name__ == "__main__":
    main()
