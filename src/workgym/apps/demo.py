"""`make demo`: a real model learns a playbook from reward; the gain is certified, offline on CPU.

The job (`workgym/toy-examples`): apply a named rule to a word with the `transform` tool and submit
the result; 60 tasks, 24 of them held out. The agent is a real model, `llamacpp/qwen2.5-coder-0.5b`
(Qwen2.5-Coder-0.5B-Instruct in llama.cpp, in process), and its weights stay frozen. What it learns
is a readable playbook: `workgym train playbook --learner bootstrap` samples train tasks, keeps the
episodes the verifier passed (and the audit did not flag), and keeps the worked examples of them
that raise reward on dev (decision 0130). The test split stays sealed while it learns.

Then, before any test task is played, the certificate's planner (`workgym certify --plan`) sizes
the design from what dev showed: the untrained model's dev success rate as the baseline, the dev
gain as the target, the 24 test tasks and the regression suite (24 `suites/bfcl` function-calling
items, margin 0.2, declared here, decision 0155). It prints whether the design can certify that
gain with power 0.8; a demo that cannot says so up front with the plan's numbers and still runs to
the end. Last, `workgym certify` plays both arms (the model without and with the playbook) on the
test tasks and the suite and prints the certificate.

Every step writes into a folder named for the environment's hash and reads its output back when
it is complete, so a second `make demo` plays nothing and spends no new look at the test split.
WORKGYM_DEMO_MODEL swaps the agent (the tests use the scripted double); WORKGYM_DEMO_LIMIT caps the
test tasks. The demo exits 0 whatever the verdict; 1 when admission is refused; 2 on a design the
certificate cannot run (decision 0133).
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from rich.console import Console

from workgym.apps.cli.hints import command as hint_command
from workgym.apps.cli.hints import workgym_command
from workgym.certify import plan as plan_mod
from workgym.certify.schema import Certificate
from workgym.certify.workflow import Request, certify_async, plan
from workgym.core.environment import Environment
from workgym.core.errors import ConfigError
from workgym.core.loading import load
from workgym.core.model import Sampling
from workgym.envs.toy_examples.env import ToyExamples
from workgym.guards.admission import admission_of
from workgym.guards.check import check_async
from workgym.models import get_model
from workgym.run.policy import Policy
from workgym.stats.proportions import clopper_pearson
from workgym.train.playbook.bootstrap.bootstrap_config import BootstrapConfig
from workgym.train.playbook.bootstrap.learner import BootstrapResult, bootstrap_playbook_async

MODEL = "llamacpp/qwen2.5-coder-0.5b"
MAX_TOKENS = 64  # per model call: a tool call is about 30 tokens, a BFCL answer up to about 60
SAMPLING = Sampling(temperature=0.0, max_tokens=MAX_TOKENS)
# The learner's budget, fixed before the demo was first run (decision 0155): every train task
# sampled once at 0.7, at most 2 candidate examples, at most 2 in the playbook (greedy search);
# at most 24 train + 12 x 5 dev episodes (`BootstrapConfig.episode_cap`).
LEARNER = BootstrapConfig(
    train_tasks=24, samples=1, max_candidates=2, max_examples=2, max_tokens=MAX_TOKENS, seed=0
)
SUITE = "suites/bfcl"
SUITE_ITEMS = 24  # the fewest with which tied arms clear the margin with room for one net loss
SUITE_MARGIN = 0.2  # the demo's non-inferiority margin on the suite, declared before the look
POWER = 0.8


def demo_env(env_dir: Path, console: Console) -> Environment:
    """The saved demo environment, rewritten when the built-in one's content changed."""
    fresh = ToyExamples()
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


def rate(successes: int, n: int) -> str:
    ci = clopper_pearson(successes, n)
    return f"{successes}/{n} = {successes / n:.2f} [{ci.lower:.2f}, {ci.upper:.2f}]"


def learned_lines(result: BootstrapResult) -> list[str]:
    """What the learner did and learned, in plain words: the playbook itself is printed too."""
    base = [round(x) for x in result.baseline.task_means]
    learned = [round(x) for x in result.learned.task_means]
    n = len(base)
    only_learned = sum(1 for b, c in zip(base, learned, strict=True) if c > b)
    only_base = sum(1 for b, c in zip(base, learned, strict=True) if b > c)
    out = [
        f"train: {result.verified} of {result.episodes} sampled episodes passed the verifier "
        f"(no audit flag); {len(result.candidates)} became candidate worked examples",
        f"dev, untrained (empty playbook): {rate(sum(base), n)}  exact 95% interval",
        f"dev, learned ({len(result.chosen)} worked examples): {rate(sum(learned), n)}  "
        f"(only learned solved {only_learned}, only untrained {only_base}; optimistic: dev also "
        "chose the examples)",
    ]
    if not result.chosen:
        out.append("nothing was learned: no set of examples passed the gate on dev")
    return out


def plan_request(env_dir: Path, limit: int | None, baseline: float, gain: float) -> Request:
    return Request(
        env=str(env_dir), suites=[SUITE], suite_limit=SUITE_ITEMS,
        margins={SUITE: SUITE_MARGIN}, limit=limit, baseline_rate=baseline,
        target=max(gain, 0.01), power=POWER,
    )  # fmt: skip


def plan_command(env_dir: Path, limit: int | None, baseline: float, gain: float) -> str:
    """The `certify --plan` line that prints the same plan, for a reader who wants it."""
    cap = "" if limit is None else f" --limit {limit}"
    return (
        f"workgym certify {env_dir} --plan{cap} --suites {SUITE} --suite-limit {SUITE_ITEMS} "
        f"--suite-margin {SUITE}={SUITE_MARGIN:g} --baseline-rate {baseline:.3f} "
        f"--target {max(gain, 0.01):.3f}"
    )


def powered(design: plan_mod.Plan, gain: float) -> bool:
    """Whether the design detects the dev gain with power 0.8 and its suite can pass at all."""
    mde = design.detectable_gain
    return (
        plan_mod.refusal(design) is None
        and mde is not None
        and gain >= mde
        and design.suites_passable
    )


def plan_lines(design: plan_mod.Plan, gain: float) -> list[str]:
    """What the plan means for this demo, in plain words, printed before the look."""
    n, mde = design.n_items, design.detectable_gain
    suite = design.suites[0] if design.suites else None
    out = [
        f"the design: {n} test tasks ({design.estimand}), each played once by both arms, "
        f"significance level {design.alpha:g}; the untrained dev rate "
        f"{design.mean_rate or 0:.2f} is the baseline the plan assumes",
    ]
    if suite is not None:
        out.append(
            f"non-regression: {suite.n_items} {suite.suite} items, margin {suite.margin:g} "
            f"(if every pair ties, the bound is {suite.tie_lower:+.3f})"
        )
    refused = plan_mod.refusal(design)
    if refused is not None:
        out.append(f"the certificate would refuse this design: {refused}")
    if mde is None:
        out.append(f"no gain at all can be detected with power {design.power:g} on {n} tasks")
    else:
        out.append(
            f"smallest gain detected with power {design.power:g}: {mde:.2f} "
            f"(about {round(mde * n)} more of the {n} tasks solved); the gain seen on dev: "
            f"{gain:+.2f}"
        )
    if powered(design, gain):
        out.append(
            "so if the dev gain holds on test and the suite does not regress, the certificate "
            "should PASS; a FAIL would mean the gain did not carry over to held-out tasks"
        )
    else:
        out.append(
            "so this demo cannot certify the gain it learned (too small for this many tasks, "
            "or nothing learned): expect FAIL, the honest answer at this size, not a broken install"
        )
    return out


def _bound(x: float | None) -> str:
    return "?" if x is None else f"{x:+.3f}"


def _p(p: float | None) -> str:
    return "?" if p is None else f"{p:.2g}"


def verdict_lines(cert: Certificate) -> list[str]:
    """The verdict in plain words, with the conditions that failed."""
    g = cert.task.gain
    lo, hi = g.ci95
    said = (
        f"the model with its playbook scored {g.candidate_mean:.3f} against "
        f"{g.baseline_mean:.3f} without it on {g.n_items} held-out tasks (gain {g.diff:+.3f}, "
        f"95% CI [{_bound(lo)}, {_bound(hi)}], p = {_p(g.p_value)})"
    )
    out = [f"  failed {c.name}: {c.detail}" for c in cert.conditions if not c.passed]
    for s in cert.suites:
        ni = s.non_inferiority
        out.append(
            f"suite {s.env.id}: {ni.candidate_mean:.3f} with the playbook against "
            f"{ni.baseline_mean:.3f} without (lower bound {_bound(ni.lower)}, margin "
            f"{ni.margin:g})"
        )
    if cert.verdict == "PASS":
        out.append(f"PASS: {said}; the gain is certified and the suite shows no regression")
    else:
        out.append(f"FAIL: {said}; the failed conditions above say why")
    return out


async def demo(root: Path) -> int:
    console = Console()
    started = time.perf_counter()
    model_name = os.environ.get("WORKGYM_DEMO_MODEL", MODEL)
    limit_text = os.environ.get("WORKGYM_DEMO_LIMIT", "")
    if limit_text and not limit_text.isdigit():
        console.print(
            f"[bold red]error[/]: WORKGYM_DEMO_LIMIT={limit_text!r} is not a number of test "
            "tasks; unset it or give a whole number such as 12",
            highlight=False,
        )
        return 2
    limit = int(limit_text) if limit_text else None
    env_dir = root / "env"
    console.rule(f"the job: workgym/toy-examples -> {env_dir}")
    env = demo_env(env_dir, console)
    example = env.taskset.split("train")[0].prompt
    console.print(f"{env.instructions} A task: {example!r}", highlight=False)
    runs = root / env.content_hash()[:12]
    console.rule(f"workgym check {env_dir}")
    if not await admit(env, runs / "check", console):
        console.print("[bold red]admission not granted[/]: see the failures above")
        return 1
    learn_dir = runs / "playbook"
    console.rule(
        f"workgym train playbook {env_dir} --model {model_name} --learner bootstrap "
        f"--train-tasks {LEARNER.train_tasks} --samples {LEARNER.samples} "
        f"--max-candidates {LEARNER.max_candidates} --max-examples {LEARNER.max_examples} "
        f"--max-tokens {LEARNER.max_tokens} --out {learn_dir}"
    )
    cap = LEARNER.episode_cap(len(env.taskset.split("train")), len(env.taskset.split("dev")))
    console.print(
        f"learning on train and dev (test sealed): at most {cap} episodes, about 4 minutes on "
        "2 idle cores",
        highlight=False,
    )
    model = get_model(model_name)  # one instance for the learner and both arms
    threads = getattr(model, "threads", None)
    if isinstance(threads, int):  # llama.cpp: its threads are fixed once, at start
        console.print(
            f"llama.cpp runs on {threads} of {os.cpu_count()} cores: the ones the one-minute load "
            f"average left idle at start (fewer threads, a slower demo); to choose: "
            f"WORKGYM_LLAMACPP_THREADS={os.cpu_count()} make demo",
            highlight=False,
        )
    result = await bootstrap_playbook_async(env, model, out=learn_dir, config=LEARNER)
    for line in learned_lines(result):
        console.print(line, highlight=False)
    playbook_text = Path(result.playbook_path).read_text(encoding="utf-8")
    console.print("the playbook learned:" if playbook_text else "the playbook is empty")
    console.print(playbook_text, highlight=False, markup=False, soft_wrap=True)
    baseline_rate = result.baseline.reward
    gain = result.learned.reward - baseline_rate
    console.rule(plan_command(env_dir, limit, baseline_rate, gain))
    try:
        design = plan(plan_request(env_dir, limit, baseline_rate, gain))
    except ConfigError as exc:
        console.print(f"[bold red]error[/]: {exc} (WORKGYM_DEMO_LIMIT={limit})", highlight=False)
        return 2
    for line in plan_lines(design, gain):
        console.print(line, highlight=False)
    console.rule(
        f"workgym certify {env_dir} --baseline-model {model_name} --candidate-model {model_name} "
        f"--candidate-playbook {result.playbook_path} --suites {SUITE} ..."
    )
    cert, json_path, _ = await certify_async(
        Request(
            env=str(env_dir),
            baseline=Policy(model, sampling=SAMPLING),
            candidate=Policy(model, playbook=playbook_text or None, sampling=SAMPLING),
            suites=[SUITE], suite_limit=SUITE_ITEMS, margins={SUITE: SUITE_MARGIN},
            limit=limit, out=runs / "certificate", admission_dir=runs,
            progress=True, force_design=True,  # a refused design was said so above
        )
    )  # fmt: skip
    console.print(
        f"verdict   {cert.verdict} (failed: {', '.join(cert.failed) or 'none'}); "
        f"certificate: {json_path}"
    )
    for line in verdict_lines(cert):
        console.print(line, highlight=False)
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
        hint_command("summary", runs / "certificate" / "runs" / "task" / "candidate"),
        hint_command("certify", "--recompute", certificate),
    ]


def quiet_libraries() -> None:
    """Keep library advisory warnings and progress bars out of the demo's output: what the demo
    prints is what it did. Set before they are imported; a value the user set wins."""
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
