"""Plumbing of bench/swarm_real.py against a real local HTTP server (FakeChatServer).

The fake server plays scripted agents for `workgym/toy-rules` (look the code up, then submit it,
upper-cased when a rule says so), a planner, a checker and a reflector. Its numbers check that
the study runs end to end over HTTP; they are not results, let alone learning results.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fakes.chat_server import FakeChatServer, ScriptedReply, text
from fakes.toy_rules_agent import agent_reply
from fakes.toy_rules_agent import load_bench as load_script
from workgym.envs.toy_rules.env import GOOD_RULE


class SwarmServer(FakeChatServer):
    def _take(self, body: dict[str, Any], headers: dict[str, str]) -> ScriptedReply:
        with self._lock:
            self.requests.append(body)
        messages = body["messages"]
        last = messages[-1]["content"] or ""
        if not body.get("tools"):
            if "# Current playbook" in last:  # the reflector
                lesson = {"op": "ADD", "section": "format", "text": GOOD_RULE, "evidence": ["E1"]}
                return text(json.dumps({"diagnoses": ["case"], "lessons": [lesson]}))
            if "Reply APPROVE" in last:  # the checker
                return text("APPROVE")
            return text("1. look the part up 2. submit its code")  # the planner
        return agent_reply(body)


def load_bench() -> Any:
    return load_script("swarm_real.py")


COMMON = [
    "--model",
    "fake-7b",
    "--env",
    "workgym/toy-rules",
    "--ks",
    "2",
    "--max-attempts",
    "6",
    "--concurrency",
    "4",
    "--no-progress",
]


def test_bench_runs_the_full_study_against_an_http_endpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = load_bench()
    with SwarmServer() as server:
        code = bench.main(
            [
                "--base-url",
                server.base_url,
                *COMMON,
                "--n",
                "3",
                "--out",
                str(tmp_path),
                "--max-iterations",
                "1",
                "--group-size",
                "2",
                "--batch-size",
                "2",
                "--dev-k",
                "1",
                "--gate-tasks",
                "2",
            ]
        )
        requests = list(server.requests)
    assert code == 0
    printed = " ".join(capsys.readouterr().out.split())
    for title in ("untrained: swarm vs one agent", "trained: swarm vs one trained agent"):
        assert title in printed
    assert "trained swarm vs untrained swarm" in printed and "matched cost:" in printed
    study = json.loads((tmp_path / "swarm_study.json").read_text())
    assert set(study["answers"]) == {
        "untrained_swarm_vs_single",
        "trained_swarm_vs_trained_single",
        "trained_swarm_vs_untrained_swarm",
    }
    assert set(study["runs"]) == {
        f"single{s}{a}" for s in ("", "+pb") for a in ("", "-sc2", "@swarm")
    } | {"swarm", "swarm+pb"}
    assert study["playbooks"]["swarm"] and GOOD_RULE in study["playbooks"]["swarm"]
    swarm_run = json.loads((Path(study["runs"]["swarm"]) / "run.json").read_text())
    matched_run = json.loads((Path(study["runs"]["single@swarm"]) / "run.json").read_text())
    assert swarm_run["policy"]["team"]["n"] == 3
    budget = matched_run["policy"]["team"]["budget_tokens"]

    def mean_tokens(run: str) -> float:
        usage = [json.loads(line)["usage"] for line in (Path(run) / "episodes.jsonl").open()]
        return sum(u["prompt_tokens"] + u["completion_tokens"] for u in usage) / len(usage)

    # the single agent got the swarm's measured budget plus one attempt (attempts start only if
    # they fit, so the capped line reaches the swarm's cost)
    runs = study["runs"]
    assert budget == round(mean_tokens(runs["swarm"]) + mean_tokens(runs["single"]))
    for folder in (tmp_path / "compare").iterdir():
        assert (folder / "compare.png").read_bytes()[:4] == b"\x89PNG"
        assert json.loads((folder / "compare.json").read_text())["items"] == 6
    assert all(r["model"] == "fake-7b" for r in requests)
    assert any(not r.get("tools") for r in requests)  # the reflector was asked over HTTP
    assert all("seed" in r for r in requests if r.get("tools"))


def test_bench_runs_a_role_swarm_untrained(tmp_path: Path) -> None:
    bench = load_bench()
    with SwarmServer() as server:
        code = bench.main(
            [
                *("--base-url", server.base_url, *COMMON),
                *("--swarm", "roles", "--no-train", "--out", str(tmp_path)),
            ]
        )
        requests = list(server.requests)
    assert code == 0
    study = json.loads((tmp_path / "swarm_study.json").read_text())
    assert list(study["answers"]) == ["untrained_swarm_vs_single"]
    assert study["swarm"]["roles"] == ["planner", "executor", "checker"]
    checker_calls = [r for r in requests if "Reply APPROVE" in r["messages"][-1]["content"]]
    assert checker_calls  # one review per submission, over HTTP
    line = json.loads((Path(study["runs"]["swarm"]) / "episodes.jsonl").read_text().splitlines()[0])
    assert [a["role"] for a in line["team"]["agents"]] == ["planner", "executor", "checker"]


def test_bench_trains_both_arms_with_the_bootstrap_learner_and_votes_at_its_own_temperature(
    tmp_path: Path,
) -> None:
    """`--learner bootstrap` trains the single agent and the role swarm with one learner and one
    config (claim 4: "trained the same way"); the voting arms sample at --attempts-temperature
    while the single agent and the swarm play at --temperature."""
    bench = load_bench()
    with SwarmServer() as server:
        code = bench.main(
            [
                *("--base-url", server.base_url, *COMMON),
                *("--swarm", "roles", "--learner", "bootstrap", "--out", str(tmp_path)),
                *("--temperature", "0", "--attempts-temperature", "0.9"),
                *("--train-tasks", "4", "--samples", "1", "--max-candidates", "1"),
                *("--max-examples", "1", "--dev-k", "1"),
            ]
        )
        requests = list(server.requests)
    assert code == 0
    study = json.loads((tmp_path / "swarm_study.json").read_text())
    assert study["learner"] == "bootstrap"
    assert (study["temperature"], study["attempts_temperature"]) == (0.0, 0.9)
    for who in ("single", "swarm"):
        learned = json.loads((tmp_path / "train" / who / "bootstrap.json").read_text())
        assert learned["config"]["train_tasks"] == 4 and learned["episodes"] == 4
    swarm_model = json.loads((tmp_path / "train" / "swarm" / "bootstrap.json").read_text())
    assert swarm_model["model"].startswith("swarm/planner+executor+checker:")
    reflector = [r for r in requests if "# Current playbook" in r["messages"][-1]["content"]]
    assert not reflector  # the bootstrap learner asks no reflector

    def temperatures(run: str) -> set[float]:
        spec = json.loads((Path(run) / "run.json").read_text())
        return {spec["policy"]["sampling"]["temperature"]}

    runs = study["runs"]
    arms = {r["arm"]: r for r in study["arms"]}
    assert set(arms) == set(runs)
    for row in arms.values():  # toy-rules: 6 test tasks; the exact interval holds its share
        assert row["n"] == 6 and row["ci"][0] <= row["solved"] / 6 <= row["ci"][1]
        assert sum(int(v.split("/")[1]) for v in row["by_kind"].values()) == 6
    for name in ("single", "swarm", "single+pb", "swarm+pb"):
        assert temperatures(runs[name]) == {0.0}
    for name in ("single-sc2", "single@swarm", "single+pb-sc2", "single+pb@swarm"):
        assert temperatures(runs[name]) == {0.9}


def test_swarm_plans_counts_plans_that_spell_the_first_call_and_the_checkers_replies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """bench/swarm_plans.py on a role swarm's run over HTTP: the fake planner's plan ("look the
    part up") never spells the call with its argument, and the fake checker approves."""
    bench = load_bench()
    with SwarmServer() as server:
        bench.main(
            [
                *("--base-url", server.base_url, *COMMON),
                *("--swarm", "roles", "--no-train", "--out", str(tmp_path)),
            ]
        )
    study = json.loads((tmp_path / "swarm_study.json").read_text())
    plans = load_script("swarm_plans.py")
    summary = plans.summarise(Path(study["runs"]["swarm"]))
    assert summary["plan_spells_first_call"]["episodes"] == 0
    assert summary["otherwise"]["episodes"] == 6
    replies = summary["checker_replies"]
    assert replies["approve"] >= 1 and replies["objection"] == replies["opens_with_revision"] == 0
    capsys.readouterr()
    assert plans.main([study["runs"]["swarm"]]) == 0
    assert "plan spells the first call in 0 episodes" in capsys.readouterr().out
    with pytest.raises(SystemExit, match=r"holds no episodes\.jsonl"):
        plans.main([str(tmp_path)])


def test_swarm_suites_replays_the_studys_policies_on_a_suite_and_refuses_a_changed_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """bench/swarm_suites.py rebuilds a study's swarm policies from its run records, plays them
    on a suite into folders named by their hashes, and refuses when the rebuilt hash differs."""
    study, suites = tmp_path / "study", tmp_path / "suites"
    with SwarmServer() as server:
        assert load_bench().main(
            [*("--base-url", server.base_url, *COMMON), "--swarm", "roles", "--no-train",
             "--limit", "2", "--out", str(study)]
        ) == 0  # fmt: skip
        run = study / "held_out" / "swarm"
        args = ["--base-url", server.base_url, "--task-runs", str(run), str(run)]
        args += ["--suite", "suites/bfcl", "--limit", "2", "--out", str(suites), "--no-progress"]
        script = load_script("swarm_suites.py")
        assert script.main(["--model", "fake-7b", *args]) == 0
        out = capsys.readouterr().out
        assert script.main(["--model", "other-7b", *args]) == 2  # another model: another hash
    recorded = json.loads((run / "run.json").read_text())["policy_hash"]
    played = [json.loads(line) for line in (suites / recorded / "episodes.jsonl").open()]
    assert len(played) == 2 and {e["env_id"] for e in played} == {"suites/bfcl"}
    assert {e["policy_hash"] for e in played} == {recorded}
    assert f"workgym certify --from-runs {run} {run} {suites / recorded}" in out
    assert "differ" in capsys.readouterr().err


def test_swarm_suites_says_in_one_line_what_is_wrong_with_its_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = load_script("swarm_suites.py")
    missing = str(tmp_path / "nothing")
    code = script.main(["--model", "fake-7b", "--task-runs", missing, missing])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "is not a run directory" in err
