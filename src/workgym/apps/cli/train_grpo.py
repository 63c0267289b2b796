"""`workgym train grpo ENV --model hf/PATH [--lora] [--vllm-url URL] --out DIR`.

Only typer is imported here; torch and TRL load when the command runs, so `workgym --help`
stays fast and the base install (no torch) still lists the command.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from workgym.apps.cli.device_options import Device, Dtype, use_placement
from workgym.apps.cli.env_options import ImportModules, import_modules
from workgym.apps.cli.hints import next_line


def register(train_app: typer.Typer) -> None:
    train_app.command("grpo")(grpo)


def grpo(
    env: Annotated[str, typer.Argument(help="environment id or directory")],
    model: Annotated[str, typer.Option(help="hf/<dir>: the local model whose weights train")],
    out: Annotated[
        Path, typer.Option(help="run directory; must be new: GRPO training does not resume")
    ],
    steps: Annotated[int, typer.Option(min=1, help="optimizer steps")] = 20,
    num_generations: Annotated[int, typer.Option(min=2, help="episodes per task (group)")] = 8,
    prompts_per_step: Annotated[int, typer.Option(min=1, help="tasks per step")] = 4,
    micro_batch: Annotated[
        int, typer.Option(min=1, help="episodes per forward/backward pass (bounds memory)")
    ] = 2,
    gradient_checkpointing: Annotated[
        bool, typer.Option(help="recompute activations in the backward pass (less memory)")
    ] = True,
    learning_rate: Annotated[float, typer.Option(help="AdamW learning rate")] = 1e-5,
    temperature: Annotated[float, typer.Option(help="sampling temperature")] = 1.0,
    max_new_tokens: Annotated[int, typer.Option(min=1, help="tokens per model turn")] = 128,
    max_completion_length: Annotated[
        int, typer.Option(min=1, help="tokens per episode, model and tool tokens together")
    ] = 1024,
    lora: Annotated[bool, typer.Option(help="train LoRA adapters (merged on save)")] = False,
    lora_rank: Annotated[int, typer.Option(min=1)] = 16,
    vllm_url: Annotated[
        str | None, typer.Option(help="`trl vllm-serve` address for generation (GPU)")
    ] = None,
    adapter: Annotated[
        str, typer.Option(help="rollout (workgym plays episodes) or tools (TRL's tool loop)")
    ] = "rollout",
    system_prompt: Annotated[str, typer.Option(help="extra system text")] = "",
    seed: int = 0,
    save_every: Annotated[
        int, typer.Option(min=0, help="also save steps/step-NNNN/ every N steps (0: final only)")
    ] = 0,
    imports: ImportModules = None,
    device: Device = "auto",
    dtype: Dtype = "auto",
) -> None:
    """Update weights with GRPO (TRL) on the train split; save a checkpoint and the curve."""
    from rich.console import Console

    from workgym.core.errors import ConfigError

    if adapter not in ("rollout", "tools"):
        raise ConfigError(f"--adapter {adapter!r}: use rollout or tools")
    use_placement(device, dtype)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        # before the weights load (a minute on CPU): GRPO's optimizer state is not saved, so
        # training never resumes; commands whose work is on disk (eval, train playbook) do
        raise ConfigError(
            f"--out {out} already exists: GRPO training does not resume, so each run needs a "
            "new folder; pass a new --out (eval and train playbook resume theirs)"
        )
    import_modules(imports)
    try:
        from workgym.train.trl.grpo import GRPOSettings, train_grpo
    except ImportError as exc:
        raise ConfigError(
            f"train grpo needs the [train] extra ({exc}): "
            "pip install torch==2.13.0 && pip install 'workgym[train]'"
        ) from exc
    console = Console(soft_wrap=True)
    settings = GRPOSettings(
        steps=steps,
        num_generations=num_generations,
        prompts_per_step=prompts_per_step,
        micro_batch=micro_batch,
        gradient_checkpointing=gradient_checkpointing,
        learning_rate=learning_rate,
        temperature=temperature,
        max_new_tokens=max_new_tokens,
        max_completion_length=max_completion_length,
        lora=lora,
        lora_rank=lora_rank,
        vllm_url=vllm_url,
        adapter="tools" if adapter == "tools" else "rollout",
        system_prompt=system_prompt,
        seed=seed,
        save_every=save_every,
    )
    result = train_grpo(env, model, out, settings, echo=console.print)
    console.print(f"reward curve: {result.out / 'reward_curve.jsonl'}")
    console.print(f"checkpoint: {result.checkpoint}")
    if result.along:
        models = [*(saved.model for saved in result.along), f"hf/{result.checkpoint}"]
        refs = " ".join(f"--checkpoints {ref}" for ref in models)
        console.print(f"along training: workgym imitation-gap {env} --model {model} {refs}")
    console.print(
        next_line(
            "certify", env, "--baseline-model", model,
            "--candidate-model", f"hf/{result.checkpoint}", imports=imports,
        ),
        highlight=False,
    )  # fmt: skip
