"""Run folders and certificates written before the record's extensions existed (decision 0120)
stay readable: the files under tests/fixtures/records_v0.1.0 were written by workgym 0.1.0 as it
was before the change (flat `flags`, `flag_sites`, `flag_details`, `agents`, `turn_tokens`), and
are read here by the current code, never rewritten."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from workgym.apps.viewer.episode_view import build_steps, flag_view
from workgym.apps.viewer.queries import EpisodeFilter, RunQueries
from workgym.certify.certificate import recompute
from workgym.core.episode import Episode, record_agents, record_flags, upgrade_record
from workgym.guards.review import counted
from workgym.run.policy import Policy, make_policy
from workgym.run.rundir import RunDir, read_spec
from workgym.run.summary import role_tokens, summarize
from workgym.swarm import Attempts, TeamPolicy

FIXTURES = Path(__file__).parent / "fixtures" / "records_v0.1.0"
TOKENS_RUN = FIXTURES / "runs" / "tokens"
CERTIFICATE = FIXTURES / "certificate"
FLAT = ("flags", "flag_sites", "flag_details", "agents", "turn_tokens")


def raw_lines(run: Path) -> list[dict[str, Any]]:
    text = (run / "episodes.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_the_fixtures_are_in_the_old_flat_shape() -> None:
    for run in (TOKENS_RUN, CERTIFICATE / "runs" / "task" / "candidate"):
        for line in raw_lines(run):
            assert {"flags", "flag_sites", "flag_details", "agents", "turn_tokens"} <= set(line)
            assert not {"audit", "team", "trainer"} & set(line)


def test_old_audit_and_token_ids_survive_reading_a_run_folder() -> None:
    old = raw_lines(TOKENS_RUN)
    episodes = list(RunDir(TOKENS_RUN, read_spec(TOKENS_RUN)).episodes())
    assert len(episodes) == len(old) == 2
    for line, ep in zip(old, episodes, strict=True):
        assert line["flags"] and ep.audit is not None
        assert ep.flags == ep.audit.flags == line["flags"]
        assert ep.audit.sites == line["flag_sites"] and ep.audit.details == line["flag_details"]
        assert ep.trainer is not None and line["turn_tokens"]
        stored = [t.model_dump() for t in ep.trainer.turn_tokens]
        assert stored == line["turn_tokens"]
        assert ep.team is None and line["agents"] is None


def test_old_agents_survive_and_a_record_written_again_has_the_new_shape() -> None:
    run = CERTIFICATE / "runs" / "task" / "candidate"
    old = raw_lines(run)
    episodes = list(RunDir(run, read_spec(run)).episodes())
    for line, ep in zip(old, episodes, strict=True):
        assert ep.team is not None and len(ep.team.agents) == len(line["agents"]) == 2
        assert [a.model_dump(mode="json") for a in ep.team.agents] == line["agents"]
        total = sum(a.usage.total_tokens for a in ep.team.agents)
        assert total == ep.usage.total_tokens  # the stored sum still holds
        again = json.loads(ep.model_dump_json())
        assert not set(FLAT) & set(again)
        assert again["team"]["agents"] == line["agents"]
        assert again["audit"]["flags"] == line["flags"] == ["process_anomaly:no-tool-use"]
        assert Episode.model_validate(again) == ep


def test_raw_readers_see_old_lines_in_either_shape() -> None:
    for line in raw_lines(CERTIFICATE / "runs" / "task" / "candidate"):
        new = upgrade_record(line)
        assert record_flags(line) == record_flags(new) == line["flags"]
        assert record_agents(line) == record_agents(new) == line["agents"]
        assert role_tokens(line) == role_tokens(new) and set(role_tokens(line)) == {"solver"}
        assert counted(line) == counted(new) == (0.0, False, "flagged", line["flags"])
        assert upgrade_record(new) is new  # a current record is returned as it is
    records = list(RunDir(TOKENS_RUN, read_spec(TOKENS_RUN)).records())
    assert all("audit" in r and "flags" not in r for r in records)
    summary = summarize(records)
    assert summary.flags == {
        "process_anomaly:no-tool-use": 2,
        "provenance:answer-before-evidence": 2,
    }


def test_the_viewer_places_an_old_records_flags() -> None:
    line = raw_lines(TOKENS_RUN)[0]
    view = flag_view(line, build_steps(line))
    assert view["at"] == line["flag_sites"] and view["why"] == line["flag_details"]


def test_the_episode_page_reads_a_records_audit_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """`flag_view` upgrades the record once for its sites and details, and `findings` reuses the
    view the page already built instead of building it again."""
    from workgym.apps.viewer import episode_view

    calls: list[int] = []

    def counting(record: dict[str, Any]) -> dict[str, Any]:
        calls.append(1)
        return upgrade_record(record)

    monkeypatch.setattr(episode_view, "upgrade_record", counting)
    line = raw_lines(TOKENS_RUN)[0]
    steps = build_steps(line)
    view = flag_view(line, steps)
    assert len(calls) == 1 and view["at"] == line["flag_sites"]
    found = episode_view.findings(line, {}, steps, view)
    assert len(calls) == 1 and any(f["text"].startswith("audit flags:") for f in found)


def _paths(x: Any, prefix: str = "") -> dict[str, Any]:
    """Every leaf of a JSON value by its path (`task.gain.lower`)."""
    if isinstance(x, dict):
        return {k: v for key, val in x.items() for k, v in _paths(val, f"{prefix}.{key}").items()}
    if isinstance(x, list):
        return {k: v for i, val in enumerate(x) for k, v in _paths(val, f"{prefix}[{i}]").items()}
    return {prefix: x}


def test_an_old_certificate_recomputes_from_its_old_runs(tmp_path: Path) -> None:
    """The old runs are read unchanged, and the rebuilt certificate differs from the stored one
    only where decision 0100 changed the paired bound (Tango's score interval -> the exact
    unconditional one): its method, its numbers and the sentences quoting them."""
    copy = tmp_path / "certificate"
    shutil.copytree(CERTIFICATE, copy)
    rebuilt, same, changed = recompute(copy / "certificate.json")
    assert changed == []
    assert rebuilt.warnings and "4 flagged candidate successes" in rebuilt.warnings[0]
    stored = _paths(json.loads((CERTIFICATE / "certificate.json").read_text()))
    now = _paths(json.loads(rebuilt.to_json()))
    assert stored.keys() == now.keys()
    differ = {k for k in stored if stored[k] != now[k]}
    assert not same and differ == {
        ".task.gain.tests[0].detail",
        ".task.gain.tests[0].lower",
        ".task.gain.ci95[0]",
        ".task.gain.ci95[1]",
        ".task.gain.lower",
        ".task.non_inferiority.method",
        ".task.non_inferiority.reason",
        ".task.non_inferiority.lower",
    }
    assert (stored[".task.non_inferiority.method"], now[".task.non_inferiority.method"]) == (
        "tango_score",
        "exact_unconditional",
    )


def test_a_swarm_policy_keeps_the_identity_it_had_in_the_model_slot() -> None:
    """Resuming an old swarm run needs the same policy hash; the team now plays through its own
    Policy subclass (`TeamPolicy`), not from the model slot (decision 0121)."""
    candidate = CERTIFICATE / "runs" / "task" / "candidate"
    spec = read_spec(candidate)
    policy = Attempts("scripted/oracle", n=2).policy()
    assert isinstance(policy, TeamPolicy) and policy.hash == spec.policy_hash
    assert policy.describe() == spec.policy and policy.model_name == spec.policy["model"]
    made = make_policy(Attempts("scripted/oracle", n=2))
    assert isinstance(made, TeamPolicy) and made.hash == spec.policy_hash
    assert type(make_policy("scripted/oracle")) is Policy
    with pytest.raises(TypeError, match=r"is a team, not a model: build its policy with"):
        Policy(Attempts("scripted/oracle", n=2))  # type: ignore[arg-type]


def test_the_viewer_index_counts_an_old_runs_flags(tmp_path: Path) -> None:
    run = tmp_path / "tokens"
    shutil.copytree(TOKENS_RUN, run)  # the fixtures stay as written
    q = RunQueries()
    old = raw_lines(TOKENS_RUN)
    flagged = q.list_episodes(run, EpisodeFilter(flag="process_anomaly:no-tool-use"), limit=10)
    assert flagged["total"] == len(old) == 2
    assert q.summary(run).flags == summarize(raw_lines(TOKENS_RUN)).flags
    record = q.episode(run, old[0]["task_id"], old[0]["epoch"])
    assert record is not None and record["audit"]["sites"] == old[0]["flag_sites"]
