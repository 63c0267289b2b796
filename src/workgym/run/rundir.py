"""The run directory: run.json plus an append-only episodes.jsonl, the single source of truth.

Every finished episode is one line, written and flushed as it finishes, so a killed run loses at
most the episodes that were still in flight. Re-opening the directory with the same spec resumes:
finished (task, epoch) pairs are skipped. Nothing here ever rewrites a finished line.

`workgym eval --retry-errors` re-runs episodes that ended in a provider or infrastructure error.
The old line stays where it is; superseded.jsonl (append-only too) names its line number, and
every reader here skips superseded lines, so a summary counts each (task, epoch) once.
"""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from workgym.core import datafiles
from workgym.core.episode import Episode, upgrade_record
from workgym.core.errors import ConfigError
from workgym.core.missing_extra import missing

if TYPE_CHECKING:
    from workgym.core.environment import Environment
    from workgym.core.run_limits import RunLimits
    from workgym.run.policy import Policy

RUN_FORMAT = "workgym-run/1"
RUN_JSON = "run.json"
EPISODES = "episodes.jsonl"
SUPERSEDED = "superseded.jsonl"
MAX_RUN_JSON = 1_000_000  # characters read of run.json (a real one is a few kilobytes)


class Superseded(BaseModel):
    """One line of superseded.jsonl: line `line` of episodes.jsonl was replaced by a retry."""

    line: int
    task_id: str
    epoch: int
    reason: str
    at: str


def superseded_lines(run: str | Path) -> set[int]:
    """Line numbers (1-based) of RUN/episodes.jsonl that a later line replaced."""
    path = Path(run) / SUPERSEDED
    if not datafiles.present(path):
        return set()
    lines = set()
    with datafiles.open_text(path) as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                lines.add(Superseded.model_validate_json(line).line)
            except ValueError as exc:
                raise ConfigError(
                    f"{path}:{lineno} is corrupt ({exc}); it is append-only: restore it from a "
                    "backup rather than editing it"
                ) from exc
    return lines


class RunSpec(BaseModel):
    """What a run is; a resumed run must match it field for field (except when it was made)."""

    format: str = RUN_FORMAT
    env_id: str
    env_version: str
    env_hash: str
    env_ref: str
    policy: dict[str, Any]
    policy_hash: str
    split: str
    epochs: int
    seed: int
    n_tasks: int
    limits: dict[str, Any]
    split_spec: dict[str, Any]
    versions: dict[str, str] = Field(default_factory=dict)
    created_at: str = ""
    forced: list[str] = Field(default_factory=list)
    # where a local model's weights were ({"device": "cuda", "dtype": "bfloat16"}); {} for a
    # remote one. Not compared on resume by itself: any placement but the CPU's float32 is in
    # the policy hash already (run.policy), and old runs have no such field.
    placement: dict[str, str] = Field(default_factory=dict)
    sample: int | None = None
    """`--sample N`: the run plays a seeded, family-stratified sample of N tasks (run.sample)."""
    run_limits: dict[str, Any] | None = None
    """The run's own per-episode budgets (core.run_limits), when it set any."""

    @classmethod
    def for_run(
        cls,
        env: Environment,
        policy: Policy,
        *,
        split: str,
        epochs: int,
        seed: int,
        n_tasks: int,
        env_ref: str | None = None,
        forced: Iterable[str] = (),
        sample: int | None = None,
        run_limits: RunLimits | None = None,
    ) -> RunSpec:
        """The spec of a run of `policy` on `env`, read the same way by every writer of a run
        directory (eval, served episodes, GRPO): the environment's identity, limits and split
        design, the policy's description, hash and placement. `env_ref` is how the run was
        asked for (an id or a saved folder); by default the environment's folder, else its id.
        Run limits that are all off are no limits, so a run from before them resumes."""
        return cls(
            env_id=env.id,
            env_version=env.version,
            env_hash=env.content_hash(),
            env_ref=env_ref if env_ref is not None else str(env.root or env.id),
            policy=policy.describe(),
            policy_hash=policy.hash,
            split=split,
            epochs=epochs,
            seed=seed,
            n_tasks=n_tasks,
            limits=env.limits.model_dump(),
            split_spec=env.taskset.split_spec.model_dump(),
            forced=sorted(forced),
            placement=policy.placement.describe() if policy.placement is not None else {},
            sample=sample,
            run_limits=None if run_limits is None or run_limits.off() else run_limits.model_dump(),
        )

    def identity(self) -> dict[str, Any]:
        return self.model_dump(exclude={"created_at", "versions", "env_ref", "placement"})


def versions() -> dict[str, str]:
    from importlib.metadata import version

    from workgym.core.version import __version__

    return {
        "workgym": __version__,
        "python": platform.python_version(),
        "pydantic": version("pydantic"),
    }


class RunDir:
    """An open run directory; use `RunDir.open` to create or resume one."""

    def __init__(self, path: Path, spec: RunSpec) -> None:
        self.path = path
        self.spec = spec
        self._fh: IO[str] | None = None

    @property
    def episodes_path(self) -> Path:
        return self.path / EPISODES

    @classmethod
    def open(cls, path: str | Path, spec: RunSpec) -> RunDir:
        """Create the directory, or resume it when it holds a run with the same identity."""
        root = Path(path)
        run_json = root / RUN_JSON
        if datafiles.present(run_json):
            existing = read_spec(root)
            mine, theirs = spec.identity(), existing.identity()
            diffs = [k for k in mine if mine[k] != theirs.get(k)]
            if diffs:
                what = ", ".join(
                    f"{k}: {_short(theirs.get(k))} -> {_short(mine[k])}" for k in diffs
                )
                hint = (
                    " (it was played without run limits: resume it with --max-repeats 0 "
                    "--episode-seconds 0)"
                    if diffs == ["run_limits"] and theirs.get("run_limits") is None
                    else ""
                )
                raise ConfigError(
                    f"{root} holds a different run ({what}){hint}; pass a new --out, "
                    "or delete that directory to start over"
                )
            run = cls(root, existing)
            run._repair_torn_tail()
            return run
        if root.exists() and any(root.iterdir()):
            raise ConfigError(f"{root} exists and is not a run directory; pass a new --out")
        root.mkdir(parents=True, exist_ok=True)
        stamped = spec.model_copy(
            update={"created_at": datetime.now(UTC).isoformat(), "versions": versions()}
        )
        tmp = run_json.with_suffix(".tmp")
        if datafiles.present(tmp):
            tmp.unlink()  # a leftover of a killed start (or a planted link): never written through
        with datafiles.open_text(tmp, "w") as fh:
            fh.write(stamped.model_dump_json(indent=2) + "\n")
        os.replace(tmp, run_json)
        return cls(root, stamped)

    def _repair_torn_tail(self) -> None:
        """A kill mid-write can leave a final line without its newline: an unfinished record.

        It is moved aside to episodes.torn (kept, never silently dropped), so the episode simply
        runs again.
        """
        path = self.episodes_path
        if not datafiles.present(path):
            return
        with datafiles.open_bytes(path) as fh:
            if fh.seek(0, os.SEEK_END) == 0:
                return
            fh.seek(-1, os.SEEK_END)
            if fh.read(1) == b"\n":
                return
            fh.seek(0)
            data = fh.read()
        cut = data.rfind(b"\n") + 1
        with datafiles.open_bytes(self.path / "episodes.torn", "a") as torn:
            torn.write(data[cut:] + b"\n")
        with datafiles.open_bytes(path, "a") as fh:
            fh.truncate(cut)
        import warnings

        warnings.warn(
            f"{path}: its last line was cut off mid-write (a kill or a full disk); moved it to "
            f"{self.path / 'episodes.torn'}, and that episode runs again",
            stacklevel=3,
        )

    def finished(self) -> set[tuple[str, int]]:
        return {(r["task_id"], r["epoch"]) for r in self.records()}

    def records(self) -> Iterator[dict[str, Any]]:
        """Current episode lines as dicts (superseded ones skipped); a corrupt line is an error.

        Lines written before the record's extensions existed come back in the current shape
        (`workgym.core.episode.upgrade_record`); the file is never rewritten."""
        for _, record in self.numbered():
            yield record

    def numbered(self, *, superseded: bool = False) -> Iterator[tuple[int, dict[str, Any]]]:
        """(line number, record) of every current line, or of every line with `superseded`."""
        return numbered_records(self.path, superseded=superseded)

    def errored(self) -> dict[tuple[str, int], int]:
        """Current lines that ended in an error (provider or infrastructure: an agent's own
        fault is a verdict, not an error), by (task, epoch): what --retry-errors re-runs."""
        return {
            (r["task_id"], r["epoch"]): lineno
            for lineno, r in self.numbered()
            if r.get("outcome") == "error"
        }

    def supersede(self, line: int, task_id: str, epoch: int, reason: str) -> None:
        """Mark line `line` replaced (before its replacement is appended: a kill in between
        leaves a gap that the next resume fills, never a duplicate)."""
        mark = Superseded(
            line=line, task_id=task_id, epoch=epoch, reason=reason, at=datetime.now(UTC).isoformat()
        )
        with datafiles.open_text(self.path / SUPERSEDED, "a") as fh:
            fh.write(mark.model_dump_json() + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def episodes(self) -> Iterator[Episode]:
        for record in self.records():
            yield Episode.model_validate(record)

    def append(self, episode: Episode) -> None:
        if self._fh is None:
            self._fh = datafiles.open_text(self.episodes_path, "a")
        self._fh.write(episode.model_dump_json() + "\n")
        self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def duckdb(self) -> Any:
        """A DuckDB connection with views `episodes` (raw) and `episode_scores` (flat)."""
        return connect_runs([self.path])


def numbered_records(
    run: str | Path, *, superseded: bool = False
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) of every current line of RUN/episodes.jsonl (lines --retry-errors
    replaced skipped), or of every line with `superseded`; nothing when there is no file. Lines
    from before decision 0120 come back in the current shape; a corrupt line is an error. The
    one reader of the file: `RunDir` and the certificate's `comparison` both use it."""
    root = Path(run)
    path = root / EPISODES
    if not datafiles.present(path):
        return
    skip = set() if superseded else superseded_lines(root)
    with datafiles.open_text(path) as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip() or lineno in skip:
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ConfigError(
                    f"{path}:{lineno} is corrupt ({exc.msg}); move that line out of the "
                    "file (the episode will run again on resume)"
                ) from exc
            yield lineno, upgrade_record(record)


def read_spec(path: str | Path) -> RunSpec:
    root = Path(path)
    run_json = root / RUN_JSON
    if not datafiles.present(run_json):
        raise ConfigError(f"{root} is not a run directory (no {RUN_JSON}); pass the --out of a run")
    text = datafiles.read_text(run_json, limit=MAX_RUN_JSON)
    try:
        spec = RunSpec.model_validate_json(text)
    except ValueError as exc:
        raise ConfigError(
            f"{run_json} is corrupt ({exc}); start a new run with a new --out"
        ) from exc
    if spec.format != RUN_FORMAT:
        raise ConfigError(f"{root} has format {spec.format!r}; this workgym reads {RUN_FORMAT}")
    return spec


def connect_runs(paths: list[Path]) -> Any:
    """DuckDB over one or more run directories' JSONL, for ad-hoc analysis in SQL."""
    try:
        import duckdb
    except ImportError as exc:
        raise missing(exc, "viewer", "SQL over run folders") from exc

    files = [
        str(datafiles.check_regular(p / EPISODES)) for p in paths if datafiles.present(p / EPISODES)
    ]
    if not files:
        raise ConfigError("no episodes.jsonl in the given run directories yet")
    con = duckdb.connect()
    listing = ", ".join("'" + f.replace("'", "''") + "'" for f in files)
    con.execute(
        "CREATE VIEW episodes AS SELECT * FROM read_json("
        f"[{listing}], format='newline_delimited', union_by_name=true, filename=true)"
    )
    con.execute(
        """CREATE VIEW episode_scores AS SELECT
             filename AS run_file, task_id, family, split, epoch, seed, model, outcome,
             verdict.reward AS reward, verdict.success AS success, verdict.status AS status,
             usage.prompt_tokens + usage.completion_tokens AS tokens, turns, wall_time_s
           FROM episodes"""
    )
    return con


def _short(value: Any) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, str) else value
    return text if len(text) <= 24 else text[:21] + "..."
