"""The hidden side of a task, for the person reading the transcript (never for an agent).

A run records which environment it ran against (`env_ref`: a registered id or a directory) and
that environment's content hash. The run folder is data someone may have sent: its `env_ref`
is looked up only under the served root, and a directory's code is imported only when it is an
installed, registered environment (workgym.core.loading). The viewer loads it once per run,
shows each task's prompt, answer and meta next to the transcript, and says plainly when the
environment cannot be loaded or has changed since the run (then the answer shown may not be the
one the verifier used).
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

    def _candidates(self, ref: str, run: Path) -> list[Path]:
        """Environment directories `ref` may name, inside the served root only: relative to the
        root or to one of the run's parents under it (eval often ran there). A run folder was
        possibly sent by someone else, so its `env_ref` never reaches outside what is served."""
        root = self.root.resolve()
        path = Path(ref)
        bases = [root, *(p for p in run.resolve().parents if p.is_relative_to(root))]
        found: list[Path] = []
        # A relative ref is as the run's command saw it (`runs/demo/env` from the checkout);
        # served from `runs/demo/`, its tail (`env`) is what lies under the root.
        parts = path.parts
        tails = [path] if path.is_absolute() else [Path(*parts[i:]) for i in range(len(parts))]
        for tail in tails:
            for base in [Path("/")] if path.is_absolute() else bases:
                candidate = (base / tail).resolve()
                if not candidate.is_relative_to(root) or candidate in found:
                    continue
                if (candidate / "manifest.json").is_file():
                    found.append(candidate)
        return found

    def _load(self, ref: str, run: Path) -> tuple[Any, list[str]]:
        """The environment `ref` names: a registered id (installed code), or a directory under
        the root whose manifest names an installed, registered class (core.environment.load
        refuses any other unless the user typed --trust)."""
        from workgym.core.loading import load, registered

        errors: list[str] = []
        candidates = self._candidates(ref, run)
        factory = registered().get(ref)
        if factory is not None and not candidates:
            try:
                return factory(), errors
            except Exception as exc:  # shown on the page, never raised
                return None, [f"{ref}: {exc}"]
        if not candidates:
            return None, [f"{ref}: no environment directory of that name under the served root"]
        for candidate in candidates:
            try:
                return load(candidate), errors
            except Exception as exc:  # shown on the page, never raised
                errors.append(f"{candidate.relative_to(self.root.resolve())}: {exc}")
        return None, errors

    def environment(self, run: Path) -> tuple[Any, str | None]:
        """(environment or None, a warning or error for the page)."""
        spec = read_spec(run)
        key = (spec.env_ref, run)
        with self._lock:
            if key in self._envs:
                return self._envs[key]
            env, errors = self._load(spec.env_ref, run)
            note: str | None = None
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
