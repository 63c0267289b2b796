"""DuckDB over episodes.jsonl: list, filter, sort and page episodes without loading transcripts.

Each run gets a flat index table (one row per JSONL line: ids, verdict fields, counts, flags),
built by DuckDB straight from the file with explicit column types, so a transcript is never parsed
into Python objects just to be listed. Rows keep file order (DuckDB preserves insertion order), so
a row's `line` plus a byte-offset table lets the episode page seek to exactly one line. The index
is rebuilt when the file changes (episodes.jsonl is append-only, so a size/mtime check suffices).

Every file is opened through workgym.core.datafiles (no links, regular files only), and DuckDB is
handed a path only after the same check. A record longer than MAX_RECORD_BYTES is listed from its
index row but never parsed whole for the episode page: the page gets a placeholder that says so
(a 60 MB transcript line once gave a bare 500; issue 39, item 5).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from workgym.core import datafiles
from workgym.core.episode import upgrade_record
from workgym.run.rundir import EPISODES, read_spec, superseded_lines
from workgym.run.summary import Summary, summarize

MAX_INDEX_BYTES = (
    64 * 2**20
)  # longest line the index reads (DuckDB buffers 2x per thread); longer: unreadable
MAX_RECORD_BYTES = 8 * 2**20  # longest line the episode page parses and sends; longer: placeholder

# Only these fields are read from the JSONL for the index; transcripts stay on disk.
_COLUMNS = (
    "{task_id: 'VARCHAR', epoch: 'BIGINT', family: 'VARCHAR', split: 'VARCHAR', model: 'VARCHAR',"
    " outcome: 'VARCHAR', error: 'VARCHAR', truncation: 'VARCHAR', turns: 'BIGINT',"
    " wall_time_s: 'DOUBLE', started_at: 'VARCHAR', flags: 'VARCHAR[]', audit: 'JSON',"
    " verdict: 'JSON',"
    " usage: 'JSON', answer: 'JSON', submitted: 'BOOLEAN', tool_calls: 'JSON'}"
)

_SELECT = """
SELECT task_id, epoch, family, split, model, outcome, left(error, 300) AS error, truncation,
  coalesce(turns, 0) AS turns, coalesce(wall_time_s, 0) AS wall_time_s, started_at,
  coalesce(json_extract_string(verdict, '$.status'), 'error') AS status,
  coalesce(TRY_CAST(json_extract(verdict, '$.success') AS BOOLEAN), false) AS success,
  coalesce(TRY_CAST(json_extract(verdict, '$.reward') AS DOUBLE), 0.0) AS reward,
  coalesce(TRY_CAST(json_extract(usage, '$.prompt_tokens') AS BIGINT), 0) AS prompt_tokens,
  coalesce(TRY_CAST(json_extract(usage, '$.completion_tokens') AS BIGINT), 0)
    AS completion_tokens,
  coalesce(json_extract(usage, '$.by_role')::VARCHAR, '{}') AS by_role,
  list_sort(list_distinct(list_concat(
    coalesce(json_extract_string(audit, '$.flags[*]'), flags, []),
    coalesce(json_extract_string(verdict, '$.flags[*]'), [])))) AS flags,
  coalesce(json_array_length(tool_calls), 0) AS n_tool_calls,
  len(list_filter(coalesce(json_extract_string(tool_calls, '$[*].status'), []),
    x -> x <> 'ok')) AS n_tool_errors,
  CASE WHEN coalesce(submitted, false) THEN left(answer::VARCHAR, 120) END AS answer_preview
FROM read_json(?, format='newline_delimited', ignore_errors=true, columns={columns},
  maximum_object_size={max_object})
""".replace("{columns}", _COLUMNS).replace("{max_object}", str(MAX_INDEX_BYTES))

SORTABLE = {
    "line": "line",
    "task_id": "task_id",
    "epoch": "epoch",
    "family": "family",
    "split": "split",
    "status": "status",
    "success": "success",
    "reward": "reward",
    "tokens": "tokens",
    "turns": "turns",
    "wall_time_s": "wall_time_s",
    "n_tool_errors": "n_tool_errors",
    "n_flags": "len(flags)",
    "outcome": "outcome",
}

LIST_COLUMNS = (
    "line, task_id, epoch, family, split, status, success, reward, tokens, turns, wall_time_s, "
    "n_tool_calls, n_tool_errors, flags, outcome, truncation, error, answer_preview"
)


class EpisodeFilter(BaseModel):
    """What the episode list is narrowed to; every field is optional and combines with AND."""

    split: str | None = None
    family: str | None = None
    status: str | None = None
    outcome: str | None = None
    flag: str | None = None  # a flag name, or "*" for any flag
    success: bool | None = None
    q: str | None = Field(default=None, description="substring of task id or family")

    def where(self) -> tuple[str, list[Any]]:
        clauses, params = ["task_id IS NOT NULL"], []
        for name in ("split", "family", "status", "outcome"):
            value = getattr(self, name)
            if value:
                clauses.append(f"{name} = ?")
                params.append(value)
        if self.flag == "*":
            clauses.append("len(flags) > 0")
        elif self.flag:
            clauses.append("list_contains(flags, ?)")
            params.append(self.flag)
        if self.success is not None:
            clauses.append("success = ?")
            params.append(self.success)
        if self.q:
            clauses.append("(contains(task_id, ?) OR contains(family, ?))")
            params += [self.q, self.q]
        return " AND ".join(clauses), params


@dataclass
class _Index:
    table: str
    stamp: tuple[int, int]
    offsets: list[int]
    rows: int
    unreadable: int
    summary: Summary | None = None
    facets: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _line_offsets(path: Path) -> tuple[list[int], bool]:
    """Byte offset of every non-blank line, in file order (the rows DuckDB produces), and whether
    some line is longer than the index reads."""
    offsets, pos, too_long = [], 0, False
    with datafiles.open_bytes(path) as fh:
        for line in fh:
            if line.strip():
                offsets.append(pos)
                too_long = too_long or len(line) > MAX_INDEX_BYTES
            pos += len(line)
    return offsets, too_long


class RunQueries:
    """One in-memory DuckDB database holding a flat index per run directory."""

    def __init__(self, memory_limit: str = "1GB", threads: int = 2) -> None:
        import duckdb

        self._con = duckdb.connect(config={"memory_limit": memory_limit, "threads": threads})
        self._lock = threading.Lock()
        self._indexes: dict[Path, _Index] = {}
        self._scratch: Path | None = None

    def _cursor(self) -> Any:
        return self._con.cursor()

    def index(self, run: Path) -> _Index:
        """The run's index, rebuilt first if episodes.jsonl changed since it was built."""
        episodes = run / EPISODES
        stat = datafiles.check_regular(episodes).stat() if datafiles.present(episodes) else None
        stamp = (stat.st_size, stat.st_mtime_ns) if stat else (0, 0)
        with self._lock:
            current = self._indexes.get(run)
            if current is not None and current.stamp == stamp:
                return current
            table = "run_" + hashlib.sha1(str(run).encode()).hexdigest()[:16]
            cur = self._cursor()
            if stat is None or stat.st_size == 0:
                cur.execute(_empty_table_sql(table))
                offsets: list[int] = []
                rows, unreadable = 0, 0
            else:
                offsets, too_long = _line_offsets(episodes)
                rows, unreadable = (0, 0) if too_long else self._build(cur, table, episodes)
                if too_long or unreadable or rows != len(offsets):
                    # A corrupt line can swallow its neighbours in DuckDB's reader: index only
                    # the lines that parse, from a clean copy outside the (read-only) run dir.
                    clean, offsets, unreadable = self._clean_copy(episodes, table)
                    rows, _ = self._build(cur, table, clean)
                else:
                    rows -= self._drop_superseded(cur, table, run)
            built = _Index(table, stamp, offsets, rows + unreadable, unreadable)
            self._indexes[run] = built
            return built

    def _drop_superseded(self, cur: Any, table: str, run: Path) -> int:
        """Leave out lines a --retry-errors re-run replaced (run.rundir), as every summary does."""
        lines = sorted(n - 1 for n in superseded_lines(run))  # the index counts lines from 0
        if not lines:
            return 0
        cur.execute(f"DELETE FROM {table} WHERE list_contains(?, line)", [lines])
        return len(lines)

    def _build(self, cur: Any, table: str, source: Path) -> tuple[int, int]:
        """Create the index table from `source`; (rows, rows without a task id)."""
        # Insertion order is preserved, so the raw table's rowid is the line number.
        cur.execute(f"CREATE OR REPLACE TEMP TABLE {table}_raw AS {_SELECT}", [str(source)])
        cur.execute(
            f"CREATE OR REPLACE TABLE {table} AS SELECT rowid AS line, *, "
            f"prompt_tokens + completion_tokens AS tokens FROM {table}_raw ORDER BY rowid"
        )
        cur.execute(f"DROP TABLE {table}_raw")
        rows, missing = cur.execute(
            f"SELECT count(*), count(*) FILTER (WHERE task_id IS NULL) FROM {table}"
        ).fetchone()
        return int(rows), int(missing)

    def _clean_copy(self, episodes: Path, table: str) -> tuple[Path, list[int], int]:
        """The lines of `episodes` that parse as JSON objects, their offsets, and the bad count."""
        if self._scratch is None:
            self._scratch = Path(tempfile.mkdtemp(prefix="workgym-viewer-"))
        clean = self._scratch / f"{table}.jsonl"
        offsets, bad, pos = [], 0, 0
        with datafiles.open_bytes(episodes) as src, clean.open("wb") as dst:
            for line in src:
                if line.strip():
                    try:
                        ok = len(line) <= MAX_INDEX_BYTES and isinstance(json.loads(line), dict)
                    except ValueError:
                        ok = False
                    if ok:
                        offsets.append(pos)
                        dst.write(line if line.endswith(b"\n") else line + b"\n")
                    else:
                        bad += 1
                pos += len(line)
        return clean, offsets, bad

    def close(self) -> None:
        self._con.close()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)

    def list_episodes(
        self,
        run: Path,
        flt: EpisodeFilter,
        *,
        sort: str = "line",
        order: Literal["asc", "desc"] = "asc",
        offset: int = 0,
        limit: int = 50,
    ) -> dict[str, Any]:
        """One page of episodes matching `flt`, plus the total that match."""
        idx = self.index(run)
        if sort not in SORTABLE:
            raise ValueError(f"cannot sort by {sort!r}; use one of {', '.join(SORTABLE)}")
        direction = "DESC" if order == "desc" else "ASC"
        where, params = flt.where()
        cur = self._cursor()
        total = cur.execute(f"SELECT count(*) FROM {idx.table} WHERE {where}", params).fetchone()
        rows = cur.execute(
            f"SELECT {LIST_COLUMNS} FROM {idx.table} WHERE {where} "
            f"ORDER BY {SORTABLE[sort]} {direction} NULLS LAST, line LIMIT ? OFFSET ?",
            [*params, max(1, min(limit, 500)), max(0, offset)],
        )
        names = [d[0] for d in rows.description]
        return {
            "total": int(total[0]),
            "offset": offset,
            "rows": [dict(zip(names, r, strict=True)) for r in rows.fetchall()],
        }

    def facets(self, run: Path) -> dict[str, Any]:
        """Distinct values (with counts) of every filterable column, for the filter menus."""
        idx = self.index(run)
        if idx.facets is not None:
            return idx.facets
        cur = self._cursor()
        out: dict[str, Any] = {}
        for name in ("split", "family", "status", "outcome", "success"):
            out[name] = [
                {"value": v, "count": int(c)}
                for v, c in cur.execute(
                    f"SELECT {name}, count(*) FROM {idx.table} WHERE task_id IS NOT NULL "
                    f"GROUP BY 1 ORDER BY 1"
                ).fetchall()
            ]
        out["flag"] = [
            {"value": v, "count": int(c)}
            for v, c in cur.execute(
                f"SELECT f, count(*) FROM (SELECT unnest(flags) AS f FROM {idx.table}) "
                "GROUP BY 1 ORDER BY 2 DESC, 1"
            ).fetchall()
        ]
        out["rows"] = idx.rows - idx.unreadable
        out["unreadable"] = idx.unreadable
        idx.facets = out
        return out

    def summary(self, run: Path) -> Summary:
        """workgym.run.summary.summarize over the index rows (not the transcripts), cached."""
        idx = self.index(run)
        if idx.summary is not None:
            return idx.summary
        spec = read_spec(run)
        cur = self._cursor()
        result = cur.execute(
            "SELECT task_id, outcome, reward, success, status, flags, prompt_tokens, "
            f"completion_tokens, by_role FROM {idx.table} WHERE task_id IS NOT NULL ORDER BY line"
        )

        def records() -> Any:
            while batch := result.fetchmany(10_000):
                for task_id, outcome, reward, success, status, flags, pt, ct, roles in batch:
                    yield {
                        "task_id": task_id,
                        "outcome": outcome or "error",
                        "verdict": {"reward": reward, "success": success, "status": status},
                        "flags": flags,
                        "usage": {
                            "prompt_tokens": pt,
                            "completion_tokens": ct,
                            "by_role": json.loads(roles) if roles else {},
                        },
                    }

        idx.summary = summarize(
            records(),
            epochs=spec.epochs,
            run=str(run),
            env_id=spec.env_id,
            model=str(spec.policy.get("model", "")),
            split=spec.split,
        )
        return idx.summary

    def episode(self, run: Path, task_id: str, epoch: int) -> dict[str, Any] | None:
        """The full stored record of one episode: one seek, one line parsed."""
        idx = self.index(run)
        hit = (
            self._cursor()
            .execute(
                f"SELECT line FROM {idx.table} WHERE task_id = ? AND epoch = ? ORDER BY line "
                "DESC LIMIT 1",
                [task_id, epoch],
            )
            .fetchone()
        )
        if hit is None:
            return None
        line = int(hit[0])
        if line < len(idx.offsets):
            with datafiles.open_bytes(run / EPISODES) as fh:
                fh.seek(idx.offsets[line])
                head = fh.readline(MAX_RECORD_BYTES + 1)
                if len(head) > MAX_RECORD_BYTES:
                    size = len(head)
                    while chunk := fh.readline(2**20):  # its length, without holding it
                        size += len(chunk)
                        if chunk.endswith(b"\n"):
                            break
                    return self._placeholder(idx, line, size)
                try:
                    record: dict[str, Any] = json.loads(head)
                except (json.JSONDecodeError, UnicodeDecodeError):
                    record = {}
            if record.get("task_id") == task_id and record.get("epoch") == epoch:
                return upgrade_record(record)  # lines from before decision 0120, too
        found = _scan_for(run / EPISODES, task_id, epoch)  # offsets disagree: the slow way
        return None if found is None else upgrade_record(found)

    def _placeholder(self, idx: _Index, line: int, size: int) -> dict[str, Any]:
        """What the episode page shows for a record too long to parse and send: its index row
        (ids, outcome, verdict fields, counts) and a note saying why the transcript is absent."""
        cur = self._cursor().execute(
            "SELECT task_id, epoch, family, split, model, outcome, error, truncation, turns, "
            f"wall_time_s, started_at, status, success, reward, prompt_tokens, completion_tokens, "
            f"flags FROM {idx.table} WHERE line = ?",
            [line],
        )
        names = [d[0] for d in cur.description]
        row = dict(zip(names, cur.fetchone() or [None] * len(names), strict=True))
        note = (
            f"this episode's record is {size / 2**20:.1f} MB, over the viewer's "
            f"{MAX_RECORD_BYTES // 2**20} MB display cap: its transcript is not shown; read line "
            f"{line + 1} of episodes.jsonl with a streaming tool (e.g. `jq -c` or DuckDB)"
        )
        return {
            **{k: row[k] for k in ("task_id", "epoch", "family", "split", "model", "outcome")},
            **{k: row[k] for k in ("truncation", "turns", "wall_time_s", "started_at")},
            "error": note + (f"; its error: {row['error']}" if row.get("error") else ""),
            "audit": {"flags": row.get("flags") or []},
            "verdict": {k: row[k] for k in ("status", "success", "reward")},
            "usage": {k: row[k] for k in ("prompt_tokens", "completion_tokens")},
            "messages": [],
            "tool_calls": [],
            "too_large": {"bytes": size, "cap": MAX_RECORD_BYTES, "note": note},
        }

    def table(self, run: Path) -> str:
        return self.index(run).table

    def cursor(self) -> Any:
        return self._cursor()


def _scan_for(path: Path, task_id: str, epoch: int) -> dict[str, Any] | None:
    found = None
    with datafiles.open_bytes(path) as fh:
        for line in fh:
            if len(line) > MAX_RECORD_BYTES:
                continue
            try:
                record = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                continue
            if not isinstance(record, dict):
                continue
            if record.get("task_id") == task_id and record.get("epoch") == epoch:
                found = record  # the last one wins, as in the index
    return found


def _empty_table_sql(table: str) -> str:
    return (
        f"CREATE OR REPLACE TABLE {table} (line BIGINT, task_id VARCHAR, epoch BIGINT, "
        "family VARCHAR, split VARCHAR, model VARCHAR, outcome VARCHAR, error VARCHAR, "
        "truncation VARCHAR, turns BIGINT, wall_time_s DOUBLE, started_at VARCHAR, "
        "status VARCHAR, success BOOLEAN, reward DOUBLE, prompt_tokens BIGINT, "
        "completion_tokens BIGINT, by_role VARCHAR, flags VARCHAR[], n_tool_calls BIGINT, "
        "n_tool_errors BIGINT, answer_preview VARCHAR, tokens BIGINT)"
    )
