"""`workgym serve-model MODEL`: a local `hf/` model behind OpenAI chat completions."""

from __future__ import annotations

from typing import Annotated

import typer

from workgym.apps.cli.device_options import Device, Dtype, use_placement


def register(app: typer.Typer) -> None:
    app.command("serve-model")(serve_model_cmd)


def serve_model_cmd(
    model: Annotated[str, typer.Argument(help="hf/<dir> or a built-in name: hf/smollm2-135m")],
    host: Annotated[str, typer.Option(help="address to bind (loopback by default)")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535)] = 8000,
    max_new_tokens: Annotated[
        int, typer.Option("--max-new-tokens", min=1, help="tokens per reply unless asked for")
    ] = 256,
    device: Device = "auto",
    dtype: Dtype = "auto",
) -> None:
    """Serve a local model on /v1/chat/completions (tools, tool results, usage, logprobs)."""
    from workgym.apps.cli.serve import _is_loopback
    from workgym.core.errors import ConfigError

    if not model.startswith("hf/"):
        raise ConfigError(
            f"serve-model serves local models: pass hf/<dir> or hf/smollm2-135m (got {model!r})"
        )
    use_placement(device, dtype)
    if not _is_loopback(host):
        raise ConfigError(
            f"serve-model binds loopback only (got --host {host}); it has no authentication: "
            "put a reverse proxy with TLS and auth in front to share it"
        )
    try:
        from workgym.apps.serve.model_server import serve
        from workgym.models.hf import HFModel
    except ImportError as exc:
        raise ConfigError(
            f"serve-model needs the [train] and [serve] extras ({exc}): "
            "pip install torch==2.13.0 && pip install 'workgym[train,smol,serve]'"
        ) from exc
    served = HFModel(model, max_new_tokens=max_new_tokens)
    model_id = model.removeprefix("hf/")
    print(f"serving {served.name} on http://{host}:{port}/v1 (model id {model_id!r})")
    print(
        f"next: workgym eval workgym/toy-shop --model openai/{model_id} "
        f"--base-url http://{host}:{port}/v1",
        flush=True,
    )
    serve(served, model_id=model_id, host=host, port=port)
