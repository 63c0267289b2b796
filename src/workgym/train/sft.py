"""Supervised patches: fine-tune a local model on the oracle's trajectories (TRL `SFTTrainer`).

This is the imitation baseline workgym argues against, built honestly so the comparison is fair:
the model is trained on the gold trajectories of the environment's own train split (the oracle
played through the real episode loop, tool results included), with the loss on the assistant
tokens only, tokenised exactly as the model's chat template renders them. What it costs and what
it changes are then measured like any other candidate: `workgym certify` against the base model
on the sealed test split and the regression suites (`bench/sft_patch.py`).

Examples are pre-tokenised (`input_ids` + `assistant_masks`), so TRL applies no template of its
own and the mask is ours: a token is trained on exactly when the chat template rendered it as part
of an assistant turn.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from workgym.core.errors import ConfigError

if TYPE_CHECKING:
    from workgym.core.environment import Environment
    from workgym.core.messages import Message
    from workgym.core.tasks import Task
    from workgym.core.tools import ToolSpec

SFT_FORMAT = "workgym-sft/1"


class SFTSettings(BaseModel):
    """Knobs of one supervised patch. `steps` x `batch_size` examples is the data budget."""

    steps: int = 20
    batch_size: int = 4
    learning_rate: float = 2e-5
    max_length: int = 2048
    gradient_checkpointing: bool = True
    seed: int = 0
    save_at: list[int] = []
    """Also save `steps/step-NNNN/` after these optimizer steps (below `steps`), so one run gives
    the checkpoints of a budget sweep: the schedule is constant, so the model after step k is the
    model a k-step run with the same seed ends with."""


class Example(BaseModel):
    """One tokenised gold trajectory with the mask of the tokens the loss is computed on."""

    task_id: str
    family: str
    input_ids: list[int]
    assistant_masks: list[int]
    """1 where the token belongs to an assistant turn (trained on), 0 elsewhere."""


class SFTResult(BaseModel):
    out: Path
    checkpoint: Path
    along: list[Path] = []
    """`steps/step-NNNN/` checkpoints, one per `save_at` step, in step order."""
    losses: list[float]
    """Training loss at every optimizer step, as TRL logged it."""
    examples: int


def tokenize_conversation(
    chat: Any, messages: list[Message], tools: list[ToolSpec]
) -> tuple[list[int], list[int]]:
    """Token ids of a whole conversation and its assistant mask, segment by segment.

    Each assistant turn is the text the template adds between the prompt with a generation header
    and the conversation including that turn; everything else (system, user, tool replies,
    headers) is masked out. A template that does not extend its own prefixes is refused.
    """
    ids: list[int] = []
    mask: list[int] = []
    done = ""
    for index, message in enumerate(messages):
        if message.role != "assistant":
            continue
        head = chat.render(messages[:index], tools, generation=True)
        full = chat.render(messages[: index + 1], tools, generation=False)
        if not head.startswith(done) or not full.startswith(head):
            raise ConfigError(
                "the chat template does not extend its own prefixes, so assistant tokens "
                "cannot be masked exactly; use a model whose template renders turns in order"
            )
        for text, bit in ((head[len(done) :], 0), (full[len(head) :], 1)):
            piece = chat.encode(text)
            ids.extend(piece)
            mask.extend([bit] * len(piece))
        done = full
    return ids, mask


async def gold_examples(
    env: Environment, tasks: list[Task], chat: Any, *, system_prompt: str = ""
) -> list[Example]:
    """Tokenised oracle trajectories of `tasks`; tasks the oracle cannot solve are left out."""
    from workgym.run.gold import gold_trajectory

    out: list[Example] = []
    for task in tasks:
        try:
            gold = await gold_trajectory(env, task, system_prompt)
        except (NotImplementedError, ValueError):
            continue
        ids, mask = tokenize_conversation(chat, gold, env.toolkit(task).specs)
        out.append(
            Example(task_id=task.id, family=task.family, input_ids=ids, assistant_masks=mask)
        )
    return out


def train_sft(
    model: str,
    examples: list[Example],
    out: str | Path,
    settings: SFTSettings | None = None,
) -> SFTResult:
    """Fine-tune `hf/<dir>` on `examples`; the checkpoint loads as `hf/<out>/checkpoint`."""
    settings = settings or SFTSettings()
    if not model.startswith("hf/"):
        raise ConfigError(
            f"a supervised patch updates local weights: pass hf/<dir> (got {model!r})"
        )
    if not examples:
        raise ConfigError("no gold trajectories to train on (does the oracle solve the tasks?)")
    if any(not 1 <= k < settings.steps for k in settings.save_at):
        raise ConfigError(
            f"save_at {settings.save_at}: each step must lie in 1..{settings.steps - 1} "
            "(the last step is the checkpoint itself)"
        )
    root = Path(out)
    if (root / "sft.json").exists():
        raise ConfigError(f"{root} already holds a supervised patch; pass a new --out")
    from workgym.models.hf import load_local
    from workgym.models.placement import placement_of

    datasets, torch, trl = (_heavy(n) for n in ("datasets", "torch", "trl"))

    network, tokenizer = load_local(model.removeprefix("hf/"), training=True)
    network.train()
    device = placement_of(network).device  # where --device put the weights
    rows = [{"input_ids": e.input_ids, "assistant_masks": e.assistant_masks} for e in examples]
    config = trl.SFTConfig(
        output_dir=str(root / "trainer"),
        use_cpu=device == "cpu",
        bf16=device.startswith("cuda") and torch.cuda.is_bf16_supported(),
        max_steps=settings.steps,
        per_device_train_batch_size=settings.batch_size,
        learning_rate=settings.learning_rate,
        lr_scheduler_type="constant",
        max_length=settings.max_length,
        gradient_checkpointing=settings.gradient_checkpointing,
        logging_steps=1,
        save_strategy="no",
        report_to=[],
        seed=settings.seed,
        disable_tqdm=True,
    )
    started = time.perf_counter()
    trainer = trl.SFTTrainer(
        model=network,
        args=config,
        train_dataset=datasets.Dataset.from_list(rows),
        processing_class=tokenizer,
    )
    along: list[Path] = []

    def save(step: int) -> None:
        directory = root / "steps" / f"step-{step:04d}"
        trainer.model.save_pretrained(directory)
        tokenizer.save_pretrained(directory)
        along.append(directory)

    trainer.add_callback(_at_steps_callback(_heavy("transformers").TrainerCallback, settings, save))
    trainer.train()
    losses = [float(h["loss"]) for h in trainer.state.log_history if "loss" in h]
    checkpoint = root / "checkpoint"
    trainer.model.save_pretrained(checkpoint)
    tokenizer.save_pretrained(checkpoint)
    record = {
        "format": SFT_FORMAT,
        "trainer": "trl.SFTTrainer",
        "baseline": model,
        "candidate": f"hf/{checkpoint}",
        "along": [f"hf/{d}" for d in along],
        "examples": len(examples),
        "families": sorted({e.family for e in examples}),
        "settings": settings.model_dump(),
        "losses": losses,
        "wall_time_s": round(time.perf_counter() - started, 3),
    }
    (root / "sft.json").write_text(json.dumps(record, indent=2) + "\n")
    return SFTResult(
        out=root, checkpoint=checkpoint, along=along, losses=losses, examples=len(examples)
    )


def _at_steps_callback(base: Any, settings: SFTSettings, save: Any) -> Any:
    """A TRL callback that saves after each optimizer step listed in `settings.save_at`."""
    wanted = set(settings.save_at)

    class SaveAt(base):  # type: ignore[misc]
        def on_step_end(self, args: Any, state: Any, control: Any, **_: Any) -> None:
            if int(state.global_step) in wanted:
                save(int(state.global_step))

    return SaveAt()


def _heavy(name: str) -> Any:
    """A [train] extra library, imported where it is used and typed as Any."""
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise ConfigError(
            f"{name} is not installed ({exc}): pip install torch==2.13.0 && "
            "pip install 'workgym[train]'"
        ) from exc


def masked_loss(network: Any, example: Example) -> float:
    """Mean cross-entropy of the assistant tokens of one example: what SFT's loss is over."""
    torch = _heavy("torch")

    device = next(network.parameters()).device
    ids = torch.tensor([example.input_ids], device=device)
    with torch.no_grad():
        logits = network(ids).logits[0, :-1].float()
    targets = ids[0, 1:]
    keep = torch.tensor(example.assistant_masks[1:], dtype=torch.bool, device=device)
    losses = torch.nn.functional.cross_entropy(logits, targets, reduction="none")
    return float(losses[keep].mean())
