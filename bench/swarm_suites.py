"""A swarm study's two swarm arms on a regression suite, so its gain can be certified.

    python bench/swarm_suites.py --model llamacpp/qwen2.5-coder-0.5b \
        --task-runs runs/claim4-toy-examples/held_out/swarm \
                    runs/claim4-toy-examples/held_out/swarm+pb \
        --suite suites/bfcl --limit 24 --out runs/claim4-suites

`bench/swarm_real.py` plays its arms on the environment's held-out split only. A certificate
also asks whether the trained swarm lost anything on the abilities the job needs, which only a
regression suite played by the *same two policies* can say. This script rebuilds both policies
from the task runs' own records (the team's model, the trained arm's playbook, the sampling and
the seed), refuses to play when a rebuilt policy's hash differs from the run's (the code or the
playbook changed since), plays each on the suite's test split into a folder named by the policy's
hash (two studies that share their untrained swarm share its suite run), and prints the
`workgym certify --from-runs` line that reads the four runs. Runs resume: a killed run continues
where it stopped.

Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from workgym.core.errors import ConfigError
from workgym.core.loading import load
from workgym.core.model import Model, Sampling
from workgym.models import get_model
from workgym.run.options import EvalOptions
from workgym.run.rundir import read_spec
from workgym.run.runner import eval_async
from workgym.swarm import Roles

sys.path.append(str(Path(__file__).resolve().parent))  # for _common when loaded by path
from _common import openai_name


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--model", required=True, help="the swarm members' model (as the study ran)")
    p.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint, if any")
    p.add_argument("--api-key", default=None)
    p.add_argument(
        "--task-runs",
        nargs=2,
        type=Path,
        required=True,
        metavar=("UNTRAINED", "TRAINED"),
        help="the study's held-out run folders of the untrained and the trained swarm",
    )
    p.add_argument("--suite", default="suites/bfcl")
    p.add_argument("--limit", type=int, default=24, help="first N items of the suite's test split")
    p.add_argument("--concurrency", type=int, default=4)
    p.add_argument("--out", type=Path, default=Path("runs/swarm-suites"))
    p.add_argument("--no-progress", action="store_true")
    return p.parse_args(argv)


async def run(args: argparse.Namespace) -> int:
    specs = [read_spec(r) for r in args.task_runs]  # bad input fails before a model loads
    suite = load(args.suite)
    agent = get_model(openai_name(args.model), base_url=args.base_url, api_key=args.api_key)
    assert isinstance(agent, Model)
    team = Roles(agent)
    outs = []
    for name, task_run, spec in zip(("swarm", "swarm+pb"), args.task_runs, specs, strict=True):
        recorded = spec.policy
        sampling = Sampling.model_validate(recorded.get("sampling") or {})
        policy = team.policy(playbook=recorded.get("playbook") or None, sampling=sampling)
        if policy.hash != spec.policy_hash:
            print(
                f"error: the {name} policy rebuilt here has hash {policy.hash}, but {task_run} "
                f"was played by {spec.policy_hash}: the team, its model or its playbook differ; "
                "run this with the code and --model the study ran with",
                file=sys.stderr,
            )
            return 2
        out = args.out / policy.hash  # one folder per policy: a study's arms share the untrained
        result = await eval_async(
            suite,
            split="test",
            epochs=spec.epochs,
            out=out,
            options=EvalOptions(
                policy=policy,
                seed=spec.seed,
                limit=args.limit,
                concurrency=args.concurrency,
                progress=not args.no_progress,
            ),
        )
        s = result.summary()
        print(
            f"{name}: {args.suite} test, {s.n_episodes} episodes, success {s.success_rate:.3f}, "
            f"policy {policy.hash} (as in {task_run}), run {out}",
            flush=True,
        )
        outs.append(out)
    b, c = args.task_runs
    print(
        f"next: workgym certify --from-runs {b} {c} {outs[0]} {outs[1]} --suites none "
        f"--suite-margin {args.suite}=MARGIN --out OUT"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    try:
        return asyncio.run(run(parse(argv)))
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
