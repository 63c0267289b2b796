"""The hidden side of a task, for the person reading the transcript (never for an agent).

A run records which environment it ran against (`env_ref`: a registered id or a directory) and
that environment's content hash. The viewer loads it once per run, shows each task's prompt,
answer and meta next to the transcript, and says plainly when the environment cannot be loaded
or has changed since the run (then the answer shown may not be the one the verifier used).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from workgym.run.rundir import read_spec


class GroundTruth:
    """Environments loaded for runs, cached by (env_ref, run dir)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock = threading.Lock()
        self._envs: dict[tuple[str, Path], tuple[Any, str | None]] = {}

    def _candidates(self, ref: str, run: Path) -> list[str]:
        """Where a directory env_ref may be: as written (relative to where eval ran, often the
        current directory), or relative to the served directory or the run's parents."""
        path = Path(ref)
        if path.is_absolute():
            return [ref]
        bases = [Path.cwd(), self.root, *run.parents]
        seen: list[str] = []
        for base in bases:
            candidate = base / path
            if (candidate / "manifest.json").is_file() and str(candidate) not in seen:
                seen.append(str(candidate))
        return seen or [ref]

    def environment(self, run: Path) -> tuple[Any, str | None]:
        """(environment or None, a warning or error for the page)."""
        spec = read_spec(run)
        key = (spec.env_ref, run)
        with self._lock:
            if key in self._envs:
                return self._envs[key]
            from workgym.core.loading import load

            env: Any = None
            note: str | None = None
            errors = []
            for ref in self._candidates(spec.env_ref, run):
                try:
                    env = load(ref)
                    break
                except Exception as exc:  # any failure to load is shown, never raised
                    errors.append(f"{ref}: {exc}")
            if env is None:
                note = (
                    f"ground truth unavailable: cannot load environment {spec.env_ref!r} "
                    f"({'; '.join(errors)}); run the viewer where that environment is installed"
                )
            elif env.content_hash() != spec.env_hash:
                note = (
                    f"environment {spec.env_ref!r} changed since this run (hash "
                    f"{env.content_hash()[:12]} != run {spec.env_hash[:12]}): answers shown are "
                    "today's, not necessarily the ones the verifier used"
                )
            self._envs[key] = (env, note)
            return env, note

    def task(self, run: Path, task_id: str) -> dict[str, Any]:
        """The task's prompt, hidden answer and meta, or why they cannot be shown."""
        env, note = self.environment(run)
        if env is None:
            return {"available": False, "note": note}
        if task_id not in env.taskset:
            return {
                "available": False,
                "note": f"task {task_id!r} is not in environment {env.id!r} any more",
            }
        task = env.taskset[task_id]
        prompt = (
            task.prompt if isinstance(task.prompt, str) else [m.model_dump() for m in task.prompt]
        )
        return {
            "available": True,
            "note": note,
            "env_id": env.id,
            "family": task.family,
            "prompt": prompt,
            "answer": task.answer,
            "meta": task.meta,
        }
