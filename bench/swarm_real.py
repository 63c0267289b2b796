"""The full swarm-vs-single study against a real model, on any OpenAI-compatible endpoint.

    python bench/swarm_real.py --base-url http://127.0.0.1:8000/v1 --model qwen2.5-7b-instruct \
        [--swarm attempts|roles] [--n 5] [--select vote|judge] [--env workgym/toy-shop] \
        [--split test] [--epochs 1] [--ks 2,4] [--no-train] [--out runs/swarm-real] \
        [--learner reflect|bootstrap] [--attempts-temperature 0.7]

The question (shared/design/PLAYBOOK.md, Swarms): does a trained swarm beat the untrained swarm,
and does it beat one trained agent once its cost is counted?

1. Train (unless --no-train) one playbook for the single agent and one for the swarm with the
   same learner and settings: train split, dev selects, test sealed. `--learner reflect` (a
   reflector's lessons, a section per role for a role swarm) or `--learner bootstrap` (worked
   examples from each one's own verified train successes, in a section every member reads).
2. Held out (--split, default test), K epochs, same seeds for every arm: the single agent, the
   single agent as self-consistency with k attempts (--ks: the baseline's cost line), the swarm,
   and the single agent given the swarm's measured budget per task plus one attempt's cost
   (Attempts with budget_tokens=B, vote: the line's point at or above the swarm's cost, so the
   matched-cost comparison can interpolate) — untrained, and trained when trained. The voting
   arms sample at --attempts-temperature (default: --temperature), since votes over greedy
   replies are one reply paid k times.
3. `workgym compare` on each question: reward at matched cost and cost at matched reward with
   paired 95% CIs, printed, with compare.json and compare.png per question, and
   swarm_study.json with the answers.

Prints numbers; asserts nothing. Without a model endpoint it cannot run (a test drives it against
a local fake HTTP server only to check its plumbing; those numbers are not results).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
from pathlib import Path
from statistics import fmean
from typing import Any

from rich.console import Console

import workgym.envs.toy_rules.env  # noqa: F401  (registers workgym/toy-rules)
from workgym.apps.cli.swarm import render
from workgym.core.environment import Environment
from workgym.core.loading import load
from workgym.core.model import Model, Sampling
from workgym.models import get_model
from workgym.run.options import EvalOptions
from workgym.run.policy import Policy
from workgym.run.runner import Run, eval_async
from workgym.stats.proportions import clopper_pearson
from workgym.swarm import Attempts, Roles, Team
from workgym.swarm.compare import Comparison, compare
from workgym.swarm.frontier import frontier_png
from workgym.train.playbook.api import resolve_reflector, train_playbook_async
from workgym.train.playbook.bootstrap.bootstrap_config import BootstrapConfig
from workgym.train.playbook.bootstrap.learner import bootstrap_playbook_async
from workgym.train.playbook.config import LEARNERS
from workgym.train.playbook.entries import DEFAULT_SECTIONS

sys.path.append(str(Path(__file__).resolve().parent))  # for _common when loaded by path
from _common import add_endpoint_args, add_training_args, openai_name, train_config


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    add_endpoint_args(p, whose="agents'")
    p.add_argument("--env", default="workgym/toy-shop", help="environment id or directory")
    p.add_argument("--swarm", choices=("attempts", "roles"), default="attempts")
    p.add_argument("--n", type=int, default=5, help="attempts of an attempts swarm")
    p.add_argument("--select", choices=("vote", "judge"), default="vote")
    p.add_argument("--split", default="test", help="held-out split the arms are compared on")
    p.add_argument("--limit", type=int, default=None, help="first N tasks of that split")
    p.add_argument("--epochs", type=int, default=1, help="K epochs per task and arm")
    p.add_argument("--ks", default="2,4", help="self-consistency sizes for the baseline line")
    p.add_argument("--max-attempts", type=int, default=32, help="cap of the budget baseline")
    p.add_argument("--temperature", type=float, default=0.7, help="every agent's sampling")
    p.add_argument(
        "--attempts-temperature",
        type=float,
        default=None,
        help="the voting arms' sampling (self-consistency, the budget arm); default --temperature",
    )
    p.add_argument("--max-tokens", type=int, default=None, help="per model call")
    p.add_argument("--no-train", action="store_true", help="compare untrained agents only")
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
    p.add_argument(
        "--train-temperature", type=float, default=0.7, help="bootstrap: sampling on train tasks"
    )
    add_training_args(p, max_epochs=2, group_size=4, batch_size=6, dev_k=2, gate_tasks=6)
    p.add_argument("--tolerance", type=float, default=0.10, help="matched-cost tolerance")
    p.add_argument("--margin", type=float, default=0.05, help="matched-reward margin")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--out", type=Path, default=Path("runs/swarm-real"))
    p.add_argument("--no-progress", action="store_true")
    return p.parse_args(argv)


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.@+-]+", "_", text)


def make_team(agent: Model, args: argparse.Namespace) -> Team:
    if args.swarm == "roles":
        return Roles(agent)
    judge = agent if args.select == "judge" else None
    return Attempts(agent, n=args.n, select=args.select, judge_model=judge)


async def train(
    env: Environment,
    who: Model | Team,
    out: Path,
    reflector: Model | None,
    sections: tuple[str, ...],
    args: argparse.Namespace,
    console: Console,
) -> str | None:
    if reflector is None:  # --learner bootstrap
        return await bootstrap(env, who, out, args, console)
    cfg = train_config(args, temperature=args.temperature, sections=sections)
    result = await train_playbook_async(env, who, out=out, reflector=reflector, config=cfg)
    console.print(
        f"{who.name}: stopped ({result.stop_reason}) after {result.iterations} iterations, "
        f"{len(result.accepted)} deltas accepted, {result.ledger.training_tokens:,} training "
        f"tokens; playbook {result.playbook_path}",
        highlight=False,
    )
    return result.playbook.render() or None


async def bootstrap(
    env: Environment, who: Model | Team, out: Path, args: argparse.Namespace, console: Console
) -> str | None:
    """The bootstrap learner with one config for every arm it trains: train at
    --train-temperature, the dev search at --temperature (the held-out arms' sampling)."""
    cfg = BootstrapConfig(
        seed=args.seed,
        temperature=args.train_temperature,
        samples=args.samples,
        train_tasks=args.train_tasks,
        max_candidates=args.max_candidates,
        max_examples=args.max_examples,
        dev_temperature=args.temperature,
        dev_k=args.dev_k,
        max_tokens=args.max_tokens,
        budget_tokens=args.budget_tokens,
        concurrency=args.concurrency,
    )
    n_train, n_dev = len(env.taskset.split("train")), len(env.taskset.split("dev"))
    console.print(
        f"{who.name}: at most {cfg.episode_cap(n_train, n_dev)} learner episodes (stated before "
        "the run)",
        highlight=False,
    )
    result = await bootstrap_playbook_async(env, who, out=out, config=cfg)
    console.print(
        f"{who.name}: {result.verified} of {result.episodes} train episodes verified; "
        f"{len(result.chosen)} worked examples chosen; dev {result.baseline.reward:.3f} -> "
        f"{result.learned.reward:.3f} (optimistic: dev chose it); {result.training_tokens:,} "
        f"training tokens; playbook {result.playbook_path}",
        highlight=False,
    )
    return Path(result.playbook_path).read_text(encoding="utf-8") if result.chosen else None


async def held_out(name: str, policy: Policy, args: argparse.Namespace) -> Run:
    return await eval_async(
        args.env_obj,
        split=args.split,
        epochs=args.epochs,
        out=args.out / "held_out" / slug(name),
        options=EvalOptions(
            policy=policy,
            seed=args.seed + 1,
            limit=args.limit,
            concurrency=args.concurrency,
            progress=not args.no_progress,
        ),
    )


def arm_rows(runs: dict[str, Run]) -> list[dict[str, Any]]:
    """Per arm: tasks solved of n with the exact 95% interval (a task's epochs averaged, a task
    solved when its mean is 1, as `compare` counts binary rewards), tokens per task, and tasks
    solved by the family's first part (toy-examples' rule kind)."""
    rows = []
    for name, run in runs.items():
        wins: dict[str, list[float]] = {}
        kind: dict[str, str] = {}
        for ep in run.episodes():
            wins.setdefault(ep.task_id, []).append(1.0 if ep.success else 0.0)
            kind[ep.task_id] = ep.family.split("/")[0]
        solved = {t for t, w in wins.items() if fmean(w) == 1.0}
        ci = clopper_pearson(len(solved), len(wins))
        by_kind = {
            k: f"{sum(1 for t in wins if kind[t] == k and t in solved)}/"
            f"{sum(1 for t in wins if kind[t] == k)}"
            for k in sorted(set(kind.values()))
        }
        rows.append(
            {
                "arm": name,
                "solved": len(solved),
                "n": len(wins),
                "ci": [round(ci.lower, 3), round(ci.upper, 3)],
                "tokens_per_task": round(tokens_per_task(run)),
                "by_kind": by_kind,
            }
        )
    return rows


def tokens_per_task(run: Run) -> float:
    return run.summary().tokens_per_task


def question(
    title: str,
    targets: list[Run],
    line: list[Run],
    args: argparse.Namespace,
    console: Console,
) -> Comparison:
    console.rule(title)
    comp = compare(
        [r.path for r in targets],
        baseline=[r.path for r in line],
        tolerance=args.tolerance,
        margin=args.margin,
    )
    folder = args.out / "compare" / slug(title.split(":")[0])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "compare.json").write_text(comp.model_dump_json(indent=2) + "\n")
    png = frontier_png(comp, folder / "compare.png")
    render(comp, console)
    console.print(f"written: {folder / 'compare.json'}, {png}")
    return comp


async def run(args: argparse.Namespace, console: Console) -> dict[str, Any]:
    env = args.env_obj = load(args.env)
    agent = get_model(openai_name(args.model), base_url=args.base_url, api_key=args.api_key)
    assert isinstance(agent, Model)
    reflector = None
    if args.learner == "reflect":  # the bootstrap learner asks no reflector: none is loaded
        reflector = resolve_reflector(
            openai_name(args.reflector_model or args.model),
            base_url=args.base_url,
            api_key=args.api_key,
        )
    sampling = Sampling(temperature=args.temperature, max_tokens=args.max_tokens)
    t_vote = args.temperature if args.attempts_temperature is None else args.attempts_temperature
    voting = Sampling(temperature=t_vote, max_tokens=args.max_tokens)
    team = make_team(agent, args)
    playbooks: dict[str, str | None] = {}
    if not args.no_train:
        console.rule(f"1. train playbooks on {env.id} (train split; dev selects; test sealed)")
        playbooks["single"] = await train(
            env, agent, args.out / "train" / "single", reflector, DEFAULT_SECTIONS, args, console
        )
        sections = team.sections() if isinstance(team, Roles) else DEFAULT_SECTIONS
        playbooks["swarm"] = await train(
            env, team, args.out / "train" / "swarm", reflector, sections, args, console
        )
    console.rule(f"2. held out: every arm on the {args.split} split, same seeds")
    ks = [int(k) for k in args.ks.split(",") if k.strip()]
    runs: dict[str, Run] = {}
    stages = [("", None, None)]
    if not args.no_train:
        stages.append(("+pb", playbooks["single"], playbooks["swarm"]))
    for suffix, pb_single, pb_swarm in stages:
        runs[f"single{suffix}"] = await held_out(
            f"single{suffix}", Policy(agent, playbook=pb_single, sampling=sampling), args
        )
        for k in ks:
            runs[f"single{suffix}-sc{k}"] = await held_out(
                f"single{suffix}-sc{k}",
                Attempts(agent, n=k).policy(playbook=pb_single, sampling=voting),
                args,
            )
        runs[f"swarm{suffix}"] = await held_out(
            f"swarm{suffix}", team.policy(playbook=pb_swarm, sampling=sampling), args
        )
        # Attempts starts an attempt only if it fits the budget, so a cap at the swarm's cost
        # lands up to one attempt below it, outside the matched-cost tolerance; one single
        # attempt's cost on top puts the line's last point at or above the swarm's cost.
        swarm_cost = tokens_per_task(runs[f"swarm{suffix}"])
        budget = max(1, round(swarm_cost + tokens_per_task(runs[f"single{suffix}"])))
        matched = Attempts(agent, n=args.max_attempts, budget_tokens=budget)
        runs[f"single{suffix}@swarm"] = await held_out(
            f"single{suffix}@swarm", matched.policy(playbook=pb_single, sampling=voting), args
        )
    rows = arm_rows(runs)
    console.rule("every arm on the held-out split")
    for r in rows:
        kinds = ", ".join(f"{k} {v}" for k, v in r["by_kind"].items())
        console.print(
            f"  {r['arm']:18} {r['solved']:3}/{r['n']} [{r['ci'][0]:.2f}, {r['ci'][1]:.2f}]  "
            f"{r['tokens_per_task']:7,} tokens/task  {kinds}",
            highlight=False,
        )
    console.rule("3. comparisons at equal cost")
    answers: dict[str, Any] = {}
    untrained_line = [runs["single"], *(runs[f"single-sc{k}"] for k in ks), runs["single@swarm"]]
    comp = question(
        "untrained: swarm vs one agent at equal cost",
        [runs["swarm"]],
        untrained_line,
        args,
        console,
    )
    answers["untrained_swarm_vs_single"] = _answer(comp)
    if not args.no_train:
        trained_line = [
            runs["single+pb"],
            *(runs[f"single+pb-sc{k}"] for k in ks),
            runs["single+pb@swarm"],
        ]
        comp = question(
            "trained: swarm vs one trained agent at equal cost",
            [runs["swarm+pb"]],
            trained_line,
            args,
            console,
        )
        answers["trained_swarm_vs_trained_single"] = _answer(comp)
        comp = question(
            "training: trained swarm vs untrained swarm",
            [runs["swarm+pb"]],
            [runs["swarm"]],
            args,
            console,
        )
        answers["trained_swarm_vs_untrained_swarm"] = _answer(comp)
    summary = {
        "env": env.id,
        "model": agent.name,
        "swarm": team.describe(),
        "split": args.split,
        "epochs": args.epochs,
        "learner": None if args.no_train else args.learner,
        "temperature": args.temperature,
        "attempts_temperature": t_vote,
        "runs": {name: str(r.path) for name, r in runs.items()},
        "playbooks": playbooks,
        "arms": rows,
        "answers": answers,
    }
    path = args.out / "swarm_study.json"
    path.write_text(json.dumps(summary, indent=2, default=str) + "\n")
    console.print(f"written: {path}")
    return summary


def _answer(comp: Comparison) -> dict[str, Any]:
    return {
        "matched_cost": [m.model_dump(mode="json") for m in comp.matched_cost],
        "matched_reward": [m.model_dump(mode="json") for m in comp.matched_reward],
        "pairwise": [p.model_dump(mode="json") for p in comp.pairwise],
        "verdicts": [m.verdict for m in [*comp.matched_cost, *comp.matched_reward]],
    }


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    asyncio.run(run(args, Console()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
