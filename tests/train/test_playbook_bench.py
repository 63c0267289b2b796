"""Plumbing of bench/playbook_real.py against a real local HTTP server (FakeChatServer).

The fake server plays a scripted agent for the toy-rules environment (it upper-cases codes when
the playbook says so) and a scripted reflector; the numbers it produces are not learning results.
"""

from __future__ import annotations

import json
from pathlib import Path
from statistics import fmean
from typing import Any

import pytest

from fakes.chat_server import FakeChatServer, ScriptedReply, text
from fakes.toy_rules_agent import agent_reply
from fakes.toy_rules_agent import load_bench as load_script
from workgym.envs.toy_rules.env import GOOD_RULE


class ToyRulesServer(FakeChatServer):
    """Answers agent calls (they carry tools) like the toy's scripted agent, reflector calls
    (no tools) with one lesson."""

    def _take(self, body: dict[str, Any], headers: dict[str, str]) -> ScriptedReply:
        with self._lock:
            self.requests.append(body)
        if not body.get("tools"):
            lesson = {"op": "ADD", "section": "format", "text": GOOD_RULE, "evidence": ["E1", "E2"]}
            return text(json.dumps({"diagnoses": ["case"], "lessons": [lesson]}))
        return agent_reply(body)


def load_bench() -> Any:
    return load_script("playbook_real.py")


SHORT_RUN = ["--model", "fake-7b", "--env", "workgym/toy-rules", "--epochs", "1",
             "--group-size", "2", "--batch-size", "4", "--dev-k", "1", "--gate-tasks", "4",
             "--max-iterations", "1", "--concurrency", "4", "--no-progress"]  # fmt: skip
"""One training iteration and one test epoch: the baseline tests vary only the arms."""


def short_run(bench: Any, server: ToyRulesServer, out: Path, *arms: str) -> int:
    return int(bench.main(["--base-url", server.base_url, "--out", str(out), *SHORT_RUN, *arms]))


def test_bench_runs_the_full_comparison_against_an_http_endpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = load_bench()
    with ToyRulesServer() as server:
        code = bench.main(
            [
                "--base-url",
                server.base_url,
                "--model",
                "fake-7b",
                "--env",
                "workgym/toy-rules",
                "--out",
                str(tmp_path),
                "--epochs",
                "2",
                "--group-size",
                "2",
                "--batch-size",
                "4",
                "--dev-k",
                "2",
                "--gate-tasks",
                "4",
                "--max-iterations",
                "2",
                "--concurrency",
                "4",
                "--no-progress",
            ]
        )
        requests = list(server.requests)
    assert code == 0
    printed = capsys.readouterr().out
    assert "held-out test split" in printed and "token-matched:" in printed
    assert "gain over untrained openai/fake-7b" in printed
    summary = json.loads((tmp_path / "comparison.json").read_text())
    arms = summary["held_out"]
    assert len(arms) == 2 and all(
        len(a["tasks"]) == 6 and a["episodes"] == 12 for a in arms.values()
    )
    trained = next(a for name, a in arms.items() if name.startswith("trained"))
    assert (
        summary["train"]["accepted"]
        and GOOD_RULE in (tmp_path / "train" / "playbook.md").read_text()
    )
    assert summary["token_efficiency"]["n"] == 6 and "statement" in summary["token_efficiency"]
    assert summary["gain"]["diff"] == pytest.approx(
        sum(trained["scores"]) / 6 - sum(arms["untrained openai/fake-7b"]["scores"]) / 6
    )
    reflector_calls = [r for r in requests if not r.get("tools")]
    agent_calls = [r for r in requests if r.get("tools")]
    logged = [json.loads(x) for x in (tmp_path / "train" / "log.jsonl").read_text().splitlines()]
    asked = [e for e in logged if e["kind"] == "reflection" and "skipped" not in e]
    assert len(reflector_calls) == len(asked) >= 1  # one reflection call per iteration at most
    assert all(r["model"] == "fake-7b" for r in requests)
    assert all("seed" in r for r in agent_calls)
    assert any(GOOD_RULE in r["messages"][0]["content"] for r in agent_calls)


def test_a_hand_written_prompt_is_a_baseline_and_the_plot_is_written(tmp_path: Path) -> None:
    """The scripted agent always upper-cases under this prompt, so that baseline wins on dev and
    is the one the playbook is compared with (a known answer, not a learning result)."""
    bench = load_bench()
    prompt = "Codes are written in upper case."
    with ToyRulesServer() as server:
        short_run(bench, server, tmp_path, "--baseline-system-prompt", prompt)
    summary = json.loads((tmp_path / "comparison.json").read_text())
    hand = "untrained openai/fake-7b + prompt 1"
    assert summary["best_untrained_on_dev"] == hand
    assert set(summary["held_out"]["untrained openai/fake-7b + prompt 1"]["scores"]) == {1.0}
    assert (tmp_path / "comparison.png").stat().st_size > 0


def test_a_sampling_baseline_is_played_at_its_own_temperature(tmp_path: Path) -> None:
    bench = load_bench()
    with ToyRulesServer() as server:
        short_run(bench, server, tmp_path, "--baseline-temperature", "0.9")
        requests = list(server.requests)
    summary = json.loads((tmp_path / "comparison.json").read_text())
    arm = summary["held_out"]["untrained openai/fake-7b at temperature 0.9"]
    spec = json.loads((Path(arm["run"]) / "run.json").read_text())
    assert spec["policy"]["sampling"]["temperature"] == 0.9  # the test arm, not --test-temperature
    other = summary["held_out"]["untrained openai/fake-7b"]
    assert (
        json.loads((Path(other["run"]) / "run.json").read_text())["policy"]["sampling"][
            "temperature"
        ]
        == 0.0
    )
    # the baseline's calls carry 0.9; training's carry 0.7 and the other test arms' 0.0
    temps = {r.get("temperature") for r in requests if r.get("tools")}
    assert {0.9, 0.7, 0.0} <= temps


def test_a_self_consistency_baseline_plays_k_attempts_and_counts_them_all(tmp_path: Path) -> None:
    bench = load_bench()
    with ToyRulesServer() as server:
        short_run(bench, server, tmp_path, "--baseline-attempts", "3")
    summary = json.loads((tmp_path / "comparison.json").read_text())
    arm = summary["held_out"]["untrained openai/fake-7b, 3 attempts + vote at T=0.7"]
    plain = summary["held_out"]["untrained openai/fake-7b"]
    assert arm["episodes"] == plain["episodes"] == 6  # one team episode a task
    spec = json.loads((Path(arm["run"]) / "run.json").read_text())
    assert spec["policy"]["sampling"]["temperature"] == 0.7
    # every attempt's tokens are the arm's: three attempts cost well over one
    assert arm["tokens_per_task"] > 2 * plain["tokens_per_task"]


@pytest.mark.parametrize("bad", ["0", "two", "-3"])
def test_a_bad_number_of_attempts_is_one_line_and_exit_2(
    bad: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stop:
        load_bench().parse(["--model", "m", "--baseline-attempts", bad])
    assert stop.value.code == 2
    assert f"{bad!r} is not a number of attempts: give 1 or more" in capsys.readouterr().err


def bootstrap_run(out: Path, *arms: str) -> int:
    """The bootstrap comparison with the toy-examples double: 12 train tasks twice, at most as
    many candidates as examples, one dev and one test epoch; `arms` adds the rest."""
    at_most = arms[arms.index("--max-examples") + 1]
    argv = ["--model", "scripted/toy-examples-agent", "--env", "workgym/toy-examples",
            "--learner", "bootstrap", "--train-tasks", "12", "--samples", "2",
            "--max-candidates", at_most, "--dev-k", "1", "--epochs", "1", "--out", str(out),
            "--concurrency", "4", "--no-progress", *arms]  # fmt: skip
    return int(load_bench().main(argv))


def test_the_bootstrap_learner_is_compared_with_the_best_untrained_arm_on_dev(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--learner bootstrap` with the toy-examples double (a known answer, not learning): it
    fails at temperature 0 without a worked example and copies one when it has it, so the
    playbook learned from its train successes wins on test; the untrained arms are scored on the
    whole dev split, the budget is printed first, and the training tokens are the learner's."""
    assert bootstrap_run(tmp_path, "--max-examples", "3", "--baseline-temperature", "0.9") == 0
    printed = capsys.readouterr().out
    assert "budget, stated before the run: at most" in printed
    summary = json.loads((tmp_path / "comparison.json").read_text())
    assert summary["learner"] == "bootstrap" and summary["reflector"] is None
    dev = {row["name"]: row for row in summary["train"]["dev_baselines"]}
    assert set(dev) == {
        "untrained scripted/toy-examples-agent",
        "untrained scripted/toy-examples-agent at temperature 0.9",
    }
    assert dev["untrained scripted/toy-examples-agent"]["reward"] == 0.0
    assert summary["best_untrained_on_dev"] == max(dev, key=lambda n: dev[n]["reward"])
    trained = next(a for name, a in summary["held_out"].items() if name.startswith("trained"))
    assert len(trained["tasks"]) == 24 and fmean(trained["scores"]) == 1.0
    assert summary["gain"]["diff"] > 0 and summary["reverse_gain"] is None
    assert summary["token_efficiency"]["training_tokens"] == summary["train"]["training_tokens"]
    assert "transform(" in (tmp_path / "train" / "playbook.md").read_text()


def test_a_better_untrained_arm_is_tested_the_other_way(tmp_path: Path) -> None:
    """When the best untrained arm beats the trained one (here the oracle, against a playbook of
    one worked example that helps one kind of three), the same gain test runs the other way."""
    oracle = ["--baseline-model", "scripted/oracle"]
    assert bootstrap_run(tmp_path, "--max-examples", "1", *oracle) == 0
    summary = json.loads((tmp_path / "comparison.json").read_text())
    assert summary["best_untrained_on_dev"] == "untrained scripted/oracle"
    assert summary["gain"]["diff"] < 0
    reverse = summary["reverse_gain"]
    assert reverse["diff"] == pytest.approx(-summary["gain"]["diff"])
    assert reverse["p_value"] < 0.05 and reverse["lower"] > 0
