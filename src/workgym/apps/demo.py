"""`make demo`: the real job end to end on a real model, offline on CPU.

Writes the demo environment (`workgym/lookup`, saved to runs/demo/env, reused while its content
hash is unchanged), admits it with `workgym check` (reused when a passed check of the same hash is
on disk), evaluates the real model `hf/smollm2-135m` on the first held-out test tasks (the
baseline), trains it briefly with GRPO on the train split, evaluates the checkpoint on the same
tasks, and certifies candidate against baseline from those two runs. Every step writes into a
folder named for the environment's hash and is skipped when its output is complete, so a second
`make demo` only prints. Sized for 2 CPU cores; WORKGYM_DEMO_LIMIT (test tasks) and
WORKGYM_DEMO_STEPS (GRPO steps) scale it. Test doubles (scripted/*) are not used here: they
remain in the self-checks (`workgym check`) only.

With a handful of test tasks and two GRPO steps the certificate is expected to be
underpowered; it says so, and the printed interval shows how wide it is. That is the point of
printing it: a demo-sized run cannot certify an improvement, and the verdict must not pretend.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

from rich.console import Console

from workgym.apps.cli.hints import command as hint_command
from workgym.apps.cli.hints import workgym_command
from workgym.certify.workflow import Request, certify_async
from workgym.core.environment import Environment
from workgym.core.errors import ConfigError
from workgym.core.loading import load
from workgym.core.model import Sampling
from workgym.envs.lookup.env import Lookup
from workgym.guards.admission import admission_of
from workgym.guards.check import check_async
from workgym.run.options import EvalOptions
from workgym.run.runner import eval_async

MODEL = "hf/smollm2-135m"
TEST_TASKS = 8  # WORKGYM_DEMO_LIMIT overrides
STEPS = 2  # WORKGYM_DEMO_STEPS overrides
SAMPLING = Sampling(temperature=0.0, max_tokens=32)


def demo_env(env_dir: Path, console: Console) -> Environment:
    """The saved demo environment, rewritten when the built-in one's content changed."""
    fresh = Lookup()
    try:
        saved = load(env_dir)
        if saved.content_hash() == fresh.content_hash():
            console.print(f"reusing {env_dir} ({len(saved.taskset)} tasks; unchanged)")
            return saved
        console.print("rewriting: the environment changed")
    except ConfigError:
        pass
    fresh.save(env_dir)
    env = load(env_dir)
    splits = {s: len(env.taskset.split(s)) for s in ("train", "dev", "test")}
    console.print(f"wrote {env_dir}: {len(env.taskset)} tasks {splits}")
    return env


async def admit(env: Environment, out: Path, console: Console) -> bool:
    """`workgym check` into `out`, recorded in out.parent; a passed record of the hash is reused."""
    found = admission_of(env, out.parent)
    if found is not None and found.passed:
        console.print(f"admission reused: {out.parent} holds a passed check of this content hash")
        return True
    check = await check_async(env, out)
    for item in check.items:
        console.print(f"  {'pass' if item.passed else 'FAIL'}  {item.name}: {item.detail}")
    return check.passed


def training_dir(runs: Path) -> Path:
    """The finished training folder, or a fresh one: training never resumes, so a demo killed
    mid-training leaves its folder as it was and trains again beside it."""
    for i in range(1, 1000):
        out = runs / ("grpo" if i == 1 else f"grpo-{i}")
        if (out / "train.json").exists() or not (out / "run.json").exists():
            return out
    raise RuntimeError(f"{runs} holds 999 unfinished training folders; remove them")


def train(env: Environment, model: str, out: Path, steps: int) -> str:
    """Two small GRPO steps (or WORKGYM_DEMO_STEPS); the checkpoint's model reference."""
    from workgym.train.trl.grpo import GRPOSettings, train_grpo

    record = out / "train.json"
    if not record.exists():
        settings = GRPOSettings(
            steps=steps, num_generations=2, prompts_per_step=2, micro_batch=2,
            learning_rate=2e-5, temperature=0.5, max_new_tokens=32, max_completion_length=512,
        )  # fmt: skip
        train_grpo(env, model, out, settings)
    else:
        print(f"training reused: {record}")
    candidate: str = json.loads(record.read_text())["candidate"]
    return candidate


async def demo(root: Path) -> int:
    console = Console()
    started = time.perf_counter()
    model = os.environ.get("WORKGYM_DEMO_MODEL", MODEL)
    limit = int(os.environ.get("WORKGYM_DEMO_LIMIT", TEST_TASKS))
    steps = int(os.environ.get("WORKGYM_DEMO_STEPS", STEPS))
    env_dir = root / "env"
    console.rule(f"the demo environment: workgym/lookup -> {env_dir}")
    env = demo_env(env_dir, console)
    runs = root / env.content_hash()[:12]
    console.rule(f"workgym check {env_dir}")
    if not await admit(env, runs / "check", console):
        console.print("[bold red]admission not granted[/]: see the failures above")
        return 1
    console.rule(f"workgym eval {env_dir} --model {model} --split test --limit {limit}")
    options = EvalOptions(limit=limit, sampling=SAMPLING, progress=False)
    base = await eval_async(env, model, split="test", out=runs / "baseline", options=options)
    base.summary().print(console)
    console.rule(f"workgym train grpo {env_dir} --model {model} --steps {steps}")
    # TRL drives its rollouts with asyncio.run, so training runs off this event loop
    trained = training_dir(runs)
    candidate = await asyncio.to_thread(train, env, model, trained, steps)
    console.rule(f"workgym eval {env_dir} --model {candidate} --split test --limit {limit}")
    cand = await eval_async(env, candidate, split="test", out=runs / "candidate", options=options)
    cand.summary().print(console)
    console.rule("workgym certify --from-runs baseline candidate")
    cert, json_path, _ = await certify_async(
        Request(
            from_runs=[runs / "baseline", runs / "candidate"],
            suites=[],
            out=runs / "certificate",
            admission_dir=runs,
            curve=trained,
            looks_log=runs / "looks.jsonl",
            progress=False,
        )
    )  # fmt: skip  (the looks log is env_dir/looks.jsonl; runs/<hash>/looks.jsonl, where the
    # demo kept it before, is merged in; a re-run reads the same runs again: no new look)
    b, c = base.summary(), cand.summary()
    gain = cert.task.gain
    for label, name, summary in (("baseline", model, b), ("trained ", candidate, c)):
        lo, hi = summary.ci95
        console.print(
            f"{label}  {name}: {summary.mean_reward:.3f}  95% CI [{lo:.3f}, {hi:.3f}] "
            f"({summary.ci_method})"
        )
    console.print(
        f"verdict   {cert.verdict} (failed: {', '.join(cert.failed) or 'none'}; "
        f"underpowered: {gain.underpowered}); certificate: {json_path}"
    )
    console.print(f"demo finished in {time.perf_counter() - started:.0f} s; runs under {runs}/")
    command = workgym_command()
    if command != "workgym":
        console.print(
            f"workgym is installed in {Path(command).parent}, which is not on your PATH: "
            f"run `source {Path(command).parent / 'activate'}` once per terminal, "
            "or call it by its path as below",
            highlight=False,
        )
    # soft_wrap: a command wrapped onto two lines fails when pasted
    for i, hint in enumerate(next_hints(command, root, runs, json_path)):
        console.print(f"{'next:' if i == 0 else '     '} {hint}", highlight=False, soft_wrap=True)
    return 0


def next_hints(command: str, root: Path, runs: Path, certificate: Path) -> list[str]:
    """The commands the demo suggests, built from where it wrote things. `view` serves `root`,
    which holds the environment (root/env) beside the runs: served from the runs' own folder,
    the viewer could not load the environment and every episode page said "ground truth
    unavailable"."""
    del command  # hint_command quotes it and finds the same workgym
    return [
        hint_command("view", f"{root}/"),
        hint_command("summary", runs / "candidate"),
        hint_command("certify", "--recompute", certificate),
    ]


def quiet_libraries() -> None:
    """Keep transformers' and TRL's advisory warnings and weight-loading bars (about 70 lines)
    out of the demo's output: what the demo prints is what it did. Set before they are imported;
    a value the user set wins."""
    import logging
    import warnings

    for name, value in (
        ("TRANSFORMERS_VERBOSITY", "error"),
        ("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1"),
        ("HF_HUB_DISABLE_PROGRESS_BARS", "1"),
        ("TQDM_DISABLE", "1"),
    ):
        os.environ.setdefault(name, value)
    for module in ("transformers", "trl", "torch", "accelerate", "peft"):
        warnings.filterwarnings("ignore", module=module)
        logging.getLogger(module).setLevel(logging.ERROR)


def main() -> None:
    quiet_libraries()
    raise SystemExit(asyncio.run(demo(Path("runs") / "demo")))


if __name__ == "__main__":
    main()
