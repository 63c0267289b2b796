"""A supervised patch against reinforcement in the environment, each certified against the base.

    python bench/sft_patch.py --env ENV --model hf/DIR [--steps 20] [--train-limit 64] \
        [--limit 32] [--suite suites/bfcl ...] [--admission-dir DIR] [--out runs/sft-patch]

1. The base model plays (the first --train-limit tasks of) the train split; the kinds (family
   up to its first '/') it solves less often than --fail-below are the ones to patch.
2. SFT (TRL `SFTTrainer`, `workgym.train.sft`) on the oracle's trajectories of those kinds'
   train tasks, assistant tokens only: the loss at every step is recorded.
3. The same number of optimizer steps spent on GRPO in the environment (`workgym.train.trl.grpo`,
   the train split, rewarded by the verifier).
4. Every arm (base, sft, grpo) plays the sealed test split and each suite with the same seed and
   sampling; `workgym certify --from-runs` then certifies each candidate against the base: gain
   on the patched kinds' held-out tasks, non-regression on the other kinds and the suites.

Prints the numbers and writes sft_patch.json + sft_patch.png; asserts nothing. Every stage
resumes: a finished stage is read back from its folder, an interrupted eval picks up where it
stopped (run directories are append-only), and a certificate already written is not redone, so
a re-run costs no further look at the test split.

The certificate needs ENV admitted: run `workgym check ENV --out DIR` first and pass
--admission-dir DIR (or --force-admission, which the certificate records).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import workgym.envs.suites  # noqa: F401  (registers the built-in suites)
from workgym.certify.workflow import Request, certify_async
from workgym.core.environment import Environment
from workgym.core.loading import load
from workgym.core.model import Sampling
from workgym.run.options import EvalOptions
from workgym.run.policy import Policy
from workgym.run.runner import eval_async

GRPO_KEYS = ("steps", "first_reward", "last_reward", "steps_with_signal", "episodes_trained",
             "episodes_skipped_zero_advantage", "wall_time_s")  # fmt: skip


def kind(family: str) -> str:
    return family.split("/", 1)[0]


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--env", default="workgym/toy-shop")
    p.add_argument("--model", required=True, help="hf/<dir>: the base model to patch")
    p.add_argument("--steps", type=int, default=20, help="optimizer steps for both trainers")
    p.add_argument("--batch-size", type=int, default=4, help="SFT examples per step")
    p.add_argument("--num-generations", type=int, default=4, help="GRPO group size")
    p.add_argument("--learning-rate", type=float, default=2e-5, help="both trainers")
    p.add_argument("--grpo-temperature", type=float, default=0.6, help="GRPO sampling")
    p.add_argument("--fail-below", type=float, default=0.5, help="kinds to patch: success < this")
    p.add_argument("--train-limit", type=int, default=None, help="train tasks the base plays")
    p.add_argument("--limit", type=int, default=None, help="test tasks in each certificate")
    p.add_argument("--suite", action="append", default=None, help="regression suite (repeat)")
    p.add_argument("--suite-limit", type=int, default=20)
    p.add_argument("--max-tokens", type=int, default=48, help="per model turn, every stage")
    p.add_argument("--temperature", type=float, default=0.0, help="sampling of the evals")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--admission-dir", type=Path, default=None)
    p.add_argument("--force-admission", action="store_true")
    p.add_argument(
        "--force-design",
        action="store_true",
        help="certify a design that cannot pass its own gate (a plumbing run; recorded)",
    )
    p.add_argument("--out", type=Path, default=Path("runs/sft-patch"))
    args = p.parse_args(argv)
    # Refused before the base model plays anything, not minutes later when training starts.
    if not args.model.startswith("hf/"):
        p.error(
            f"--model must be a local model, hf/<dir>, which both trainers update ({args.model!r})"
        )
    if args.batch_size % args.num_generations:
        p.error(
            "--batch-size must be a multiple of --num-generations, so that GRPO plays as many "
            f"episodes a step as SFT sees examples ({args.batch_size} vs {args.num_generations})"
        )
    return args


def options(args: argparse.Namespace, policy: Policy, limit: int | None) -> EvalOptions:
    return EvalOptions(
        policy=policy, seed=args.seed, limit=limit, concurrency=args.concurrency, progress=False
    )


def sampling(args: argparse.Namespace) -> Sampling:
    return Sampling(temperature=args.temperature, max_tokens=args.max_tokens)


async def failing_kinds(env: Environment, args: argparse.Namespace) -> dict[str, float]:
    """Base success on the train split, by kind."""
    policy = Policy(args.model, sampling=sampling(args))
    run = await eval_async(
        env,
        split="train",
        out=args.out / "base-train",
        options=options(args, policy, args.train_limit),
    )
    wins: dict[str, list[float]] = defaultdict(list)
    for episode in run.dir.episodes():
        wins[kind(episode.family)].append(1.0 if episode.success else 0.0)
    return {k: sum(v) / len(v) for k, v in sorted(wins.items())}


def sft_stage(env: Environment, args: argparse.Namespace, kinds: list[str]) -> dict[str, Any]:
    from workgym.models.hf import HFModel
    from workgym.train.sft import SFTSettings, gold_examples, train_sft

    root = args.out / "sft"
    if not (root / "sft.json").exists():
        chat = HFModel(args.model).chat
        tasks = [t for t in env.taskset.training_view().split("train") if kind(t.family) in kinds]
        examples = asyncio.run(gold_examples(env, tasks, chat))
        settings = SFTSettings(
            steps=args.steps,
            batch_size=args.batch_size,
            learning_rate=args.learning_rate,
            seed=args.seed,
        )
        train_sft(args.model, examples, root, settings)
    record: dict[str, Any] = json.loads((root / "sft.json").read_text())
    return record


def grpo_stage(env: Environment, args: argparse.Namespace) -> dict[str, Any]:
    from workgym.train.trl.grpo import GRPOSettings, train_grpo

    root = args.out / "grpo"
    if not (root / "train.json").exists():
        settings = GRPOSettings(
            steps=args.steps,
            num_generations=args.num_generations,
            prompts_per_step=args.batch_size // args.num_generations,
            learning_rate=args.learning_rate,
            temperature=args.grpo_temperature,
            max_new_tokens=args.max_tokens,
            seed=args.seed,
        )
        train_grpo(env, args.model, root, settings)
    record: dict[str, Any] = json.loads((root / "train.json").read_text())
    return record


async def arm_runs(args: argparse.Namespace, name: str, model: str) -> list[Path]:
    """The arm on the test split, then on each suite: the run folders, in certify's order."""
    policy = Policy(model, sampling=sampling(args))
    folders: list[Path] = []
    for target, limit in [(args.env, args.limit)] + [(s, args.suite_limit) for s in args.suites]:
        folder = args.out / "runs" / name / slug(target)
        await eval_async(target, split="test", out=folder, options=options(args, policy, limit))
        folders.append(folder)
    return folders


def certify(args: argparse.Namespace, base: list[Path], cand: list[Path], name: str) -> Path:
    out = args.out / f"certificate-{name}"
    if (out / "certificate.json").exists():
        return out / "certificate.json"
    pairs = [path for pair in zip(base, cand, strict=True) for path in pair]
    curve = args.out / "grpo" if name == "grpo" else None
    request = Request(
        from_runs=pairs,
        suites=[],
        out=out,
        admission_dir=args.admission_dir,
        force=args.force_admission,
        force_design=args.force_design,
        progress=False,
        curve=curve,
    )
    _, json_path, _ = asyncio.run(certify_async(request))
    return json_path


def summarise(cert_path: Path, kinds: list[str]) -> dict[str, Any]:
    """The verdict, and the mean paired difference on test items of patched and other kinds."""
    body = json.loads(cert_path.read_text())
    groups: dict[str, list[float]] = {"patched": [], "other": []}
    for item in body["task"]["items"]:
        groups["patched" if kind(item["family"]) in kinds else "other"].append(item["d"])
    out: dict[str, Any] = {"certificate": str(cert_path), "verdict": body["verdict"]}
    for name, ds in groups.items():
        out[name] = {"n": len(ds), "mean_diff": sum(ds) / len(ds) if ds else None}
    out["suites"] = {
        s["env"]["id"]: {
            "diff": s["non_inferiority"]["diff"],
            "lower": s["non_inferiority"]["lower"],
            "non_inferior": s["non_inferiority"]["passed"],
        }
        for s in body["suites"]
    }
    return out


def plot(losses: list[float], report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    left.plot(range(1, len(losses) + 1), losses, marker=".")
    left.set_xlabel("SFT step")
    left.set_ylabel("training loss (assistant tokens)")
    left.set_title("the patch, by its loss")
    names = [n for n in ("sft", "grpo") if n in report["arms"]]
    groups = [("patched", "patched kinds")]
    groups += [("other", "other kinds")] + [(s, s) for s in report["suites"]]
    width = 0.8 / len(groups)
    for g, (key, label) in enumerate(groups):
        values = [
            (arm[key]["mean_diff"] if key in arm else arm["suites"][key]["diff"]) or 0.0
            for arm in (report["arms"][n] for n in names)
        ]
        xs = [i - 0.4 + width * (g + 0.5) for i in range(len(names))]
        right.bar(xs, values, width=width, label=label)
    right.set_xticks(range(len(names)), names)
    right.axhline(0, color="grey", lw=0.5)
    right.set_ylabel("candidate - base, held out")
    right.set_title("the patch, by the certificate")
    right.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse(argv)
    args.suites = args.suite if args.suite is not None else ["suites/bfcl"]
    args.out.mkdir(parents=True, exist_ok=True)
    env = load(args.env)
    rates = asyncio.run(failing_kinds(env, args))
    print("base success on train, by kind:", {k: round(v, 3) for k, v in rates.items()})
    kinds = [k for k, v in rates.items() if v < args.fail_below]
    print("kinds to patch:", kinds or "none (the base passes every kind at this threshold)")
    report: dict[str, Any] = {
        "env": env.id,
        "model": args.model,
        "train_success_by_kind": rates,
        "kinds": kinds,
        "suites": args.suites,
        "arms": {},
    }
    if kinds:
        sft = sft_stage(env, args, kinds)
        grpo = grpo_stage(env, args)
        report["sft"] = {k: sft[k] for k in ("examples", "families", "losses", "wall_time_s")}
        report["grpo"] = {k: grpo.get(k) for k in GRPO_KEYS}
        base = asyncio.run(arm_runs(args, "base", args.model))
        for name, record in (("sft", sft), ("grpo", grpo)):
            cand = asyncio.run(arm_runs(args, name, record["candidate"]))
            arm = summarise(certify(args, base, cand, name), kinds)
            report["arms"][name] = arm
            print(f"{name}: {arm['verdict']}  patched {arm['patched']}  other {arm['other']}  "
                  f"suites {arm['suites']}")  # fmt: skip
        plot(sft["losses"], report, args.out / "sft_patch.png")
    (args.out / "sft_patch.json").write_text(json.dumps(report, indent=2, default=str) + "\n")
    print(f"report: {args.out / 'sft_patch.json'}")
    return report


if __name__ == "__main__":
    from workgym.core.errors import ConfigError

    try:
        main()
    except ConfigError as exc:  # a bad input is one line that says what to do, not a traceback
        raise SystemExit(f"error: {exc}") from None
