"""`workgym train grpo`: GRPO weight updates with TRL on an environment's train split.

What lands in `--out`, every piece a file a person can open:

- `run.json` + `episodes.jsonl`: the training episodes, one line each, in the same run-directory
  format as `workgym eval` (split `train`; `epoch` counts how often a task has been played).
- `reward_curve.jsonl` (+ `reward_curve.png`): one point per generation batch — mean reward,
  success, masked episodes, groups with reward variance. `trainer_log.jsonl`: TRL's own logs.
- `checkpoint/`: the trained model and tokenizer, loadable as `hf/<out>/checkpoint` (LoRA
  adapters are merged in; the adapter alone is kept in `adapter/`).
- `steps/step-NNNN/` (with `--save-every N`): the same, after every N optimizer steps, so one
  run yields checkpoints along training (what `workgym imitation-gap --checkpoints` traces);
  `train.json` lists them under `along` with the episodes trained up to each.
- `train.json`: what was trained from what — `baseline` (the starting model) and `candidate`
  (the checkpoint) as model references `workgym certify` takes, the settings and versions, and
  how many episodes the loss skipped because their advantage was 0 (`signal_only`).

Training never resumes: a directory that already holds a run is refused, so a curve is never a
splice of two runs.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from workgym.core.environment import Environment
from workgym.core.errors import ConfigError
from workgym.core.loading import load
from workgym.core.missing_extra import require
from workgym.core.model import Sampling
from workgym.models.hf import MODEL_META
from workgym.run.rundir import RUN_JSON, RunDir, RunSpec
from workgym.train.trl.rollout import RolloutStats, WorkgymRollout, train_tasks, workgym_reward
from workgym.train.trl.signal_only import signal_only

TRAIN_FORMAT = "workgym-train/1"


class GRPOSettings(BaseModel):
    """Knobs of one GRPO run. Defaults suit a small model; raise steps and tokens for real ones."""

    steps: int = 20
    num_generations: int = 8  # episodes per task in a group (GRPO's G)
    prompts_per_step: int = 4  # tasks per optimizer step
    # Memory: the loss is computed `micro_batch` episodes at a time (gradients accumulate over
    # the step's prompts_per_step * num_generations episodes) with activations recomputed in the
    # backward pass. All 32 episodes at once with stored activations peaked at 20.7 GB for a
    # 135M model on CPU (logits alone are episodes x tokens x 49k vocabulary floats).
    micro_batch: int = 2
    gradient_checkpointing: bool = True
    learning_rate: float = 1e-5
    temperature: float = 1.0
    max_new_tokens: int = 128  # per model turn
    max_completion_length: int = 1024  # whole episode: model turns plus inserted tool tokens
    beta: float = 0.0  # KL to the starting model (0: none, TRL's default)
    lora: bool = False
    lora_rank: int = 16
    vllm_url: str | None = None
    adapter: Literal["rollout", "tools"] = "rollout"
    system_prompt: str = ""
    seed: int = 0
    save_every: int = 0  # also save steps/step-NNNN/ every N optimizer steps (0: final only)


class SavedStep(BaseModel):
    """A checkpoint saved along training (`--save-every`)."""

    model: str  # hf/<out>/steps/step-NNNN, the reference imitation-gap and certify take
    step: int
    # a step whose groups all scored alike trains nothing (signal_only): a checkpoint whose
    # count equals the one before's holds the same weights
    episodes_trained: int


class TrainResult(BaseModel):
    out: Path
    checkpoint: Path
    curve: list[RolloutStats]
    along: list[SavedStep] = []  # in step order


def train_grpo(
    env: Environment | str | Path,
    model: str,
    out: str | Path,
    settings: GRPOSettings | None = None,
    *,
    echo: Callable[[str], None] = print,
    progress: bool = False,
) -> TrainResult:
    """Train `hf/<path>` with GRPO on the train split of `env`; write everything to `out`."""
    settings = settings or GRPOSettings()
    environment = env if isinstance(env, Environment) else load(env)
    if not model.startswith("hf/"):
        raise ConfigError(
            f"train grpo updates local weights: pass --model hf/<dir> (got {model!r}); "
            "serve it with vLLM for speed via --vllm-url"
        )
    root = Path(out)
    if (root / RUN_JSON).exists():
        raise ConfigError(f"{root} already holds a run; training does not resume: pass a new --out")
    if settings.steps < 1 or settings.num_generations < 2:
        raise ConfigError("use --steps >= 1 and --num-generations >= 2 (GRPO compares a group)")
    if settings.save_every < 0:
        raise ConfigError(f"--save-every {settings.save_every}: use 0 (final only) or N >= 1")
    episodes_per_step = settings.prompts_per_step * settings.num_generations
    if settings.micro_batch < 1 or episodes_per_step % settings.micro_batch:
        raise ConfigError(
            f"--micro-batch {settings.micro_batch} must divide the {episodes_per_step} episodes "
            "of a step (--prompts-per-step x --num-generations)"
        )
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from workgym.models.hf import HFModel, load_local, optional_lib

    torch, datasets, transformers, trl = (
        optional_lib(n) for n in ("torch", "datasets", "transformers", "trl")
    )

    network, tokenizer = load_local(model.removeprefix("hf/"), training=True)
    sampling = Sampling(temperature=settings.temperature, max_tokens=settings.max_new_tokens)
    tasks = train_tasks(environment)
    root.mkdir(parents=True, exist_ok=True)
    curve_path = root / "reward_curve.jsonl"
    started = time.perf_counter()

    def on_stats(stats: RolloutStats) -> None:
        with curve_path.open("a", encoding="utf-8") as fh:
            fh.write(stats.model_dump_json() + "\n")
        mean = "n/a" if stats.mean_reward is None else f"{stats.mean_reward:.3f}"
        echo(
            f"step {stats.step:4d}  reward {mean}  success {stats.success_rate:.2f}  "
            f"masked {stats.masked}  varied groups {stats.groups_with_variance}/{stats.groups}  "
            f"{time.perf_counter() - started:6.1f}s"
        )

    common: dict[str, Any] = {
        "model_name": model,
        "system_prompt": settings.system_prompt,
        "seed": settings.seed,
        "on_stats": on_stats,
    }
    policy_model = HFModel(model, model=network, tokenizer=tokenizer)
    meta = {"prefill": policy_model.prefill or "", "stop": list(policy_model.stop)}
    rollout = WorkgymRollout(environment, sampling=sampling, **common)
    run_dir = RunDir.open(root, _spec(environment, rollout.policy(policy_model), settings, tasks))
    trainer_kwargs: dict[str, Any]
    if settings.adapter == "rollout":
        rollout.run_dir = run_dir
        if settings.vllm_url:
            from workgym.train.trl.vllm import server_generator

            rollout.generator_factory = server_generator(settings.vllm_url)
        rows: list[dict[str, Any]] = rollout.dataset_rows()
        trainer_kwargs = {"rollout_func": rollout, "reward_funcs": [workgym_reward]}
    else:
        from workgym.train.trl.env_factory import ToolEnvironmentFactory

        factory = ToolEnvironmentFactory(
            environment, sampling=sampling, run_dir=run_dir,
            num_generations=settings.num_generations, **common,
        )  # fmt: skip
        rows = factory.dataset_rows()
        trainer_kwargs = {"environment_factory": factory, "reward_funcs": [factory.workgym_reward]}

    # the device the weights were loaded onto (--device), not whatever the machine has
    cuda = policy_model.placement.device.startswith("cuda")
    config = trl.GRPOConfig(
        output_dir=str(root / "trainer"),
        use_cpu=policy_model.placement.device == "cpu",
        bf16=cuda and torch.cuda.is_bf16_supported(),
        gradient_checkpointing=settings.gradient_checkpointing,
        num_generations=settings.num_generations,
        per_device_train_batch_size=settings.micro_batch,
        gradient_accumulation_steps=episodes_per_step // settings.micro_batch,
        max_steps=settings.steps,
        learning_rate=settings.learning_rate,
        lr_scheduler_type="constant",
        temperature=settings.temperature,
        max_completion_length=settings.max_completion_length,
        beta=settings.beta,
        seed=settings.seed,
        logging_steps=1,
        save_strategy="no",
        report_to=[],
        disable_tqdm=not progress,
        use_vllm=bool(settings.vllm_url),
        vllm_mode="server",
        vllm_server_base_url=settings.vllm_url,
    )
    peft_config = None
    if settings.lora:
        peft_config = optional_lib("peft").LoraConfig(
            r=settings.lora_rank, lora_alpha=2 * settings.lora_rank,
            target_modules="all-linear", task_type="CAUSAL_LM",
        )  # fmt: skip
    trainer = signal_only(trl.GRPOTrainer)(
        model=network,
        processing_class=tokenizer,
        args=config,
        train_dataset=datasets.Dataset.from_list(rows),
        peft_config=peft_config,
        callbacks=[_log_callback(transformers.TrainerCallback, root / "trainer_log.jsonl")],
        **trainer_kwargs,
    )
    along: list[SavedStep] = []
    if settings.save_every:

        def save_along(step: int) -> None:
            network = trainer.accelerator.unwrap_model(trainer.model)
            directory = _save(
                network, tokenizer, root / "steps" / f"step-{step:04d}", settings.lora, meta
            )
            saved = SavedStep(
                model=f"hf/{directory}", step=step, episodes_trained=int(trainer.rows_trained)
            )
            along.append(saved)
            echo(
                f"checkpoint after step {step} ({saved.episodes_trained} episodes trained so "
                f"far): {directory}"
            )

        trainer.add_callback(_every_callback(transformers.TrainerCallback, settings, save_along))
    if not progress:
        trainer.remove_callback(
            transformers.PrinterCallback
        )  # the reward curve lines say what matters
    try:
        trainer.train()
    finally:
        run_dir.close()
    network = trainer.accelerator.unwrap_model(trainer.model)
    if settings.lora:
        network.save_pretrained(root / "adapter")
    checkpoint = _save(network, tokenizer, root / "checkpoint", settings.lora, meta, final=True)
    history = rollout.history if settings.adapter == "rollout" else factory.history
    _plot(history, root / "reward_curve.png")
    hint = no_signal_hint(history)
    if hint:
        echo(hint)
    record = {
        "format": TRAIN_FORMAT,
        "trainer": "trl.GRPOTrainer",
        "adapter": settings.adapter,
        "env_id": environment.id,
        "env_hash": environment.content_hash(),
        "split": "train",
        "baseline": model,
        "candidate": f"hf/{checkpoint}",
        "along": [saved.model_dump() for saved in along],
        "settings": settings.model_dump(),
        "steps": int(trainer.state.global_step),
        "first_reward": history[0].mean_reward if history else None,
        "last_reward": history[-1].mean_reward if history else None,
        "steps_with_signal": sum(1 for point in history if point.groups_with_variance),
        # episodes the loss saw, and those skipped because their advantage was 0 (signal_only)
        "episodes_trained": trainer.rows_trained,
        "episodes_skipped_zero_advantage": trainer.rows_skipped,
        "versions": _versions(),
        "wall_time_s": round(time.perf_counter() - started, 3),
    }
    (root / "train.json").write_text(json.dumps(record, indent=2) + "\n")
    return TrainResult(out=root, checkpoint=checkpoint, curve=history, along=along)


def no_signal_hint(history: list[RolloutStats]) -> str:
    """A warning when no generation batch held a group whose rewards differed.

    GRPO's advantage is a reward minus its group's mean, so a group that scored alike teaches
    nothing; with every group alike the run spent its compute on a zero gradient (and, with no
    KL term, leaves the weights as they were). Saying so beats a curve that looks merely flat.
    """
    if not history or any(point.groups_with_variance for point in history):
        return ""
    return (
        f"warning: in all {len(history)} steps every group's episodes scored alike, so GRPO had "
        "no gradient to follow; raise --num-generations or --temperature, or train on tasks the "
        "model solves some of the time (workgym eval --split train shows which)"
    )


def _spec(env: Environment, policy: Any, settings: GRPOSettings, tasks: dict[str, Any]) -> RunSpec:
    return RunSpec.for_run(
        env,
        policy,
        split="train",
        epochs=settings.num_generations,
        seed=settings.seed,
        n_tasks=len(tasks),
    )


def _log_callback(base: Any, path: Path) -> Any:
    """A TRL callback that appends every log dict to a JSONL file."""

    class LogFile(base):  # type: ignore[misc]
        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **_: Any) -> None:
            if logs:
                with path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps({"step": state.global_step, **logs}, default=str) + "\n")

    return LogFile()


def _every_callback(base: Any, settings: GRPOSettings, save: Callable[[int], None]) -> Any:
    """A TRL callback that saves a checkpoint every `save_every` optimizer steps.

    The last step is left to the final save (`checkpoint/`), so no step is written twice.
    """

    class SaveEvery(base):  # type: ignore[misc]
        def on_step_end(self, args: Any, state: Any, control: Any, **_: Any) -> None:
            step = int(state.global_step)
            if step % settings.save_every == 0 and step < settings.steps:
                save(step)

    return SaveEvery()


def _save(
    network: Any, tokenizer: Any, directory: Path, lora: bool, meta: dict[str, Any], *,
    final: bool = False,
) -> Path:  # fmt: skip
    """Write a plain model `hf/<directory>` loads. LoRA adapters are merged in: in place at
    the end, into a copy mid-training (the adapters keep training)."""
    if lora:
        import copy

        network = (network if final else copy.deepcopy(network)).merge_and_unload()
    network.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    if meta["prefill"] or meta["stop"]:  # the candidate is played exactly as the baseline was
        (directory / MODEL_META).write_text(json.dumps(meta) + "\n")
    return directory


def _plot(history: list[RolloutStats], path: Path) -> None:
    points = [(s.step, s.mean_reward) for s in history if s.mean_reward is not None]
    if not points:
        return
    require("plots", "the GRPO reward curve", "matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", markersize=3)
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("mean reward (train episodes)")
    ax.set_ylim(-0.05, 1.05)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for name in ("workgym", "torch", "transformers", "trl", "peft", "datasets"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            continue
    return found
