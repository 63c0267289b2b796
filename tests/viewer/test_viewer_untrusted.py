"""A run folder someone sent: opening it in the viewer imports no code and reads nothing outside
the served root (issue 18, item 1), with the exact payloads of the report."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from viewer_support import make_run, start_view

import workgym as wg
from workgym.apps.viewer.app import create_app
from workgym.envs.toy.env import ToyShop

CANARY_MODULE = "wg_h18_canary_env"


def _manifest(directory: Path, entry: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    body = {"format": "workgym-env/1", "id": "x/y", "entry": entry, "content_hash": ""}
    (directory / "manifest.json").write_text(json.dumps(body))


def _point_run_at(run: Path, env_ref: str) -> None:
    spec = json.loads((run / "run.json").read_text())
    spec["env_ref"] = env_ref
    (run / "run.json").write_text(json.dumps(spec))


@pytest.fixture(scope="module")
def sent(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A served folder with one real run of the toy shop (its env_ref is rewritten per test)."""
    root = tmp_path_factory.mktemp("sent")
    make_run(root / "runs", "r", "scripted/oracle", epochs=1)
    return root


def _open_episode(root: Path, run: Path) -> dict[str, Any]:
    client = TestClient(create_app(root))
    first = client.get("/api/episodes", params={"run": "runs/r", "limit": 1}).json()
    row = first["rows"][0]
    reply = client.get(
        "/api/episode", params={"run": "runs/r", "task_id": row["task_id"], "epoch": row["epoch"]}
    )
    assert reply.status_code == 200, reply.text
    truth: dict[str, Any] = reply.json()["truth"]
    return truth


def test_os_system_entry_in_a_shell_named_directory_runs_nothing(
    sent: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(sent)
    _manifest(sent / "x;touch PWNED;", "os:system")
    _point_run_at(sent / "runs" / "r", "x;touch PWNED;")
    truth = _open_episode(sent, sent / "runs" / "r")
    assert not truth["available"]
    assert "not an installed, registered environment" in truth["note"]
    assert not list(sent.rglob("PWNED")) and not Path("PWNED").exists()


def test_a_canary_module_named_by_a_manifest_is_never_imported(
    sent: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code = tmp_path / "code"
    code.mkdir()
    fired = tmp_path / "CANARY_FIRED"
    (code / f"{CANARY_MODULE}.py").write_text(
        f"from pathlib import Path\nPath({str(fired)!r}).write_text('imported')\n"
        "class Env:\n    def __init__(self, root):\n        pass\n"
    )
    monkeypatch.syspath_prepend(str(code))
    _manifest(sent / "envs" / "canary", f"{CANARY_MODULE}:Env")
    _point_run_at(sent / "runs" / "r", "envs/canary")
    truth = _open_episode(sent, sent / "runs" / "r")
    assert not truth["available"] and "--trust" in truth["note"]
    assert not fired.exists() and CANARY_MODULE not in sys.modules
    # The same directory outside the viewer: refused without --trust, imported with it.
    with pytest.raises(wg.ConfigError, match="not an installed, registered environment"):
        wg.load(sent / "envs" / "canary")
    assert not fired.exists()
    with pytest.raises(wg.ConfigError):  # imported (the user vouched), then fails its hash
        wg.load(sent / "envs" / "canary", trust=True)
    assert fired.exists()
    sys.modules.pop(CANARY_MODULE, None)


@pytest.mark.parametrize("how", ["absolute", "relative"])
def test_an_env_ref_outside_the_served_root_shows_no_hidden_answers(
    sent: Path, tmp_path: Path, how: str
) -> None:
    outside = ToyShop().save(tmp_path / "outside" / "env")
    ref = str(outside) if how == "absolute" else str(Path("..") / ".." / outside)
    _point_run_at(sent / "runs" / "r", ref)
    truth = _open_episode(sent, sent / "runs" / "r")
    assert not truth["available"] and "answer" not in truth and "prompt" not in truth
    assert "under the served root" in truth["note"]


def test_a_registered_environment_saved_inside_the_root_still_shows_its_answers(
    sent: Path,
) -> None:
    ToyShop().save(sent / "envs" / "toy")
    _point_run_at(sent / "runs" / "r", "envs/toy")
    truth = _open_episode(sent, sent / "runs" / "r")
    assert truth["available"] and truth["note"] is None and "answer" in truth


def test_workgym_view_on_a_crafted_folder_imports_nothing(tmp_path: Path) -> None:
    """The real command, in its own process, with the canary importable on its path."""
    import os
    import shutil
    import signal
    import time
    import urllib.error
    import urllib.request

    root = tmp_path / "crafted"
    make_run(root / "runs", "r", "scripted/oracle", epochs=1)
    shutil.copytree(root / "runs" / "r", root / "runs" / "r2")
    _manifest(root / "x;touch PWNED;", "os:system")
    _point_run_at(root / "runs" / "r", "x;touch PWNED;")
    _manifest(root / "envs" / "canary", f"{CANARY_MODULE}:Env")
    _point_run_at(root / "runs" / "r2", "envs/canary")
    code = tmp_path / "code"
    code.mkdir()
    fired = tmp_path / "CANARY_FIRED"
    (code / f"{CANARY_MODULE}.py").write_text(
        f"from pathlib import Path\nPath({str(fired)!r}).write_text('imported')\nclass Env: ...\n"
    )
    path = os.pathsep.join([str(code), os.environ.get("PYTHONPATH", "")])
    proc, url = start_view(root, env={**os.environ, "PYTHONPATH": path}, cwd=root)
    try:
        assert url, "the viewer printed no URL"

        def get(query: str) -> Any:
            for _ in range(100):
                try:
                    with urllib.request.urlopen(url + query, timeout=10) as r:
                        return json.loads(r.read())
                except (urllib.error.URLError, ConnectionError):
                    time.sleep(0.1)
            raise AssertionError("viewer did not answer")

        for run in ("runs/r", "runs/r2"):
            row = get(f"api/episodes?run={run}&limit=1")["rows"][0]
            page = get(f"api/episode?run={run}&task_id={row['task_id']}&epoch={row['epoch']}")
            assert not page["truth"]["available"], run
            assert "not an installed, registered environment" in page["truth"]["note"]
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=15)
    assert not fired.exists() and not list(tmp_path.rglob("PWNED"))
