"""The viewer's HTTP surface: a JSON API over PATH and one static page that renders it.

Read-only by construction: every route is a GET except POST /api/review, which appends one line
to a run's reviews.jsonl. Every path a request names goes through `Workspace.resolve` (refused
outside PATH), and every file in a run folder is opened by workgym.core.datafiles (no links,
regular files only), so a received run whose reviews.jsonl, episodes.jsonl or run.json links
elsewhere is refused (403) and nothing outside PATH is read or written. The page renders data
with textContent only, and a strict Content-Security-Policy (no inline script) backs that up, so
agent output that contains HTML or script is shown as text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from fastapi import FastAPI, Query, Request
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel

from workgym.apps.viewer import certificate_view, playbook_view
from workgym.apps.viewer.compare_view import compare_runs
from workgym.apps.viewer.episode_view import build_steps, findings, flag_view
from workgym.apps.viewer.groundtruth import GroundTruth
from workgym.apps.viewer.queries import EpisodeFilter, RunQueries
from workgym.apps.viewer.reviews import (
    Review,
    append_review,
    episode_flags,
    latest_by_flag,
    read_reviews,
    review_counts,
)
from workgym.apps.viewer.workspace import (
    CERTIFICATE_MARKER,
    PLAYBOOK_MARKER,
    OutsideRoot,
    Workspace,
)
from workgym.core.datafiles import LinkedFile
from workgym.core.errors import ConfigError
from workgym.run.rundir import read_spec

STATIC = Path(__file__).parent / "static"
PAGE_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; frame-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'self'"
)
# Files under PATH (certificate.html and its plots) get no script at all, even opened directly.
FILE_CSP = (
    "sandbox; default-src 'none'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
    "font-src data:; frame-ancestors 'self'"
)
FILE_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".png": "image/png",
    ".svg": "image/svg+xml",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".css": "text/css",
}


class ReviewIn(BaseModel):
    run: str
    task_id: str
    epoch: int
    flag: str
    decision: Literal["accepted", "exploit"]
    note: str = ""


def create_app(root: str | Path, *, allowed_hosts: set[str] | None = None) -> FastAPI:
    """The viewer for everything under `root`.

    `allowed_hosts`: Host header names accepted (defends a 127.0.0.1 server against DNS
    rebinding); None accepts any (for a server bound to a public interface on purpose).
    """
    ws = Workspace(root)
    queries = RunQueries()
    truth = GroundTruth(ws.root)
    app = FastAPI(title="workgym viewer", docs_url=None, redoc_url=None, openapi_url=None)

    @app.middleware("http")
    async def guard(request: Request, call_next: Any) -> Response:
        host = (request.headers.get("host") or "").rsplit(":", 1)[0].strip("[]")
        if allowed_hosts is not None and host not in allowed_hosts:
            return JSONResponse({"error": f"host {host!r} not served here"}, status_code=403)
        if request.method not in ("GET", "HEAD") and request.url.path != "/api/review":
            return JSONResponse({"error": "the viewer is read-only"}, status_code=405)
        if request.method == "POST":
            origin = request.headers.get("origin")
            if origin and origin.split("://", 1)[-1] != request.headers.get("host"):
                return JSONResponse({"error": "cross-origin writes are refused"}, 403)
            if not request.headers.get("content-type", "").startswith("application/json"):
                return JSONResponse({"error": "send the review as application/json"}, 415)
        response: Response = await call_next(request)
        is_file = request.url.path.startswith("/files/")
        response.headers["Content-Security-Policy"] = FILE_CSP if is_file else PAGE_CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["Cache-Control"] = "no-store"
        return response

    @app.exception_handler(OutsideRoot)
    async def outside(_: Request, exc: OutsideRoot) -> JSONResponse:
        return JSONResponse({"error": f"refused: {exc}"}, status_code=403)

    @app.exception_handler(LinkedFile)
    async def linked(_: Request, exc: LinkedFile) -> JSONResponse:
        return JSONResponse({"error": f"refused: {_relative(ws, str(exc))}"}, status_code=403)

    @app.exception_handler(FileNotFoundError)
    async def missing(_: Request, exc: FileNotFoundError) -> JSONResponse:
        return JSONResponse({"error": str(exc)}, status_code=404)

    @app.exception_handler(ValueError)
    async def bad(_: Request, exc: ValueError) -> JSONResponse:
        return JSONResponse({"error": str(exc)}, status_code=400)

    @app.exception_handler(ConfigError)
    async def config(_: Request, exc: ConfigError) -> JSONResponse:
        return JSONResponse({"error": str(exc)}, status_code=422)

    @app.get("/")
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    @app.get("/favicon.ico")
    def favicon() -> Response:
        return Response(status_code=204)

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    def run_card(rel: str) -> dict[str, Any]:
        """One row of the Runs page; a run whose run.json or episodes cannot be read is one row
        with its error, never a failed page (issue 39, item 5)."""
        path = ws.run_dir(rel)
        try:
            spec = read_spec(path)
        except ConfigError as exc:
            return {"path": rel, "error": _relative(ws, str(exc))}
        card: dict[str, Any] = {
            "path": rel,
            "env_id": spec.env_id,
            "model": spec.policy.get("model"),
            "split": spec.split,
            "epochs": spec.epochs,
            "n_tasks": spec.n_tasks,
            "created_at": spec.created_at,
            "forced": spec.forced,
        }
        try:
            card["summary"] = queries.summary(path).model_dump()
            card["reviews"] = review_counts(path)
            idx = queries.index(path)
            card["unreadable"] = idx.unreadable
        except Exception as exc:  # one broken run must not hide the others
            card["error"] = _relative(ws, f"{type(exc).__name__}: {exc}")
        return card

    @app.get("/api/tree")
    def tree() -> dict[str, Any]:
        found = ws.scan()
        return {
            "root": str(ws.root),
            "runs": [run_card(r) for r in found.runs],
            "environments": found.environments,
            "playbooks": found.playbooks,
            "certificates": found.certificates,
        }

    @app.get("/api/run")
    def run_info(run: str) -> dict[str, Any]:
        path = ws.run_dir(run)
        return {**run_card(run), "spec": read_spec(path).model_dump(), **_facets(path)}

    def _facets(path: Path) -> dict[str, Any]:
        return {"facets": queries.facets(path)}

    @app.get("/api/episodes")
    def episodes(
        run: str,
        split: str | None = None,
        family: str | None = None,
        status: str | None = None,
        outcome: str | None = None,
        flag: str | None = None,
        success: bool | None = None,
        q: str | None = None,
        sort: str = "line",
        order: Literal["asc", "desc"] = "asc",
        offset: int = Query(0, ge=0),
        limit: int = Query(50, ge=1, le=500),
    ) -> dict[str, Any]:
        flt = EpisodeFilter(
            split=split,
            family=family,
            status=status,
            outcome=outcome,
            flag=flag,
            success=success,
            q=q,
        )
        return queries.list_episodes(
            ws.run_dir(run), flt, sort=sort, order=order, offset=offset, limit=limit
        )

    @app.get("/api/episode")
    def episode(run: str, task_id: str, epoch: int) -> dict[str, Any]:
        path = ws.run_dir(run)
        record = queries.episode(path, task_id, epoch)
        if record is None:
            raise FileNotFoundError(f"no episode {task_id!r} epoch {epoch} in {run!r}")
        record.pop("trainer", None)  # token ids are for trainers, not readers
        steps = build_steps(record)
        gt = truth.task(path, task_id)
        history = read_reviews(path, task_id, epoch)
        flags = flag_view(record, steps)
        return {
            "run": run,
            "record": record,
            "steps": steps,
            "flags": flags,
            "findings": findings(record, gt, steps, flags),
            "truth": gt,
            "reviews": {"latest": latest_by_flag(history), "history": history},
        }

    @app.post("/api/review")
    def review(body: ReviewIn) -> dict[str, Any]:
        path = ws.run_dir(body.run)
        record = queries.episode(path, body.task_id, body.epoch)
        if record is None:
            raise FileNotFoundError(f"no episode {body.task_id!r} epoch {body.epoch}")
        flags = episode_flags(record)
        if body.flag not in flags:
            raise ValueError(f"episode has no flag {body.flag!r}; its flags: {flags}")
        written = append_review(
            path,
            Review(
                task_id=body.task_id,
                epoch=body.epoch,
                flag=body.flag,
                decision=body.decision,
                note=body.note[:2000],
            ),
        )
        return {"written": written.model_dump()}

    @app.get("/api/compare")
    def compare(
        a: str,
        b: str,
        all: bool = False,
        offset: int = Query(0, ge=0),
        limit: int = Query(100, ge=1, le=500),
    ) -> dict[str, Any]:
        return compare_runs(
            queries,
            ws.run_dir(a),
            ws.run_dir(b),
            only_disagreements=not all,
            offset=offset,
            limit=limit,
        )

    def _marked(rel: str, marker: str) -> Path:
        path = ws.resolve(rel)
        if not (path / marker).is_file():
            raise FileNotFoundError(f"{rel!r} has no {marker}")
        return path

    @app.get("/api/playbook")
    def playbook(path: str) -> dict[str, Any]:
        return playbook_view.read_playbook(_marked(path, PLAYBOOK_MARKER), ws.root)

    @app.get("/api/playbook/diff")
    def playbook_diff(path: str, a: str, b: str) -> dict[str, Any]:
        return playbook_view.diff_versions(_marked(path, PLAYBOOK_MARKER), a, b)

    @app.get("/api/certificate")
    def certificate(path: str) -> dict[str, Any]:
        return certificate_view.read_certificate(_marked(path, CERTIFICATE_MARKER), ws.root)

    @app.get("/files/{rel:path}")
    def files(rel: str) -> FileResponse:
        path = ws.resolve(rel)
        kind = FILE_TYPES.get(path.suffix.lower())
        if kind is None or not path.is_file():
            raise FileNotFoundError(f"the viewer serves only reports and plots, not {rel!r}")
        return FileResponse(path, media_type=kind)

    return app


def _relative(ws: Workspace, message: str) -> str:
    """`message` with the served root's absolute path shortened to `.` (the page names files by
    their path under PATH)."""
    return message.replace(str(ws.root) + "/", "").replace(str(ws.root), ".")
