"""`workgym view PATH`: serve the viewer on 127.0.0.1 and print its URL."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from workgym.apps.cli.env_options import ImportModules, import_modules

VIEW_PORT = 8766
"""Not `workgym serve`'s 8765: a viewer and a served environment often run side by side."""


def view(
    path: Annotated[Path, typer.Argument(help="folder with runs, environments, playbooks")],
    host: Annotated[
        str, typer.Option(help="interface to bind; anything but 127.0.0.1 exposes your runs")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="0 picks a free port")] = VIEW_PORT,
    imports: ImportModules = None,
) -> None:
    """Read transcripts against ground truth in a local web viewer (read-only except flag
    reviews)."""
    from workgym.core.missing_extra import require

    require("viewer", "workgym view", "fastapi", "uvicorn", "duckdb")
    import uvicorn
    from rich.console import Console

    from workgym.apps.cli.ports import bound_port, claim
    from workgym.apps.viewer.app import create_app
    from workgym.core.errors import ConfigError

    if not path.is_dir():
        raise ConfigError(f"{path} is not a directory; pass the folder that holds your runs")
    import_modules(imports)  # so ground truth loads for runs of your own environments
    local = host in ("127.0.0.1", "localhost", "::1")
    allowed = {"127.0.0.1", "localhost", "::1"} if local else None
    app = create_app(path, allowed_hosts=allowed)
    sock = claim(host, port)  # a busy port fails here, before a URL is printed
    port = bound_port(sock)
    shown = f"[{host}]" if ":" in host else host
    console = Console(soft_wrap=True)
    console.print(f"workgym viewer for {path.resolve()}")
    console.print(f"open: http://{shown}:{port}/", highlight=False)
    if not local:
        console.print(f"[yellow]warning:[/] bound to {host}: anyone who can reach it sees the runs")
    console.print("stop: Ctrl+C")
    from workgym.apps.serve.deadline import DEFAULT_READ_TIMEOUT_S, with_read_timeout

    config = uvicorn.Config(
        app, log_level="warning", http=with_read_timeout(DEFAULT_READ_TIMEOUT_S)
    )
    uvicorn.Server(config).run(sockets=[sock])


def register(app: typer.Typer) -> None:
    app.command("view")(view)
