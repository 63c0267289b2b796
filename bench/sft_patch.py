"""A supervised patch against reinforcement in the environment, each certified against the base.

    python bench/sft_patch.py --env ENV --model hf/DIR [--steps 20] [--limit 40] \
        [--suite suites/bfcl ...] [--out runs/sft-patch]

1. The base model plays the train split free-running; the kinds (family up to its first '/') it
   fails most (success below --fail-below) are the ones to patch.
2. SFT (TRL `SFTTrainer`, `workgym.train.sft`) on the oracle's trajectories of those kinds'
   train tasks, assistant tokens only: the loss curve is recorded.
3. The same budget spent on GRPO in the environment (`workgym.train.trl.grpo`): the same
   optimizer steps on the same train tasks.
4. `workgym certify` of each candidate against the base on the sealed test split and the suites:
   gain on the patched kinds' held-out tasks, non-regression on the other kinds and the suites.

Prints the numbers and writes sft_patch.json + sft_patch.png; asserts nothing. Every stage
resumes: a finished stage is read back from its folder instead of being run again.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from workgym.certify.workflow import Request, certify_async
from workgym.core.environment import Environment
from workgym.core.loading import load
from workgym.run.options import EvalOptions
from workgym.run.policy import Policy
from workgym.run.runner import eval_async


def kind(family: str) -> str:
    return family.split("/", 1)[0]


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--env", default="workgym/toy-shop")
    p.add_argument("--model", required=True, help="hf/<dir>: the base model to patch")
    p.add_argument("--steps", type=int, default=20, help="optimizer steps for both trainers")
    p.add_argument("--batch-size", type=int, default=4, help="SFT examples per step")
    p.add_argument("--num-generations", type=int, default=4, help="GRPO group size")
    p.add_argument("--fail-below", type=float, default=0.5, help="kinds to patch: success < this")
    p.add_argument("--limit", type=int, default=None, help="test tasks in each certificate")
    p.add_argument("--suite", action="append", default=None, help="regression suite (repeat)")
    p.add_argument("--suite-limit", type=int, default=20)
    p.add_argument("--concurrency", type=int, default=4)
    p.add_argument("--out", type=Path, default=Path("runs/sft-patch"))
    return p.parse_args(argv)


async def failing_kinds(env: Environment, model: str, out: Path, fail_below: float) -> list[str]:
    run = await eval_async(env, model, split="train", out=out, options=EvalOptions(progress=False))
    wins: dict[str, list[float]] = defaultdict(list)
    for episode in run.dir.episodes():
        wins[kind(episode.family)].append(1.0 if episode.success else 0.0)
    rates = {k: sum(v) / len(v) for k, v in wins.items()}
    print("base success on train, by kind:", {k: round(v, 3) for k, v in sorted(rates.items())})
    return sorted(k for k, v in rates.items() if v < fail_below)


def sft_stage(env: Environment, args: argparse.Namespace, kinds: list[str]) -> dict[str, Any]:
    from workgym.models.hf import HFModel
    from workgym.train.sft import SFTSettings, gold_examples, train_sft

    root = args.out / "sft"
    if (root / "sft.json").exists():
        record: dict[str, Any] = json.loads((root / "sft.json").read_text())
        return record
    chat = HFModel(args.model).chat
    tasks = [t for t in env.taskset.training_view().split("train") if kind(t.family) in kinds]
    examples = asyncio.run(gold_examples(env, tasks, chat))
    settings = SFTSettings(steps=args.steps, batch_size=args.batch_size)
    train_sft(args.model, examples, root, settings)
    saved: dict[str, Any] = json.loads((root / "sft.json").read_text())
    return saved


def grpo_stage(env: Environment, args: argparse.Namespace) -> dict[str, Any]:
    from workgym.train.trl.grpo import GRPOSettings, train_grpo

    root = args.out / "grpo"
    if (root / "train.json").exists():
        record: dict[str, Any] = json.loads((root / "train.json").read_text())
        return record
    settings = GRPOSettings(
        steps=args.steps,
        num_generations=args.num_generations,
        prompts_per_step=max(1, args.batch_size // args.num_generations),
        temperature=0.7,
    )
    train_grpo(env, args.model, root, settings)
    saved: dict[str, Any] = json.loads((root / "train.json").read_text())
    return saved


def certify(args: argparse.Namespace, candidate: str, name: str) -> dict[str, Any]:
    request = Request(
        env=args.env,
        baseline=Policy(args.model),
        candidate=Policy(candidate),
        suites=args.suite if args.suite is not None else ["suites/bfcl"],
        limit=args.limit,
        suite_limit=args.suite_limit,
        concurrency=args.concurrency,
        out=args.out / f"certificate-{name}",
        progress=False,
    )
    cert, json_path, _ = asyncio.run(certify_async(request))
    return {"path": str(json_path), "verdict": cert.verdict, "failed": list(cert.failed)}


def split_gain(cert_path: Path, kinds: list[str]) -> dict[str, Any]:
    """Mean paired difference on test items of the patched kinds and of the others."""
    body = json.loads(cert_path.read_text())
    groups: dict[str, list[float]] = {"patched": [], "other": []}
    for item in body["task"]["items"]:
        groups["patched" if kind(item["family"]) in kinds else "other"].append(item["d"])
    out: dict[str, Any] = {}
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
    for offset, group in ((-0.2, "patched"), (0.2, "other")):
        values = [report["arms"][n]["gain"][group]["mean_diff"] or 0.0 for n in names]
        right.bar([i + offset for i in range(len(names))], values, width=0.4, label=group)
    right.set_xticks(range(len(names)), names)
    right.axhline(0, color="grey", lw=0.5)
    right.set_ylabel("candidate - base on held-out tasks")
    right.set_title("the patch, by the certificate")
    right.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    env = load(args.env)
    kinds = asyncio.run(failing_kinds(env, args.model, args.out / "base-train", args.fail_below))
    print("kinds to patch:", kinds or "none (the base passes every kind at this threshold)")
    report: dict[str, Any] = {"env": env.id, "model": args.model, "kinds": kinds, "arms": {}}
    if not kinds:
        (args.out / "sft_patch.json").write_text(json.dumps(report, indent=2) + "\n")
        return report
    sft = sft_stage(env, args, kinds)
    grpo = grpo_stage(env, args)
    for name, record in (("sft", sft), ("grpo", grpo)):
        cert = certify(args, record["candidate"], name)
        cert["gain"] = split_gain(Path(cert["path"]), kinds)
        report["arms"][name] = cert
        print(f"{name}: {cert['verdict']}  patched {cert['gain']['patched']}  "
              f"other {cert['gain']['other']}  suites {cert['gain']['suites']}")  # fmt: skip
    report["sft_losses"] = sft.get("losses", [])
    (args.out / "sft_patch.json").write_text(json.dumps(report, indent=2) + "\n")
    plot(report["sft_losses"], report, args.out / "sft_patch.png")
    print(f"report: {args.out / 'sft_patch.json'}")
    return report


if __name__ == "__main__":
    main()
