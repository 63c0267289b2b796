"""A pilot of the bootstrap learner with a real model, on train and dev only (issue 35).

    PYTHONPATH=src python bench/bootstrap_pilot.py --model llamacpp/qwen2.5-coder-0.5b \
        --env workgym/lookup --train-tasks 8 --samples 2 --max-candidates 4 --max-examples 2 \
        --max-tokens 48 --concurrency 4 --seed 0 --out runs/pilot/lookup-05b

What it answers: does `workgym train playbook --learner bootstrap` raise a real model's dev
reward at all, and how long does an episode take, so that a demo can be sized with
`workgym certify --plan` before anything looks at test. It never opens the test split (the
learner seals it).

1. States the budget before running: the episode cap (train tasks x samples, plus one episode
   per dev task, at temperature 0, for every set the greedy search may score: the empty set
   and up to max_examples rounds of max_candidates sets).
2. Runs the learner (`workgym.train.playbook.bootstrap.learner.bootstrap_playbook`), timed.
3. Prints: verified train successes over train episodes and the train tasks with at least one
   (the worked examples' source), the empty playbook's dev successes and the learned playbook's,
   each with its exact (Clopper-Pearson) 95% interval, the paired counts (dev tasks only the
   learned playbook solved, only the empty one solved), the seconds per episode actually run,
   and the `workgym certify --plan` command for the gain seen. The learned dev number is
   optimistic: dev also chose the examples.
4. With --train-check, a check the search never saw: the learned and the empty playbook on every
   train task at temperature 0 (`workgym eval --split train`, run directories under
   OUT/train-check/), counted on all of them and on the train tasks the learner never sampled.

Resumes: the same command reads the learner's episodes back (its --out). Asserts nothing.
Any agent works: llamacpp/ or hf/ built-in models run here; openai/<model> with --base-url.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import sys
import time
from pathlib import Path

from workgym.core.environment import Environment
from workgym.core.loading import load
from workgym.core.model import Model, Sampling
from workgym.core.run_limits import DEFAULT_RUN_LIMITS
from workgym.models import get_model
from workgym.run.options import EvalOptions
from workgym.run.policy import Policy
from workgym.run.runner import eval_async
from workgym.stats.proportions import clopper_pearson
from workgym.train.playbook.bootstrap.bootstrap_config import BootstrapConfig
from workgym.train.playbook.bootstrap.learner import BootstrapResult, bootstrap_playbook

sys.path.append(str(Path(__file__).resolve().parent))  # for _common when loaded by path
from _common import count_of


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--model", required=True, help="agent: llamacpp/..., hf/..., openai/<model>")
    p.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint (openai/ models)")
    p.add_argument("--api-key", default=None)
    p.add_argument("--env", default="workgym/lookup")
    p.add_argument("--out", required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--train-tasks", type=int, default=8)
    p.add_argument(
        "--dev-tasks",
        type=count_of("dev tasks", least=2),
        default=None,
        help="dev tasks scored (default: all)",
    )
    p.add_argument("--samples", type=int, default=2)
    p.add_argument("--temperature", type=float, default=0.7)
    p.add_argument("--max-candidates", type=int, default=4)
    p.add_argument("--max-examples", type=int, default=2)
    p.add_argument("--max-tokens", type=int, default=48)
    p.add_argument("--concurrency", type=int, default=4)
    p.add_argument(
        "--train-check", action="store_true", help="also run both playbooks on every train task"
    )
    return p.parse_args(argv)


def episodes_on_disk(out: Path) -> int:
    """Episodes the learner's run directories hold (run now or read back)."""
    return sum(
        sum(1 for line in f.read_text(encoding="utf-8").splitlines() if line.strip())
        for f in (out / "episodes").glob("*/episodes.jsonl")
    )


def rate(k: int, n: int) -> str:
    est = clopper_pearson(k, n)
    return f"{k}/{n} = {k / n:.2f} [{est.lower:.2f}, {est.upper:.2f}]"


def report(res: BootstrapResult, wall: float, ran: int) -> dict[str, object]:
    base = [round(x) for x in res.baseline.task_means]  # one dev episode a task (dev_k=1)
    learned = [round(x) for x in res.learned.task_means]
    n = len(base)
    only_learned = sum(1 for b, c in zip(base, learned, strict=True) if c > b)
    only_base = sum(1 for b, c in zip(base, learned, strict=True) if b > c)
    source_tasks = len({ex.task_id for ex in res.candidates})
    gain = (sum(learned) - sum(base)) / n
    p0 = sum(base) / n
    lines = {
        f"train episodes (T={res.config.temperature:.1f})": str(res.episodes),
        "verified train successes": rate(res.verified, res.episodes) if res.episodes else "0/0",
        "train tasks with a usable example": f"{source_tasks}/{len(res.train_tasks)}",
        "refused by the lint": str(len(res.refused)),
        "too long": str(res.too_long),
        "sets scored on dev": str(len(res.steps)),
        "examples chosen": str(len(res.chosen)),
        "dev, empty playbook": rate(sum(base), n),
        "dev, learned (optimistic)": rate(sum(learned), n),
        "dev paired: only learned / only empty": f"{only_learned} / {only_base}",
        "dev tokens per task, empty -> learned": (
            f"{res.baseline.tokens_per_task:.0f} -> {res.learned.tokens_per_task:.0f}"
        ),
        "playbook tokens": str(res.learned.playbook_tokens),
        "episodes run here": str(ran),
        "wall": f"{wall:.0f} s",
        "seconds per episode": f"{wall / ran:.1f}" if ran else "n/a (all read back)",
    }
    for k, v in lines.items():
        print(f"{k:>40}: {v}")
    for step in res.steps:  # every set the search scored, the rejected ones too
        gate = "" if step.passed is None else f", gate {'passed' if step.passed else 'failed'}"
        print(
            f"  round {step.round}: {len(step.examples)} example(s), {step.tokens} tokens, "
            f"dev {round(step.reward * n)}/{n}{gate}"
        )
    for ex in res.candidates:
        print(f"  candidate from {ex.task_id}: {ex.text}")
    plan = (
        f"workgym certify {res.env_id} --plan --baseline-rate {max(p0, 0.01):.2f} "
        f"--target {max(gain, 0.05):.2f} --epochs 1"
    )
    print(f"\nplan the demo before any look at test:\n  {plan}")
    return {"lines": lines, "base": base, "learned": learned, "gain": gain, "plan": plan}


def train_check(
    env: Environment, agent: Model, res: BootstrapResult, args: argparse.Namespace
) -> dict[str, object]:
    """Both playbooks on every train task at temperature 0: the tasks the learner never sampled
    are a check the search did not choose on."""
    sampling = Sampling(temperature=0.0, max_tokens=args.max_tokens)
    learned_text = Path(res.playbook_path).read_text(encoding="utf-8") or None
    ok: dict[str, dict[str, bool]] = {}
    started = time.perf_counter()
    for arm, text in (("learned", learned_text), ("empty", None)):
        policy = Policy(agent, playbook=text, sampling=sampling, base_url=args.base_url)
        options = EvalOptions(  # what `workgym eval` runs by default, run limits included
            policy=policy,
            seed=args.seed,
            concurrency=args.concurrency,
            progress=False,
            run_limits=DEFAULT_RUN_LIMITS,
        )
        out = Path(args.out) / "train-check" / arm
        run = asyncio.run(eval_async(env, split="train", out=out, options=options))
        ok[arm] = {
            e.task_id: bool(e.verdict is not None and e.verdict.success) for e in run.episodes()
        }
    wall = time.perf_counter() - started
    sampled = set(res.train_tasks)
    print(f"\ntrain check, temperature 0 ({wall:.0f} s):")
    for label, ids in (
        ("every train task", sorted(ok["learned"])),
        ("train tasks the learner never sampled", sorted(set(ok["learned"]) - sampled)),
    ):
        kl, ke = sum(ok["learned"][i] for i in ids), sum(ok["empty"][i] for i in ids)
        only_l = sum(ok["learned"][i] and not ok["empty"][i] for i in ids)
        only_e = sum(ok["empty"][i] and not ok["learned"][i] for i in ids)
        print(
            f"{label:>40}: learned {rate(kl, len(ids))}, empty {rate(ke, len(ids))}, "
            f"only learned / only empty {only_l} / {only_e}"
        )
    return {"wall_s": wall, "ok": ok}


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    env = load(args.env)
    n_dev = len(env.taskset.split("dev"))
    if args.dev_tasks is not None:
        n_dev = min(args.dev_tasks, n_dev)
    n_train = min(args.train_tasks, len(env.taskset.split("train")))
    cfg = BootstrapConfig(
        seed=args.seed,
        temperature=args.temperature,
        samples=args.samples,
        train_tasks=args.train_tasks,
        dev_tasks=args.dev_tasks,
        max_candidates=args.max_candidates,
        max_examples=args.max_examples,
        max_tokens=args.max_tokens,
        concurrency=args.concurrency,
    )
    sets = 1 + args.max_examples * args.max_candidates
    cap = cfg.episode_cap(n_train, n_dev)
    cmd = " ".join(["python", "bench/bootstrap_pilot.py", *(argv or sys.argv[1:])])
    print(f"command: {cmd}")
    print(f"seed {args.seed}; machine: {platform.machine()}, {platform.python_version()}")
    print(
        f"budget, before running: at most {cap} episodes ({n_train} train tasks x "
        f"{args.samples} samples + {n_dev} dev tasks x at most {sets} sets, one episode each); "
        "the greedy search stops at the first round that fails its gate"
    )
    out = Path(args.out)
    before = episodes_on_disk(out)
    started = time.perf_counter()
    agent = get_model(args.model, base_url=args.base_url, api_key=args.api_key)
    res = bootstrap_playbook(env, agent, out=out, config=cfg)
    wall = time.perf_counter() - started
    ran = episodes_on_disk(out) - before
    summary = report(res, wall, ran)
    summary.update(command=cmd, seed=args.seed, wall_s=wall, episodes_run=ran, cap=cap)
    if args.train_check:
        summary["train_check"] = train_check(env, agent, res, args)
    (out / "pilot.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(f"\nplaybook: {res.playbook_path}\n{Path(res.playbook_path).read_text()[:1500]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
