"""Plumbing that several bench scripts share, so that they measure and configure the same way.

- overhead.py and scale.py time the same work: a scripted three-turn episode on
  workgym/toy-shop (`three_turns`, `toy_eval`).
- playbook_real.py and swarm_real.py talk to the same kind of endpoint and train playbooks with
  the same knobs (`add_endpoint_args`, `add_training_args`, `train_config`).
- sft_checkpoint_lookup.py and sft_checkpoint_toy_examples.py make claim 1's SFT checkpoints
  with the same settings (`sft_checkpoint`).

Bench scripts are files, not a package: run as `python bench/NAME.py` this folder is on
sys.path already; a script that the tests load by path appends it before importing from here.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import workgym as wg
from workgym.core.messages import Message, ToolCall
from workgym.envs.toy.env import ToyShop

if TYPE_CHECKING:
    from workgym.train.playbook.config import TrainConfig


def three_turns(task: wg.Task, env: wg.Environment) -> list[Message]:
    def turn(i: int, name: str, args: dict[str, object]) -> Message:
        return Message(
            role="assistant",
            tool_calls=[ToolCall(id=f"c{i}", name=name, arguments=json.dumps(args))],
        )

    return [
        turn(0, "get_item", {"name": "assam"}),
        turn(1, "get_item", {"name": "saffron"}),
        turn(2, "submit_answer", {"answer": task.answer}),
    ]


def toy_eval(
    model: Any, episodes: int, concurrency: int, executor: Any = "asyncio"
) -> tuple[int, float]:
    """Episodes played and wall seconds of whole epochs of toy-shop (at least `episodes`).

    The run directory is written to a temporary folder: writing it is part of what is timed.
    """
    env = ToyShop()
    epochs = -(-episodes // len(env.taskset))
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        run = wg.eval(
            env,
            model,
            split="all",
            epochs=epochs,
            concurrency=concurrency,
            out=Path(tmp) / "run",
            progress=False,
            executor=executor,
        )
        elapsed = time.perf_counter() - started
        summary = run.summary()
    assert summary.success_rate == 1.0, "the bench script must solve every task"
    return summary.n_episodes, elapsed


def count_of(what: str, *, least: int) -> Callable[[str], int]:
    """An argparse type: a whole number of `what`, `least` or more (one line if not)."""

    def parse(text: str) -> int:
        if not text.isdigit() or int(text) < least:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a number of {what}: give {least} or more"
            )
        return int(text)

    return parse


def openai_name(name: str) -> str:
    """A bare name is a model on the endpoint (`openai/<name>`); a name with a registered provider
    prefix (`hf/smollm2-135m`, a local checkpoint `hf/<dir>`, `llamacpp/qwen2.5-coder-1.5b`,
    `scripted/...`) runs as it is, offline."""
    from workgym.models import PROVIDERS

    provider = name.partition("/")[0]
    return name if provider in PROVIDERS or provider == "scripted" else f"openai/{name}"


def add_endpoint_args(p: argparse.ArgumentParser, *, whose: str) -> None:
    """The endpoint and the model names on it; `whose` is how the help names the agent(s)."""
    p.add_argument(
        "--base-url",
        default=None,
        help="OpenAI-compatible endpoint, e.g. .../v1 (not needed for hf/ models, which run here)",
    )
    p.add_argument("--api-key", default=None)
    p.add_argument("--model", required=True, help=f"the {whose} model name on that endpoint")
    p.add_argument("--reflector-model", default=None, help=f"default: the {whose} model")


def add_training_args(
    p: argparse.ArgumentParser,
    *,
    max_epochs: int,
    group_size: int,
    batch_size: int,
    dev_k: int,
    gate_tasks: int,
) -> None:
    """The playbook-training knobs `train_config` reads; each study picks its own defaults."""
    p.add_argument("--budget-tokens", type=int, default=None, help="per training run")
    p.add_argument("--max-iterations", type=int, default=None)
    p.add_argument("--max-epochs", type=int, default=max_epochs)
    p.add_argument("--group-size", type=int, default=group_size)
    p.add_argument("--batch-size", type=int, default=batch_size)
    p.add_argument("--dev-k", type=int, default=dev_k)
    p.add_argument("--gate-tasks", type=int, default=gate_tasks)
    p.add_argument(
        "--reflector-max-tokens", type=int, default=4000, help="bound of one reflection reply"
    )
    p.add_argument(
        "--no-reflector-schema",
        dest="reflector_schema",
        action="store_false",
        help="let the reflector reply freely (runs from before the schema resume with this)",
    )


def train_config(args: argparse.Namespace, *, temperature: float, **extra: Any) -> TrainConfig:
    """The training knobs, plus --seed, --max-tokens and --concurrency, which every study has
    (each with its own help), and what only one study sets (`extra`)."""
    # Imported here so that overhead.py's peak-RSS figure does not include the trainer.
    from workgym.train.playbook.config import TrainConfig

    return TrainConfig(
        seed=args.seed,
        group_size=args.group_size,
        batch_size=args.batch_size,
        dev_k=args.dev_k,
        gate_tasks=args.gate_tasks,
        max_epochs=args.max_epochs,
        max_iterations=args.max_iterations,
        budget_tokens=args.budget_tokens,
        temperature=temperature,
        max_tokens=args.max_tokens,
        concurrency=args.concurrency,
        reflector_max_tokens=args.reflector_max_tokens,
        reflector_schema=args.reflector_schema,
        **extra,
    )


def sft_checkpoint(
    env: wg.Environment, tasks: list[wg.Task], out: str, save_at: list[int] | None = None
) -> None:
    """SmolLM2-135M fine-tuned on `tasks`' oracle trajectories with claim 1's SFT settings (20
    steps of 4, lr 2e-5, seed 0); prints the losses. The checkpoint loads as `hf/OUT/checkpoint`,
    each `save_at` step as `hf/OUT/steps/step-NNNN`."""
    import asyncio

    from workgym.models.hf import HFModel
    from workgym.train.sft import SFTSettings, gold_examples, train_sft

    examples = asyncio.run(gold_examples(env, tasks, HFModel("hf/smollm2-135m").chat))
    started = time.perf_counter()
    settings = SFTSettings(
        steps=20, batch_size=4, learning_rate=2e-5, seed=0, save_at=save_at or []
    )
    result = train_sft("hf/smollm2-135m", examples, out, settings)
    print(json.dumps({"env": env.id, "tasks": len(tasks), "examples": result.examples,
                      "losses": result.losses, "checkpoint": str(result.checkpoint),
                      "seconds": round(time.perf_counter() - started, 1)}))  # fmt: skip
