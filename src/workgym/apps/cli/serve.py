"""`workgym serve ENV`: the environment over HTTP + WebSocket, or its tools over MCP (stdio)."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Annotated

import typer

from workgym.apps.cli.env_options import ImportModules, load_env


def register(app: typer.Typer) -> None:
    app.command("serve")(serve_cmd)


def serve_cmd(
    env: Annotated[str, typer.Argument(help="environment id or directory")],
    host: Annotated[str, typer.Option(help="address to bind (loopback by default)")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535)] = 8765,
    token: Annotated[
        list[str] | None,
        typer.Option(
            help="bearer token a client must send (default: one generated); repeat it to give "
            "each client its own token, then each has its own attempt caps and sessions"
        ),
    ] = None,
    idle_timeout: Annotated[
        float, typer.Option("--idle-timeout", min=0.1, help="seconds before an idle session ends")
    ] = 600.0,
    max_sessions: Annotated[int, typer.Option(min=1)] = 1024,
    allow_test: Annotated[
        bool, typer.Option("--allow-test", help="also serve the sealed test split")
    ] = False,
    out: Annotated[
        Path | None, typer.Option("--out", help="run directory for finished episodes")
    ] = None,
    mcp: Annotated[
        bool, typer.Option("--mcp", help="serve the tools as an MCP server on stdin/stdout")
    ] = False,
    imports: ImportModules = None,
    protocol: Annotated[
        str,
        typer.Option(help="WebSocket protocol on /ws: workgym, or openenv (OpenEnv's EnvClient)"),
    ] = "workgym",
    max_body_bytes: Annotated[
        int, typer.Option("--max-body-bytes", min=1024, help="largest request body (413 above)")
    ] = 2**20,
    max_attempts: Annotated[
        int,
        typer.Option(
            "--max-attempts",
            min=0,
            help="resets of one task by one client (token) before 429, over all its sessions "
            "and restarts (0: no cap)",
        ),
    ] = 200,
) -> None:
    """Serve an environment: isolated episodes per session, for remote trainers and agents."""
    import asyncio

    from rich.console import Console

    from workgym.core.missing_extra import require

    require("serve", "workgym serve", "fastapi", "uvicorn")  # before the environment loads
    err = Console(stderr=True, soft_wrap=True)  # stdout is the MCP channel with --mcp
    environment = load_env(env, imports)
    if mcp:
        try:
            from workgym.apps.serve.mcp_server import serve_stdio
        except ImportError as exc:
            raise typer.BadParameter(
                f"--mcp needs the [serve] extra ({exc}): pip install 'workgym[serve]'"
            ) from exc
        err.print(f"workgym: MCP server of {environment.id} on stdio", highlight=False)
        asyncio.run(serve_stdio(environment, allow_test=allow_test, out=out))
        return
    from workgym.apps.cli.ports import bound_port, claim
    from workgym.apps.serve.server import new_token, serve

    with claim(host, port) as sock:  # a busy port fails here, before the URL is printed
        port = bound_port(sock)  # released just before the server binds it again
    secrets = list(token or []) or [new_token()]
    secret = secrets[0]
    if protocol not in ("workgym", "openenv"):
        raise typer.BadParameter(f"--protocol {protocol!r}: use workgym or openenv")
    if protocol == "openenv" and not _is_loopback(host):
        raise typer.BadParameter(
            "OpenEnv's protocol carries no token: serve it on 127.0.0.1 and reach it through an "
            "SSH tunnel or an authenticating proxy"
        )
    if not _is_loopback(host):
        err.print(
            f"[yellow]warning:[/] binding {host}: anyone who can reach this port and holds the "
            "token can run episodes; put it behind TLS outside a trusted network",
            highlight=False,
        )
    print(f"serving {environment.id} on http://{host}:{port} (WebSocket: ws://{host}:{port}/ws)")
    if protocol == "openenv":
        print(
            "protocol: openenv; next: from workgym.adapters.openenv_adapter import "
            f"WorkgymEnvClient; WorkgymEnvClient(base_url='http://{host}:{port}')",
            flush=True,
        )
    if token is None:
        print(f"token: {secret}" + (" (HTTP routes only)" if protocol == "openenv" else ""))
    if protocol == "workgym":
        print(
            f"next: from workgym.apps.serve.client import EnvClient; "
            f"EnvClient('http://{host}:{port}', TOKEN).reset()",
            flush=True,
        )
    serve(
        environment,
        host=host,
        port=port,
        token=secret,
        tokens=secrets[1:],
        idle_timeout_s=idle_timeout,
        max_sessions=max_sessions,
        allow_test=allow_test,
        out=out,
        protocol=protocol,
        max_body_bytes=max_body_bytes,
        max_attempts=max_attempts or None,
    )


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
