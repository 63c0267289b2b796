"""Claim 2 at matched new-task accuracy: SFT against GRPO budgets, a control fine-tune, and KL.

Decision 0194 fixes the design before any checkpoint is scored. The new task is
`bench/lookup-c1`: train on its train split, score on its five held-out dev families (40 tasks).
The ability nobody trained is `suites/ifeval`: a fixed sample of its items, drawn with seed 0. It
is the one suite where SmolLM2-135M is off the floor; it scores 1/64 on `suites/bfcl-full`.

    # GRPO arms (the CLI), checkpoints after steps 3 and 6:
    workgym train grpo bench/lookup-c1 --import bench.lookup_c1 --model hf/smollm2-135m \\
        --out runs/c2s/grpo-sS --steps 6 --num-generations 4 --prompts-per-step 4 \\
        --micro-batch 2 --learning-rate 2e-5 --temperature 0.6 --max-new-tokens 48 \\
        --max-completion-length 512 --seed S --save-every 3
    # SFT arms on lookup-c1's oracle trajectories, and the control on toy-shop's (unrelated data):
    python bench/sft_rl_sweep.py sft --seed S --out runs/c2s/sft-sS
    python bench/sft_rl_sweep.py sft --seed S --control --out runs/c2s/control-sS
    # each checkpoint (and the base): dev success, ifeval, KL(checkpoint || base) on dev prompts
    python bench/sft_rl_sweep.py eval hf/runs/c2s/sft-s0/steps/step-0002 \\
        --out runs/c2s/eval/sft-s0-2
    # the matched comparison (reads every eval folder; plays nothing)
    python bench/sft_rl_sweep.py report runs/c2s/eval --out docs/results/sft-rl-sweep

Every stage resumes: a trained arm or a finished eval is read back, an interrupted eval picks up
where it stopped (run directories are append-only). Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import re
import sys
import time
import warnings
from pathlib import Path
from typing import Any, NamedTuple

import workgym.envs.suites  # noqa: F401  (registers the built-in suites)
from workgym.core.errors import ConfigError
from workgym.core.loading import load
from workgym.core.model import Sampling
from workgym.run.options import EvalOptions
from workgym.run.policy import Policy
from workgym.run.runner import eval_async

sys.path.insert(0, str(Path(__file__).parent))
from lookup_c1 import LookupC1  # bench/ is this script's own directory

SFT_STEPS = 8
SFT_SAVE_AT = [1, 2, 4]
CONTROL_ENV = "workgym/toy-shop"
KL_SAMPLES = 2
KL_TOKENS = 48
SEED = 0


class Scale(NamedTuple):
    """What a run of the sweep is sized by: the reduced run fits the 2-core CPU machine, the full
    one is decision 0194's design as issue 36 asks for it (seeds 0-4, a model off bfcl's floor,
    an ifeval budget that does not cut the base's replies), for one GPU."""

    base: str
    ifeval_items: int
    max_tokens: int
    kl_prompts_per_family: int  # the first of each dev family in file order


SCALES = {
    "reduced": Scale("hf/smollm2-135m", ifeval_items=96, max_tokens=128, kl_prompts_per_family=2),
    "full": Scale(
        "hf/qwen2.5-coder-0.5b", ifeval_items=156, max_tokens=512, kl_prompts_per_family=8
    ),
}


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument(
        "--scale",
        choices=sorted(SCALES),
        default="reduced",
        help="reduced: SmolLM2-135M, 96 ifeval items at 128 tokens (CPU); full: the 0.5B, 156 "
        "items at 512 tokens, 8 KL prompts a family (one GPU)",
    )
    sub = p.add_subparsers(dest="stage", required=True)
    sft = sub.add_parser("sft", help="train one SFT (or control) arm")
    sft.add_argument("--seed", type=int, required=True)
    sft.add_argument("--control", action="store_true", help=f"train on {CONTROL_ENV}'s oracle")
    sft.add_argument("--out", type=Path, required=True)
    ev = sub.add_parser("eval", help="score one model: dev success, ifeval, KL to the base")
    ev.add_argument("model", help="hf/<dir>")
    ev.add_argument("--out", type=Path, required=True)
    ev.add_argument("--concurrency", type=int, default=16)
    rep = sub.add_parser("report", help="the matched comparison over every eval folder")
    rep.add_argument("evals", type=Path)
    rep.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    args.size = SCALES[args.scale]
    if args.stage == "eval" and not args.model.startswith("hf/"):
        base = SCALES[args.scale].base
        p.error(f"the model is a local checkpoint, hf/<dir>, like the base {base} ({args.model!r})")
    if args.stage == "report" and not args.evals.is_dir():
        p.error(f"{args.evals} is not a folder of eval runs; run the eval stage into it first")
    return args


# -- training -------------------------------------------------------------------------------


def train(args: argparse.Namespace) -> None:
    from workgym.models.hf import HFModel
    from workgym.train.sft import SFTSettings, gold_examples, train_sft

    if (args.out / "sft.json").exists():
        print(f"{args.out} is trained; nothing to do")
        return
    env = load(CONTROL_ENV) if args.control else LookupC1()
    tasks = env.taskset.training_view().split("train")
    base = args.size.base
    examples = asyncio.run(gold_examples(env, tasks, HFModel(base).chat))
    settings = SFTSettings(
        steps=SFT_STEPS, batch_size=4, learning_rate=2e-5, seed=args.seed, save_at=SFT_SAVE_AT
    )
    result = train_sft(base, examples, args.out, settings)
    print(json.dumps({"env": env.id, "examples": result.examples, "losses": result.losses}))


# -- scoring one model ----------------------------------------------------------------------


def options(
    model: str, concurrency: int, max_tokens: int, sample: int | None = None
) -> EvalOptions:
    policy = Policy(model, sampling=Sampling(temperature=0.0, max_tokens=max_tokens))
    return EvalOptions(
        policy=policy, seed=SEED, sample=sample, concurrency=concurrency, progress=False
    )


def outcomes(folder: Path, max_tokens: int) -> dict[str, dict[str, Any]]:
    """task id -> success, and whether a one-turn reply ran into the token budget."""
    out: dict[str, dict[str, Any]] = {}
    for line in (folder / "episodes.jsonl").read_text().splitlines():
        e = json.loads(line)
        cut = e["turns"] == 1 and e["usage"]["completion_tokens"] >= max_tokens
        out[e["task_id"]] = {"success": bool(e["verdict"]["success"]), "cut": cut}
    return out


async def dev_prompts(env: LookupC1, per_family: int) -> list[tuple[list[Any], list[Any]]]:
    """The first turn's messages and tools of the first dev tasks of each family.

    Each prompt costs four prefills of about 850 tokens on one thread (~10 s), so the estimate
    uses 2 prompts a family, not all 40 (decision 0194's second amendment)."""
    from workgym.run.gold import gold_trajectory

    prompts = []
    taken: dict[str, int] = {}
    for task in env.taskset.split("dev"):
        if taken.get(task.family, 0) >= per_family:
            continue
        taken[task.family] = taken.get(task.family, 0) + 1
        messages = await gold_trajectory(env, task)
        first = next(i for i, m in enumerate(messages) if m.role == "assistant")
        prompts.append((messages[:first], env.toolkit(task).specs))
    return prompts


def kl_to_base(model: str, size: Scale) -> dict[str, float]:
    """KL(model || base) on the new task: sampled replies to dev prompts, log-ratio per reply.

    RL's Razor's candidate explanation of forgetting is this forward KL on the new task's
    distribution; it is estimated by Monte Carlo from the fine-tuned model's own samples
    (temperature 1, KL_SAMPLES a prompt, KL_TOKENS tokens).
    """
    import torch

    from workgym.models.hf import HFModel, load_local

    chat = HFModel(size.base).chat
    tuned, _ = load_local(model.removeprefix("hf/"))
    base, _ = load_local(size.base.removeprefix("hf/"))
    torch.manual_seed(SEED)
    eos = tuned.generation_config.eos_token_id
    stops = set(eos if isinstance(eos, list) else [eos])
    values: list[float] = []
    for messages, tools in asyncio.run(dev_prompts(LookupC1(), size.kl_prompts_per_family)):
        ids = torch.tensor([chat.encode(chat.render(messages, tools, generation=True))])
        n = ids.shape[1]
        with torch.no_grad():
            # One call draws the prompt's samples; the tuned model's log-probs are its raw
            # logits at each drawn token (temperature 1, no top-k/top-p: the sampling
            # distribution itself), the base's come from one forward pass over the batch.
            out = tuned.generate(
                ids,
                do_sample=True,
                temperature=1.0,
                top_k=0,
                top_p=1.0,
                max_new_tokens=KL_TOKENS,
                num_return_sequences=KL_SAMPLES,
                pad_token_id=0,
                output_logits=True,
                return_dict_in_generate=True,
            )
            seq, reply = out.sequences, out.sequences[:, n:]
            mine = torch.log_softmax(torch.stack(out.logits, 1).float(), -1)
            theirs = torch.log_softmax(base(seq).logits[:, n - 1 : -1].float(), -1)
            for row in range(seq.shape[0]):
                tokens = reply[row].tolist()
                end = next((i + 1 for i, t in enumerate(tokens) if t in stops), len(tokens))
                pick = reply[row, :end, None]
                gap = (
                    mine[row, :end].gather(1, pick).sum() - theirs[row, :end].gather(1, pick).sum()
                )
                values.append(float(gap))
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / max(1, len(values) - 1))
    return {"kl": mean, "se": sd / math.sqrt(len(values)), "n": len(values)}


def evaluate(args: argparse.Namespace) -> None:
    size: Scale = args.size
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    asyncio.run(
        eval_async(
            LookupC1(),
            split="dev",
            out=args.out / "dev",
            options=options(args.model, args.concurrency, size.max_tokens),
        )
    )
    asyncio.run(
        eval_async(
            "suites/ifeval",
            split="all",
            out=args.out / "ifeval",
            options=options(args.model, args.concurrency, size.max_tokens, size.ifeval_items),
        )
    )
    kl_path = args.out / "kl.json"
    if not kl_path.exists():
        tuned = args.model != size.base
        kl = kl_to_base(args.model, size) if tuned else {"kl": 0.0, "se": 0.0, "n": 0}
        kl_path.write_text(json.dumps(kl) + "\n")
    record = {"model": args.model, "wall_time_s": round(time.perf_counter() - started, 1)}
    (args.out / "model.json").write_text(json.dumps(record) + "\n")
    dev = outcomes(args.out / "dev", size.max_tokens)
    ife = outcomes(args.out / "ifeval", size.max_tokens)
    print(
        json.dumps(
            {
                "model": args.model,
                "dev": sum(o["success"] for o in dev.values()) / len(dev),
                "ifeval": sum(o["success"] for o in ife.values()) / len(ife),
                **json.loads(kl_path.read_text()),
                **record,
            }
        )
    )


# -- the matched comparison -----------------------------------------------------------------

NAME = re.compile(r"^(?P<arm>sft|grpo|control)-s(?P<seed>\d+)-(?P<step>\d+)$")


def load_evals(root: Path, size: Scale) -> dict[str, dict[str, Any]]:
    """name -> scores, for every finished eval folder (base, or arm-sS-STEP)."""
    rows: dict[str, dict[str, Any]] = {}
    for folder in sorted(root.iterdir()):
        if not (folder / "kl.json").exists():
            continue
        m = NAME.match(folder.name)
        if folder.name != "base" and not m:
            continue
        dev = outcomes(folder / "dev", size.max_tokens)
        ife = outcomes(folder / "ifeval", size.max_tokens)
        rows[folder.name] = {
            "arm": m["arm"] if m else "base",
            "seed": int(m["seed"]) if m else None,
            "step": int(m["step"]) if m else 0,
            "dev": sum(o["success"] for o in dev.values()) / len(dev),
            "ifeval_items": {k: int(o["success"]) for k, o in ife.items()},
            "ifeval_cut": sum(o["cut"] for o in ife.values()) / len(ife),
            "kl": json.loads((folder / "kl.json").read_text())["kl"],
        }
    if "base" not in rows:
        raise ConfigError(
            f"{root}/base has no finished eval; run the eval stage on {size.base} first"
        )
    return rows


def forgetting(base: dict[str, int], other: dict[str, int]) -> tuple[float, int, int]:
    """Base minus checkpoint on ifeval, and the items lost and gained (paired on item ids)."""
    keys = sorted(base.keys() & other.keys())
    lost = sum(base[k] and not other[k] for k in keys)
    gained = sum(other[k] and not base[k] for k in keys)
    return (lost - gained) / len(keys), lost, gained


def matches(rows: dict[str, dict[str, Any]]) -> list[tuple[str, str]]:
    """Each GRPO checkpoint with the same seed's SFT checkpoint nearest in dev success.

    Ties go to the SFT checkpoint with fewer steps (the smaller update). Fixed in decision 0194.
    """
    pairs = []
    for name, row in rows.items():
        if row["arm"] != "grpo":
            continue
        sft = [
            (abs(r["dev"] - row["dev"]), r["step"], n)
            for n, r in rows.items()
            if r["arm"] == "sft" and r["seed"] == row["seed"]
        ]
        if sft:
            pairs.append((name, min(sft)[2]))
    return pairs


def item_t(ds: list[float]) -> dict[str, float | None]:
    """Mean and 95% t interval over ifeval items of a per-item difference."""
    from scipy import stats

    n = len(ds)
    mean = sum(ds) / n
    sd = math.sqrt(sum((d - mean) ** 2 for d in ds) / (n - 1))
    half = stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n)
    p = float(2 * stats.t.sf(abs(mean) / (sd / math.sqrt(n)), n - 1)) if sd else None
    low, high = float(mean - half), float(mean + half)
    return {"mean": mean, "lower": low, "upper": high, "p": p, "n": n, "sd": sd}


def verdict(ci: dict[str, float | None]) -> str:
    if ci["sd"] == 0:
        return "cannot be decided (no item differs: a zero-variance interval is no evidence)"
    if (ci["lower"] or 0.0) > 0:
        return "holds: SFT forgets more than GRPO at matched accuracy"
    if (ci["upper"] or 0.0) < 0.05:
        return "does not hold: any extra forgetting by SFT is below 0.05"
    return "cannot be decided at this scale"


def report(args: argparse.Namespace) -> dict[str, Any]:
    rows = load_evals(args.evals, args.size)
    base = rows["base"]
    table = []
    for name, row in rows.items():
        f, lost, gained = forgetting(base["ifeval_items"], row["ifeval_items"])
        row.update(gain=row["dev"] - base["dev"], forgetting=f, lost=lost, gained=gained)
        table.append(
            {
                k: row[k]
                for k in (
                    "arm",
                    "seed",
                    "step",
                    "dev",
                    "gain",
                    "forgetting",
                    "lost",
                    "gained",
                    "ifeval_cut",
                    "kl",
                )
            }
            | {"name": name}
        )
    pairs = matches(rows)
    keys = sorted(base["ifeval_items"])
    per_item = (
        [
            sum(rows[g]["ifeval_items"][k] - rows[s]["ifeval_items"][k] for g, s in pairs)
            / len(pairs)
            for k in keys
        ]
        if pairs
        else []
    )
    primary = item_t(per_item) if per_item else None
    controls = [r for r in rows.values() if r["arm"] == "control"]
    sft_final = [r for r in rows.values() if r["arm"] == "sft" and r["step"] == SFT_STEPS]
    secondary: dict[str, Any] = {}
    by_seed = {r["seed"]: r for r in controls}
    both = [r for r in sft_final if r["seed"] in by_seed]
    if both:  # seeds with a control and an 8-step SFT checkpoint
        ds = [
            sum(by_seed[r["seed"]]["ifeval_items"][k] - r["ifeval_items"][k] for r in both)
            / len(both)
            for k in keys
        ]
        secondary["sft_vs_control_at_8_steps"] = item_t(ds)
    if len(table) >= 4:
        from scipy import stats

        tuned = [t for t in table if t["arm"] != "base"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a constant input is reported as None below
            rho = stats.spearmanr([t["kl"] for t in tuned], [t["forgetting"] for t in tuned])
        value = float(rho.statistic)  # NaN where either list is constant: no correlation
        secondary["spearman_kl_forgetting"] = {
            "rho": None if math.isnan(value) else value,
            "n": len(tuned),
        }
    out = {
        "design": "decision 0194",
        "base": {
            "dev": base["dev"],
            "ifeval": sum(base["ifeval_items"].values()) / len(keys),
            "ifeval_items": len(keys),
            "ifeval_cut": base["ifeval_cut"],
        },
        "checkpoints": sorted(table, key=lambda t: (t["arm"], t["seed"] or 0, t["step"])),
        "pairs": [
            {"grpo": g, "sft": s, "dev_gap": rows[g]["dev"] - rows[s]["dev"]} for g, s in pairs
        ],
        "primary": primary,
        "verdict": verdict(primary) if primary else "no GRPO/SFT pair scored yet",
        "secondary": secondary,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "sweep.json").write_text(json.dumps(out, indent=2) + "\n")
    plot(table, args.out / "sweep.png")
    for t in out["checkpoints"]:
        print(
            f"{t['name']:<16} dev {t['dev']:.3f}  gain {t['gain']:+.3f}  ifeval forgetting "
            f"{t['forgetting']:+.3f} (lost {t['lost']}, gained {t['gained']})  "
            f"cut {t['ifeval_cut']:.2f}  KL {t['kl']:.2f}"
        )
    print("pairs:", out["pairs"])
    print("primary (GRPO minus SFT on ifeval, matched):", primary, "->", out["verdict"])
    print("secondary:", secondary)
    return out


def plot(table: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    marks = {
        "base": ("k", "s"),
        "sft": ("tab:red", "o"),
        "grpo": ("tab:blue", "^"),
        "control": ("tab:grey", "x"),
    }
    for arm, (colour, marker) in marks.items():
        pts = [t for t in table if t["arm"] == arm]
        if not pts:
            continue
        for ax, x in ((left, "gain"), (right, "kl")):
            ax.scatter(
                [t[x] for t in pts],
                [t["forgetting"] for t in pts],
                c=colour,
                marker=marker,
                label=arm,
            )
    left.set_xlabel("new-task gain (lookup-c1 dev success - base)")
    left.set_ylabel("forgetting (ifeval: base - checkpoint)")
    right.set_xlabel("KL(checkpoint || base) on dev prompts, nats per reply")
    for ax in (left, right):
        ax.axhline(0, color="grey", lw=0.5)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    {"sft": train, "eval": evaluate, "report": report}[args.stage](args)


if __name__ == "__main__":
    try:
        main()
    except ConfigError as exc:  # a bad input is one line that says what to do, not a traceback
        raise SystemExit(f"error: {exc}") from None
