"""The viewer over real HTTP (uvicorn on 127.0.0.1): API answers, path refusal, read-only
surface, the review write format, and the `workgym view` command."""

from __future__ import annotations

import http.client
import json
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from viewer_support import EARLY, Served, start_view

from workgym.apps.viewer.reviews import REVIEWS


def get(served: Served, path: str) -> tuple[int, Any, dict[str, str]]:
    try:
        with urllib.request.urlopen(served.url + path, timeout=30) as r:
            body = r.read()
            status, headers = r.status, dict(r.headers)
    except urllib.error.HTTPError as e:
        body, status, headers = e.read(), e.code, dict(e.headers)
    try:
        return status, json.loads(body), headers
    except ValueError:
        return status, body, headers


def raw(served: Served, method: str, path: str, body: bytes = b"", **headers: str) -> Any:
    """A request exactly as written (no client-side path normalisation)."""
    conn = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
    conn.request(method, path, body=body, headers=headers)
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response.status, data


def post_review(served: Served, payload: dict[str, Any], **headers: str) -> tuple[int, Any]:
    status, data = raw(
        served,
        "POST",
        "/api/review",
        json.dumps(payload).encode(),
        **{"Content-Type": "application/json", **headers},
    )
    return status, json.loads(data)


def test_tree_lists_runs_with_summaries(served: Served) -> None:
    status, tree, headers = get(served, "/api/tree")
    assert status == 200
    assert [r["path"] for r in tree["runs"]] == ["runs/mixed", "runs/oracle"]
    mixed = tree["runs"][0]["summary"]
    assert mixed["n_episodes"] == 120 and mixed["success_rate"] == pytest.approx(0.4)
    assert mixed["ci95"][0] < mixed["mean_reward"] < mixed["ci95"][1]
    assert "script-src 'self'" in headers["content-security-policy"]


def test_episode_list_filters_and_pages(served: Served) -> None:
    _, page, _ = get(served, "/api/episodes?run=runs/mixed&status=no_answer&limit=5&sort=task_id")
    assert page["total"] == 24 and len(page["rows"]) == 5
    assert all(r["status"] == "no_answer" for r in page["rows"])
    ids = [r["task_id"] for r in page["rows"]]
    assert ids == sorted(ids)
    status, err, _ = get(served, "/api/episodes?run=runs/mixed&sort=nope")
    assert status == 400 and "cannot sort by" in err["error"]


def test_episode_carries_ground_truth_and_raw_agent_text(served: Served) -> None:
    _, page, _ = get(served, "/api/episodes?run=runs/mixed&flag=judge_directed&limit=1")
    row = page["rows"][0]
    _, ep, _ = get(served, f"/api/episode?run=runs/mixed&task_id={row['task_id']}&epoch=0")
    assert ep["truth"]["available"] and isinstance(ep["truth"]["answer"], int)
    assert "<script>" in ep["steps"][2]["content"]  # data stays data; the page shows it as text
    # the audit placed the flag at the message that addressed the grader
    assert ep["flags"]["at"] == {"judge_directed": [2]} and ep["flags"]["unplaced"] == []


@pytest.mark.parametrize(
    "path",
    [
        "/api/run?run=..",
        "/api/run?run=../..",
        "/api/run?run=/etc",
        "/api/episodes?run=runs/../../..",
        "/api/episode?run=%2e%2e/%2e%2e&task_id=x&epoch=0",
        "/api/playbook?path=../",
        "/api/certificate?path=/tmp",
        "/files/../../../etc/passwd",
        "/files/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
        "/files/..%2f..%2f..%2fetc%2fpasswd",
    ],
)
def test_paths_outside_root_are_refused(served: Served, path: str) -> None:
    status, data = raw(served, "GET", path)
    assert status in (403, 404), (status, data)
    assert b"root:" not in data
    if status == 404:  # only when the server normalised the path back inside PATH
        assert b"refused" in data or b"serves only" in data or b"Not Found" in data


def test_symlink_out_of_root_is_refused(served: Served, tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text("{}")
    link = served.root / "runs" / "link-out"
    link.symlink_to(tmp_path, target_is_directory=True)
    try:
        status, data = raw(served, "GET", "/api/run?run=runs/link-out")
        assert status == 403 and b"outside the served directory" in data
        assert raw(served, "GET", "/files/runs/link-out/run.json")[0] == 403
    finally:
        link.unlink()


def test_only_reports_and_plots_are_served_as_files(served: Served) -> None:
    status, data = raw(served, "GET", "/files/secret.txt")
    assert status == 404 and b"not for the browser" not in data
    assert raw(served, "GET", "/files/runs/mixed/episodes.jsonl")[0] == 404


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH"])
def test_read_only(served: Served, method: str) -> None:
    assert raw(served, method, "/api/review")[0] == 405
    assert raw(served, method, "/api/tree")[0] == 405
    assert raw(served, "POST", "/api/tree", b"{}", **{"Content-Type": "application/json"})[0] == 405


def test_foreign_host_and_cross_origin_writes_are_refused(served: Served) -> None:
    assert raw(served, "GET", "/api/tree", Host="evil.example:80")[0] == 403
    status, _ = post_review(served, {"run": "runs/mixed"}, Origin="http://evil.example")
    assert status == 403
    status, _ = raw(served, "POST", "/api/review", b"run=x", **{"Content-Type": "text/plain"})
    assert status == 415


def test_review_appends_the_shared_format(served: Served) -> None:
    _, page, _ = get(served, f"/api/episodes?run=runs/mixed&flag={EARLY}&limit=1")
    row = page["rows"][0]
    path = served.root / "runs" / "mixed" / REVIEWS
    before = path.read_text() if path.exists() else ""
    base = {
        "run": "runs/mixed",
        "task_id": row["task_id"],
        "epoch": row["epoch"],
        "flag": EARLY,
    }
    assert (
        post_review(served, {**base, "decision": "exploit", "note": "gold from nowhere"})[0] == 200
    )
    assert post_review(served, {**base, "decision": "accepted"})[0] == 200
    text = path.read_text()
    assert text.startswith(before)
    new = [json.loads(x) for x in text[len(before) :].splitlines()]
    assert [list(x) for x in new] == [["task_id", "epoch", "flag", "decision", "note", "at"]] * 2
    assert [x["decision"] for x in new] == ["exploit", "accepted"]
    assert new[0]["note"] == "gold from nowhere" and new[0]["task_id"] == row["task_id"]
    _, ep, _ = get(
        served, f"/api/episode?run=runs/mixed&task_id={row['task_id']}&epoch={row['epoch']}"
    )
    assert ep["reviews"]["latest"][EARLY]["decision"] == "accepted"
    # refused: a decision outside the format, a flag the episode does not have, a foreign run
    assert post_review(served, {**base, "decision": "maybe"})[0] == 422
    status, err = post_review(served, {**base, "flag": "peek", "decision": "exploit"})
    assert status == 400 and "no flag 'peek'" in err["error"]
    assert post_review(served, {**base, "run": "../x", "decision": "exploit"})[0] == 403
    assert path.read_text() == text


def test_compare_endpoint(served: Served) -> None:
    _, d, _ = get(served, "/api/compare?a=runs/mixed&b=runs/oracle")
    assert d["n_common"] == 60 and d["total"] == d["b_better"] > 0 and d["a_better"] == 0


def test_view_command_binds_localhost_and_prints_the_url(viewer_root: Path) -> None:
    proc, url = start_view(viewer_root)
    try:
        assert url.startswith("http://127.0.0.1:"), url
        for _ in range(100):
            try:
                with urllib.request.urlopen(url + "api/tree", timeout=5) as r:
                    assert len(json.loads(r.read())["runs"]) == 2
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError):  # bound, starting
                time.sleep(0.1)
        else:
            pytest.fail("viewer did not answer")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=15)


def test_view_command_rejects_a_missing_folder(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "workgym", "view", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "is not a directory; pass the folder that holds your runs" in result.stderr


def test_playbook_and_certificate_endpoints(served: Served) -> None:
    _, tree, _ = get(served, "/api/tree")
    assert tree["playbooks"] == ["train/pb"] and tree["certificates"] == ["certs/toy"]
    _, pb, _ = get(served, "/api/playbook?path=train/pb")
    assert len(pb["deltas"]) == 3
    _, d, _ = get(served, "/api/playbook/diff?path=train/pb&a=h0&b=h1")
    assert any("pb-002" in x for x in d["diff"])
    assert get(served, "/api/playbook?path=runs/mixed")[0] == 404
    _, cert, _ = get(served, "/api/certificate?path=certs/toy")
    assert cert["verdict"] == "FAIL"
    status, body, headers = get(served, "/files/certs/toy/certificate.html")
    assert status == 200 and b"<script>" in body  # served as the certifier wrote it ...
    assert headers["content-security-policy"].startswith("sandbox;")  # ... but scripts never run
    assert "script-src" not in headers["content-security-policy"]
    status, _, headers = get(served, "/files/train/pb/learning_curve.png")
    assert status == 200 and headers["content-type"] == "image/png"
