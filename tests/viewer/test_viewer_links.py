"""A received run folder with links in it, a corrupt run.json and a 60 MB transcript line, through
the real viewer on real HTTP (issue 39, items 1 and 5), with the exact payloads of the audit:
reviews.jsonl linked to a shell rc file with a task id of `$(touch <path>)`, episodes.jsonl and
run.json linked outside the served folder."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_viewer_http import get, post_review, raw
from viewer_support import Served, live_viewer, make_run

FLAG = "provenance:answer-before-evidence"
SECRET = "SECRET-OUTSIDE-THE-ROOT"


@pytest.fixture(scope="module")
def outside(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Files outside the served folder: a shell rc file and a valid-looking run and episode."""
    return tmp_path_factory.mktemp("outside")


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory, outside: Path) -> Path:
    root = tmp_path_factory.mktemp("linked")
    good = make_run(root / "runs", "good", "scripted/oracle", epochs=1)
    first = json.loads((good / "episodes.jsonl").read_text().splitlines()[0])

    # reviews.jsonl -> a shell rc file; the episode's task id is a command substitution
    rc = outside / ".bashrc"
    rc.write_text("# my shell rc\n")
    touched = outside / "PWNED"
    evil = shutil.copytree(good, root / "runs" / "evil-reviews")
    record = {**first, "task_id": f"$(touch {touched})", "audit": {"flags": [FLAG]}}
    with (evil / "episodes.jsonl").open("a") as fh:
        fh.write(json.dumps(record) + "\n")
    (evil / "reviews.jsonl").symlink_to(rc)

    # episodes.jsonl -> an episode file outside, with a secret in it
    secret_episodes = outside / "episodes.jsonl"
    secret_episodes.write_text(json.dumps({**first, "task_id": SECRET, "answer": SECRET}) + "\n")
    linked_eps = shutil.copytree(good, root / "runs" / "evil-episodes")
    (linked_eps / "episodes.jsonl").unlink()
    (linked_eps / "episodes.jsonl").symlink_to(secret_episodes)

    # run.json -> a run spec outside, whose model names the secret
    spec = json.loads((good / "run.json").read_text())
    (outside / "run.json").write_text(json.dumps({**spec, "policy": {"model": SECRET}}))
    linked_run = shutil.copytree(good, root / "runs" / "evil-run")
    (linked_run / "run.json").unlink()
    (linked_run / "run.json").symlink_to(outside / "run.json")

    # a corrupt run.json: one row with its error on the Runs page
    corrupt = shutil.copytree(good, root / "runs" / "corrupt")
    (corrupt / "run.json").write_text('{"format": "workgym-run/1", "env_id": ')

    # a 60 MB transcript line
    big = shutil.copytree(good, root / "runs" / "big")
    huge = {**first, "epoch": 7}
    huge["messages"] = [*first["messages"], {"role": "assistant", "content": "x" * 60_000_000}]
    with (big / "episodes.jsonl").open("a") as fh:
        fh.write(json.dumps(huge) + "\n")
    return root


@pytest.fixture(scope="module")
def served(root: Path) -> Iterator[Served]:
    """The real app on a real uvicorn server, as in conftest.py."""
    with live_viewer(root) as served:
        yield served


def _snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.iterdir()}


def _no_secret(*bodies: Any) -> None:
    for body in bodies:
        assert SECRET not in json.dumps(body, default=str)


def test_accepting_a_flag_through_a_linked_reviews_file_writes_nothing_outside(
    served: Served, outside: Path
) -> None:
    before = _snapshot(outside)
    task_id = f"$(touch {outside / 'PWNED'})"
    status, body = post_review(
        served,
        {"run": "runs/evil-reviews", "task_id": task_id, "epoch": 0, "flag": FLAG,
         "decision": "accepted"},
    )  # fmt: skip
    assert status == 403, body
    assert "reviews.jsonl is a symbolic link" in body["error"]
    assert "cp -L" in body["error"]
    assert _snapshot(outside) == before  # the rc file untouched, no PWNED
    assert not (outside / "PWNED").exists()
    # the episode page says why its reviews cannot be read, and reads nothing through the link
    path = f"/api/episode?run=runs/evil-reviews&task_id={task_id}&epoch=0"
    status, body, _ = get(served, path.replace("$", "%24").replace(" ", "%20"))
    assert status == 403 and "symbolic link" in body["error"]


def test_a_linked_episodes_file_is_refused_and_never_served(served: Served) -> None:
    status, body, _ = get(served, "/api/episodes?run=runs/evil-episodes")
    assert status == 403 and "episodes.jsonl is a symbolic link" in body["error"]
    _no_secret(body)
    status, body, _ = get(served, f"/api/episode?run=runs/evil-episodes&task_id={SECRET}&epoch=0")
    assert status == 403
    _no_secret(body)
    status, body, _ = get(served, "/api/run?run=runs/evil-episodes")
    _no_secret(body)
    _, tree, _ = get(served, "/api/tree")
    row = next(r for r in tree["runs"] if r["path"] == "runs/evil-episodes")
    assert "symbolic link" in row["error"]
    _no_secret(tree)


def test_a_linked_run_json_is_one_row_with_its_error(served: Served) -> None:
    status, tree, _ = get(served, "/api/tree")
    assert status == 200
    _no_secret(tree)
    row = next(r for r in tree["runs"] if r["path"] == "runs/evil-run")
    assert "run.json is a symbolic link" in row["error"] and "model" not in row
    status, body, _ = get(served, "/api/run?run=runs/evil-run")
    assert status == 403 and "symbolic link" in body["error"]
    _no_secret(body)


def test_a_corrupt_run_json_is_one_row_and_the_rest_as_normal(served: Served) -> None:
    status, tree, _ = get(served, "/api/tree")
    assert status == 200
    rows = {r["path"]: r for r in tree["runs"]}
    assert "run.json is corrupt" in rows["runs/corrupt"]["error"]
    assert str(served.root) not in rows["runs/corrupt"]["error"]
    good = rows["runs/good"]
    assert "error" not in good and good["summary"]["n_episodes"] == 60
    assert rows["runs/big"]["summary"]["n_episodes"] == 61


def test_a_60_mb_transcript_line_is_a_placeholder_not_a_500(served: Served) -> None:
    status, page, _ = get(served, "/api/episodes?run=runs/big&limit=500")
    assert status == 200 and page["total"] == 61
    row = next(r for r in page["rows"] if r["epoch"] == 7)
    status, body, _ = get(served, f"/api/episode?run=runs/big&task_id={row['task_id']}&epoch=7")
    assert status == 200, body
    record = body["record"]
    assert record["too_large"]["bytes"] > 60_000_000
    assert "over the viewer's 8 MB display cap" in record["error"]
    assert record["verdict"]["status"] == row["status"] and record["messages"] == []
    status, data = raw(served, "GET", f"/api/episode?run=runs/big&task_id={row['task_id']}&epoch=0")
    assert status == 200 and len(data) < 1_000_000  # its normal neighbour is unaffected
