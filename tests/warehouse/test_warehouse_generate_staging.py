"""`generate warehouse` over an existing `--out`, and killed midway (issue 39, item 5).

A killed generate re-run into the same `--out` ends with the same content hash (and the same
tasks, byte for byte) as an uninterrupted one; an existing environment is refused without
`--overwrite`, and a generate killed while overwriting leaves the old environment as it was.
The kills are real SIGKILLs of the `workgym generate` process, taken while it writes its
staging folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from workgym.core.errors import ConfigError
from workgym.envs.warehouse.generate.pipeline import GenerateOptions, generate

TASKS = "20"


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small warehouse: customers and their orders, with keys."""
    path = tmp_path_factory.mktemp("src") / "shop.duckdb"
    con = duckdb.connect(str(path))
    con.execute(
        """
        CREATE TABLE customers (id INTEGER PRIMARY KEY, email VARCHAR UNIQUE, city VARCHAR,
                                signup DATE);
        CREATE TABLE orders (order_id INTEGER PRIMARY KEY,
                             customer_id INTEGER REFERENCES customers(id),
                             amount DECIMAL(10,2), placed TIMESTAMP, status VARCHAR);
        INSERT INTO customers SELECT i, 'c' || i || '@x.com',
          ['Boston', 'Chicago', 'New York', 'Denver'][1 + i % 4], DATE '2020-01-01' + i::INTEGER
          FROM range(1, 301) t(i);
        INSERT INTO orders SELECT i, 1 + i % 300, (i * 7.25)::DECIMAL(10,2),
          TIMESTAMP '2024-03-10 12:00:00' + INTERVAL (i) HOUR,
          CASE WHEN i % 3 = 0 THEN 'open' ELSE 'shipped' END FROM range(1, 3001) t(i);
        """
    )
    con.close()
    return path


def _command(source: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "workgym", "generate", "warehouse", "--db",
            f"duckdb://{source}", "--out", str(out), "--tasks", TASKS, "--no-progress",
            "--no-investigations", *extra]  # fmt: skip


def _run(source: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        _command(source, out, *extra), capture_output=True, text=True, timeout=600
    )


def _killed(source: Path, out: Path, when: str, *extra: str) -> None:
    """Start a generate and SIGKILL it as soon as `when` exists in its staging folder."""
    stage = out.parent / f".{out.name}.generating"
    proc = subprocess.Popen(
        _command(source, out, *extra), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 300
        while not (stage / when).exists():
            assert proc.poll() is None, f"generate finished before {when} could be caught"
            assert time.monotonic() < deadline
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert stage.is_dir()  # the resumable partial folder


def _content(env: Path) -> tuple[str, str]:
    manifest = json.loads((env / "manifest.json").read_text())
    tasks = hashlib.sha256((env / "tasks.jsonl").read_bytes()).hexdigest()
    return manifest["content_hash"], tasks


def _files(env: Path) -> set[str]:
    return {p.relative_to(env).as_posix() for p in env.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def reference(source: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ref") / "env"
    result = _run(source, out)
    assert result.returncode == 0, result.stderr[-2000:]
    assert not list(out.parent.glob(".env.generating*"))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("when", ["schema_card.json", "fuzz"])
def test_a_killed_generate_rerun_ends_with_the_same_content_hash(
    source: Path, reference: Path, tmp_path: Path, when: str
) -> None:
    out = tmp_path / "env"
    _killed(source, out, when)
    assert not out.exists()  # nothing half-made at --out
    result = _run(source, out)  # the same command again: no --overwrite needed
    assert result.returncode == 0, result.stderr[-2000:]
    assert _content(out) == _content(reference)
    assert _files(out) == _files(reference)
    assert not list(tmp_path.glob(".env.generating*"))


@pytest.mark.slow
def test_an_existing_environment_is_refused_without_overwrite(
    source: Path, reference: Path, tmp_path: Path
) -> None:
    out = tmp_path / "env"
    assert _run(source, out).returncode == 0
    before = _content(out)
    refused = _run(source, out)
    assert refused.returncode == 2
    assert "already holds an environment; pass --overwrite" in refused.stdout + refused.stderr
    assert "Traceback" not in refused.stdout + refused.stderr
    # killed while overwriting: the old environment stays whole at --out
    _killed(source, out, "fuzz", "--overwrite")
    assert _content(out) == before and (out / "warehouse.json").is_file()
    again = _run(source, out, "--overwrite")
    assert again.returncode == 0, again.stderr[-2000:]
    assert _content(out) == _content(reference)


def test_refusal_and_a_failed_generation_leave_nothing(tmp_path: Path) -> None:
    out = tmp_path / "env"
    out.mkdir()
    (out / "manifest.json").write_text("{}")
    with pytest.raises(ConfigError, match="already holds an environment; pass --overwrite"):
        generate(GenerateOptions(db="builtin:nope", out=out), progress=False)
    with pytest.raises(ConfigError, match="unknown built-in"):
        generate(GenerateOptions(db="builtin:nope", out=tmp_path / "new"), progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["env"]
