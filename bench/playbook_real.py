"""The full playbook comparison against a real model, on any OpenAI-compatible endpoint.

    python bench/playbook_real.py --base-url http://127.0.0.1:8000/v1 --model qwen2.5-7b-instruct \
        [--reflector-model NAME] [--baseline-model NAME ...] [--env workgym/toy-shop] \
        [--budget-tokens 2000000] [--epochs 3] [--out runs/playbook-real]

1. Train a playbook (`workgym train playbook`): untrained baselines and checkpoints are scored on
   dev-select; the train split feeds the loop; the test split stays sealed.
2. Held out: every untrained baseline and the trained playbook run on the test split, K epochs
   each, with the same seeds and sampling.
3. Statistics (workgym.stats.tests): the paired gain of the playbook over the best untrained
   agent (chosen on dev, before the test split is opened) with its one-sided CI, p and the
   minimum detectable effect; and "matches the best untrained agent at X% of its tokens" as a
   non-inferiority test with a margin fixed in advance, amortised over training tokens, with the
   break-even number of tasks.

`--learner bootstrap` learns worked examples from the agent's own verified train successes
(`workgym train playbook --learner bootstrap`) instead of a reflector's lessons; the untrained
baselines are then scored on the whole dev split (`--dev-k` epochs, test sampling) to choose the
best one, and its training tokens are the learner's only.

Baselines: the agent itself, each --baseline-model, the agent under each --baseline-system-prompt
(a prompt someone wrote by hand, the thing a playbook competes with), and the agent sampled at
each --baseline-temperature (on dev and test alike; the other arms use the run's temperatures), and
self-consistency: K attempts and a majority vote for each --baseline-attempts K (their tokens are
every attempt's).
An hf/ model (`--model hf/smollm2-135m`) runs here, offline, with no endpoint.

Prints the numbers and writes comparison.json + comparison.png (test reward against tokens per
task, one point per arm); asserts nothing. Resumes: training resumes its --out/train folder, and
each held-out arm its run directory. Tests drive it against a local fake server only to check
its plumbing.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import re
import sys
from collections import defaultdict
from pathlib import Path
from statistics import fmean
from typing import Any, NamedTuple

from rich.console import Console
from rich.table import Table

import workgym.envs.toy_rules.env  # noqa: F401  (registers workgym/toy-rules)
from workgym.certify.comparison import gain_of
from workgym.core.environment import Environment
from workgym.core.loading import load
from workgym.core.model import Model, Sampling
from workgym.models import get_model
from workgym.run.options import EvalOptions
from workgym.run.policy import Agent, Policy, make_policy
from workgym.run.runner import eval_async
from workgym.swarm.policies import Attempts
from workgym.swarm.team import TeamPolicy
from workgym.train.playbook.api import resolve_reflector, train_playbook_async
from workgym.train.playbook.bootstrap.bootstrap_config import BootstrapConfig
from workgym.train.playbook.bootstrap.learner import bootstrap_playbook_async
from workgym.train.playbook.config import LEARNERS
from workgym.train.playbook.report import token_efficiency
from workgym.train.playbook.scoring import Baseline

sys.path.append(str(Path(__file__).resolve().parent))  # for _common when loaded by path
from _common import add_endpoint_args, add_training_args, count_of, openai_name, train_config


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    add_endpoint_args(p, whose="agent's")
    p.add_argument("--reflector-base-url", default=None, help="default: --base-url")
    p.add_argument(
        "--baseline-model",
        action="append",
        default=[],
        help="another untrained agent to compare with (repeatable)",
    )
    p.add_argument(
        "--baseline-system-prompt",
        action="append",
        default=[],
        help="the agent untrained with this system prompt, another baseline (repeatable)",
    )
    p.add_argument(
        "--baseline-temperature",
        action="append",
        type=float,
        default=[],
        help="the agent untrained, sampled at this temperature, another baseline (repeatable)",
    )
    p.add_argument(
        "--baseline-attempts",
        action="append",
        type=count_of("attempts", least=1),
        default=[],
        help="the agent untrained, K attempts and a majority vote (self-consistency at k = K, "
        "sampled at --attempts-temperature), another baseline (repeatable)",
    )
    p.add_argument("--attempts-temperature", type=float, default=0.7)
    p.add_argument(
        "--learner",
        choices=LEARNERS,
        default="reflect",
        help="reflect: a reflector's lessons; bootstrap: worked examples from verified successes",
    )
    p.add_argument("--train-tasks", type=int, default=16, help="bootstrap: train tasks sampled")
    p.add_argument("--samples", type=int, default=3, help="bootstrap: episodes per train task")
    p.add_argument("--max-candidates", type=int, default=8, help="bootstrap: examples to search")
    p.add_argument("--max-examples", type=int, default=4, help="bootstrap: examples kept at most")
    p.add_argument("--env", default="workgym/toy-shop", help="environment id or directory")
    p.add_argument("--out", type=Path, default=Path("runs/playbook-real"))
    p.add_argument("--epochs", type=int, default=3, help="K epochs per test task and arm")
    add_training_args(p, max_epochs=3, group_size=5, batch_size=8, dev_k=3, gate_tasks=8)
    p.add_argument("--train-temperature", type=float, default=0.7)
    p.add_argument("--test-temperature", type=float, default=0.0)
    p.add_argument("--max-tokens", type=int, default=None, help="per agent call")
    p.add_argument("--margin", type=float, default=0.05, help="non-inferiority margin")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--no-progress", action="store_true")
    return p.parse_args(argv)


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


async def held_out(
    env: Environment,
    arms: dict[str, Policy],
    args: argparse.Namespace,
    *,
    split: str = "test",
    epochs: int | None = None,
    seed: int | None = None,
) -> dict[str, dict[str, Any]]:
    """Each arm on a split (the test split unless told): per-task mean reward, tokens per task,
    in task order."""
    out: dict[str, dict[str, Any]] = {}
    for name, policy in arms.items():
        run = await eval_async(
            env,
            split=split,
            epochs=args.epochs if epochs is None else epochs,
            out=args.out / split / slug(name),
            options=EvalOptions(
                policy=policy,
                seed=args.seed + 1 if seed is None else seed,
                concurrency=args.concurrency,
                progress=not args.no_progress,
            ),
        )
        rewards: dict[str, list[float]] = defaultdict(list)
        tokens: list[int] = []
        families: dict[str, str] = {}
        for r in run.dir.records():
            rewards[r["task_id"]].append(float((r.get("verdict") or {}).get("reward", 0.0)))
            usage = r.get("usage") or {}
            tokens.append(usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0))
            families[r["task_id"]] = r["family"]
        ids = sorted(rewards)
        out[name] = {
            "tasks": ids,
            "families": [families[t] for t in ids],
            "scores": [fmean(rewards[t]) for t in ids],
            "tokens_per_task": fmean(tokens) if tokens else 0.0,
            "episodes": len(tokens),
            "run": str(run.path),
        }
    return out


class Learned(NamedTuple):
    """What a learner produced, in the terms the comparison needs (a NamedTuple: this script is
    also loaded by path, where a dataclass cannot resolve its module)."""

    playbook: str  # rendered; "" when nothing was learned
    playbook_hash: str
    training_tokens: int
    best_dev: str  # the untrained arm that scored best on dev (fewer tokens breaks a tie)
    summary: dict[str, Any]


def attempts_per_task(policy: Policy) -> int:
    """A team of K attempts plays K times a task; any other policy once (a budget line only)."""
    if isinstance(policy, TeamPolicy) and isinstance(policy.team, Attempts):
        return policy.team.n
    return 1


def best_on_dev(dev: list[dict[str, Any]]) -> str:
    return str(max(dev, key=lambda b: (b["reward"], -b["tokens_per_task"]))["name"])


async def learn_reflect(
    env: Environment,
    agent: Agent,
    reflector: Model,
    baselines: list[Baseline],
    args: argparse.Namespace,
    console: Console,
) -> Learned:
    """The reflective learner; it scores the baselines on dev-select itself (step 0)."""
    cfg = train_config(args, temperature=args.train_temperature, ni_margin=args.margin)
    console.rule(f"1. train a playbook for {agent.name} on {env.id}")
    result = await train_playbook_async(
        env, agent, out=args.out / "train", reflector=reflector, config=cfg, baselines=baselines
    )
    console.print(
        f"stopped ({result.stop_reason}) after {result.iterations} iterations; "
        f"{len(result.accepted)} deltas accepted; training tokens "
        f"{result.ledger.training_tokens:,}; playbook: {result.playbook_path}"
    )
    return Learned(
        playbook=result.playbook.render(),
        playbook_hash=result.playbook.hash,
        training_tokens=result.ledger.training_tokens,
        best_dev=best_on_dev(result.report["baselines"]),
        summary={
            "out": str(result.out),
            "stop_reason": result.stop_reason,
            "iterations": result.iterations,
            "accepted": result.accepted,
            "training_tokens": result.ledger.training_tokens,
            "playbook": str(result.playbook_path),
        },
    )


async def learn_bootstrap(
    env: Environment,
    agent: Model,
    arms: dict[str, Policy],
    args: argparse.Namespace,
    console: Console,
) -> Learned:
    """The bootstrap learner, then every untrained arm on the whole dev split to choose the best
    one. The plain agent is scored here again (the learner scored the empty playbook with its own
    seeds, on `--dev-tasks` at most), so that every arm is chosen on the same tasks and seeds."""
    cfg = BootstrapConfig(
        seed=args.seed,
        temperature=args.train_temperature,
        samples=args.samples,
        train_tasks=args.train_tasks,
        max_candidates=args.max_candidates,
        max_examples=args.max_examples,
        dev_temperature=args.test_temperature,
        dev_k=args.dev_k,
        max_tokens=args.max_tokens,
        budget_tokens=args.budget_tokens,
        concurrency=args.concurrency,
    )
    n_train, n_dev = len(env.taskset.split("train")), len(env.taskset.split("dev"))
    n_test = len(env.taskset.split("test"))
    per_dev = sum(attempts_per_task(p) for p in arms.values())
    console.rule(f"1. bootstrap a playbook for {agent.name} on {env.id}")
    console.print(
        f"budget, stated before the run: at most {cfg.episode_cap(n_train, n_dev)} learner "
        f"episodes; {n_dev * args.dev_k * per_dev} dev attempts for the {len(arms)} untrained "
        f"arms; {n_test * args.epochs * (per_dev + 1)} test attempts",
        highlight=False,
    )
    result = await bootstrap_playbook_async(env, agent, out=args.out / "train", config=cfg)
    playbook = Path(result.playbook_path).read_text(encoding="utf-8")
    console.print(
        f"{result.verified} of {result.episodes} train episodes verified; "
        f"{len(result.chosen)} worked examples chosen; dev {result.baseline.reward:.3f} -> "
        f"{result.learned.reward:.3f} (optimistic: dev chose it); training tokens "
        f"{result.training_tokens:,}; playbook: {result.playbook_path}"
    )
    console.rule("1b. every untrained arm on the dev split, to choose the best one")
    dev = await held_out(env, arms, args, split="dev", epochs=args.dev_k, seed=args.seed)
    rows = [
        {"name": n, "reward": fmean(s["scores"]), "tokens_per_task": s["tokens_per_task"]}
        for n, s in dev.items()
    ]
    for row in rows:
        console.print(
            f"  dev {row['reward']:.3f}  {row['tokens_per_task']:7.0f} tokens/task  {row['name']}",
            highlight=False,
        )
    return Learned(
        playbook=playbook,
        playbook_hash=hashlib.sha256(playbook.encode()).hexdigest(),
        training_tokens=result.training_tokens,
        best_dev=best_on_dev(rows),
        summary={
            "out": str(args.out / "train"),
            "episodes": result.episodes,
            "verified": result.verified,
            "chosen": len(result.chosen),
            "dev_empty": result.baseline.reward,
            "dev_learned": result.learned.reward,
            "training_tokens": result.training_tokens,
            "playbook": result.playbook_path,
            "dev_baselines": rows,
        },
    )


async def run(args: argparse.Namespace, console: Console) -> dict[str, Any]:
    env = load(args.env)
    agent = get_model(openai_name(args.model), base_url=args.base_url, api_key=args.api_key)
    reflector: Model = resolve_reflector(
        openai_name(args.reflector_model or args.model),
        base_url=args.reflector_base_url or args.base_url,
        api_key=args.api_key,
    )
    others = [
        get_model(openai_name(b), base_url=args.base_url, api_key=args.api_key)
        for b in args.baseline_model
    ]
    baselines = [Baseline(f"untrained {m.name}", m) for m in [agent, *others]]
    baselines += [
        Baseline(f"untrained {agent.name} + prompt {i}", agent, system_prompt=text)
        for i, text in enumerate(args.baseline_system_prompt, 1)
    ]
    baselines += [
        Baseline(f"untrained {agent.name} at temperature {t:g}", agent, temperature=t)
        for t in args.baseline_temperature
    ]
    baselines += [
        Baseline(
            f"untrained {agent.name}, {k} attempts + vote at T={args.attempts_temperature:g}",
            Attempts(agent, n=k, select="vote"),
            temperature=args.attempts_temperature,
        )
        for k in args.baseline_attempts
    ]
    sampling = Sampling(temperature=args.test_temperature, max_tokens=args.max_tokens)
    arms = {
        b.name: make_policy(b.model, system_prompt=b.system_prompt, sampling=b.sampling(sampling))
        for b in baselines
    }
    if args.learner == "bootstrap":
        if not isinstance(agent, Model):
            raise SystemExit(f"--learner bootstrap needs a model; {agent.name} is not one")
        learned = await learn_bootstrap(env, agent, arms, args, console)
    else:
        learned = await learn_reflect(env, agent, reflector, baselines, args, console)
    best_dev = learned.best_dev
    trained = f"trained playbook ({learned.playbook_hash[:12]})"
    arms[trained] = Policy(agent, playbook=learned.playbook or None, sampling=sampling)
    console.rule("2. held-out: every arm on the test split, same seeds")
    scores = await held_out(env, arms, args)
    cand, base = scores[trained], scores[best_dev]
    if cand["tasks"] != base["tasks"] or len(cand["tasks"]) < 2:
        raise SystemExit("the arms did not finish the same test tasks (need 2+); re-run to resume")
    clustered = len(set(cand["families"])) >= 2
    # the certificate's own gain test: declared estimand, exact tests, score interval
    gain = gain_of(cand["scores"], base["scores"], cand["families"], args.epochs)
    diffs = [c - b for c, b in zip(cand["scores"], base["scores"], strict=True)]
    eff = token_efficiency(
        candidate=trained,
        baseline=best_dev,
        candidate_scores=cand["scores"],
        baseline_scores=base["scores"],
        candidate_tpt=cand["tokens_per_task"],
        baseline_tpt=base["tokens_per_task"],
        training_tokens=learned.training_tokens,
        margin=args.margin,
        where="held-out test split",
        clusters=cand["families"] if clustered else None,
    )
    table = Table("arm", "test reward", "tokens/task", title=f"{env.id}: held-out test split")
    for name, s in scores.items():
        table.add_row(name, f"{fmean(s['scores']):.3f}", f"{s['tokens_per_task']:.0f}")
    console.rule("3. statistics")
    console.print(table)
    lo = "-inf" if gain.lower is None else f"{gain.lower:+.3f}"
    mde = "none reachable" if gain.mde is None else f"{gain.mde:.3f}"
    if not any(diffs):  # the t statistic is 0/0; say what happened instead of printing p=nan
        said = (
            f"gain over {best_dev} (best untrained on dev): none; the two arms scored the same "
            f"on every one of the {gain.n_items} test tasks, so there is no difference to test"
        )
    else:
        said = (
            f"gain over {best_dev} (best untrained on dev): {gain.diff:+.3f}, one-sided 95% CI "
            f"[{lo}, +inf), p={gain.p_value or 1.0:.4f}, n={gain.n_items} tasks ({gain.estimand}, "
            f"{gain.method}); minimum detectable effect {mde}"
            + ("  [underpowered]" if gain.underpowered else "")
        )
    console.print(said, highlight=False)
    reverse = None
    if gain.diff < 0:  # the same test the other way: is the untrained arm better?
        reverse = gain_of(base["scores"], cand["scores"], cand["families"], args.epochs)
        rlo = "-inf" if reverse.lower is None else f"{reverse.lower:+.3f}"
        console.print(
            f"{best_dev} over the trained arm: {reverse.diff:+.3f}, one-sided 95% CI "
            f"[{rlo}, +inf), p={reverse.p_value or 1.0:.4g}, n={reverse.n_items} tasks "
            f"({reverse.method})",
            highlight=False,
        )
    console.print(f"token-matched: {eff.statement}", highlight=False)
    summary = {
        "env": env.id,
        "model": agent.name,
        "learner": args.learner,
        "reflector": reflector.name if args.learner == "reflect" else None,
        "train": learned.summary,
        "best_untrained_on_dev": best_dev,
        "held_out": scores,
        "gain": {
            "diff": gain.diff,
            "lower": gain.lower,
            "p_value": gain.p_value,
            "n": gain.n_items,
            "method": gain.method,
            "estimand": gain.estimand,
            "mde": gain.mde,
        },
        "reverse_gain": None
        if reverse is None
        else {
            "diff": reverse.diff,
            "lower": reverse.lower,
            "p_value": reverse.p_value,
            "n": reverse.n_items,
            "method": reverse.method,
        },
        "token_efficiency": eff.model_dump(mode="json"),
    }
    path = args.out / "comparison.json"
    path.write_text(json.dumps(summary, indent=2, default=str) + "\n")
    plot(scores, best_dev, trained, args.out / "comparison.png")
    console.print(f"written: {path}, {args.out / 'comparison.png'}")
    return summary


def plot(scores: dict[str, dict[str, Any]], best: str, trained: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4))
    for name, s in scores.items():
        marker = "*" if name == trained else ("s" if name == best else "o")
        ax.scatter(s["tokens_per_task"], fmean(s["scores"]), marker=marker, s=80, label=name)
    ax.set_xlabel("tokens per test task (prompt + completion)")
    ax.set_ylabel("mean test reward")
    ax.set_title("held-out test split: reward against cost")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    asyncio.run(run(args, Console()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
