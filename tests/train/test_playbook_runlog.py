from __future__ import annotations

import json
from pathlib import Path

import pytest

from workgym.core.errors import ConfigError
from workgym.train.playbook.runlog import LogDiverged, RunLog, read_events

ID = {"env_id": "x", "config": {"seed": 0}}


def test_new_run_appends_and_a_resumed_run_replays(tmp_path: Path) -> None:
    log = RunLog.open(tmp_path / "r", ID)
    log.emit({"kind": "start", "n": 1})
    log.emit({"kind": "reflection", "raw": "{}", "value": 0.1 + 0.2})
    log.close()
    spec = json.loads((tmp_path / "r" / "train.json").read_text())
    assert spec["format"] == "workgym-train-playbook/1" and "versions" in spec
    again = RunLog.open(tmp_path / "r", ID)
    assert again.replaying
    assert again.emit({"kind": "start", "n": 1})["kind"] == "start"
    assert again.recall("other") is None
    assert again.recall("reflection")["raw"] == "{}"
    assert not again.replaying
    again.emit({"kind": "stop"})
    again.close()
    assert [e["kind"] for e in read_events(tmp_path / "r")] == ["start", "reflection", "stop"]
    assert all("time" in e for e in read_events(tmp_path / "r"))


def test_a_different_decision_on_replay_is_refused(tmp_path: Path) -> None:
    log = RunLog.open(tmp_path, ID)
    log.emit({"kind": "gate", "accepted": True})
    log.close()
    again = RunLog.open(tmp_path, ID)
    with pytest.raises(LogDiverged, match=r"line 1: this run decided .*accepted.*false"):
        again.emit({"kind": "gate", "accepted": False})


def test_other_settings_or_a_foreign_directory_are_refused(tmp_path: Path) -> None:
    RunLog.open(tmp_path / "r", ID).close()
    with pytest.raises(ConfigError, match="differs in: config"):
        RunLog.open(tmp_path / "r", {**ID, "config": {"seed": 1}})
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "file.txt").write_text("hi")
    with pytest.raises(ConfigError, match="not a training run"):
        RunLog.open(tmp_path / "other", ID)
    with pytest.raises(ConfigError, match=r"no log\.jsonl"):
        read_events(tmp_path / "other")


def test_a_torn_last_line_is_ignored_by_readers_and_moved_aside_on_resume(tmp_path: Path) -> None:
    log = RunLog.open(tmp_path, ID)
    log.emit({"kind": "start"})
    log.close()
    with (tmp_path / "log.jsonl").open("a") as fh:
        fh.write('{"kind": "bat')
    assert [e["kind"] for e in read_events(tmp_path)] == ["start"]
    assert (tmp_path / "log.jsonl").read_text().endswith('"bat')  # readers do not repair
    again = RunLog.open(tmp_path, ID)
    assert (
        len(again.existing) == 1 and (tmp_path / "log.jsonl.torn").read_text() == '{"kind": "bat\n'
    )
    (tmp_path / "log.jsonl").write_text('{"kind": "start"}\n{garbage}\n')
    with pytest.raises(ConfigError, match=r"log.jsonl:2 is corrupt"):
        RunLog.open(tmp_path, ID)
