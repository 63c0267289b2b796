"""Plumbing of bench/playbook_real.py against a real local HTTP server (FakeChatServer).

The fake server plays a scripted agent for the toy-rules environment (it upper-cases codes when
the playbook says so) and a scripted reflector; the numbers it produces are not learning results.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import pytest

from fakes.chat_server import FakeChatServer, ScriptedReply, text, tool_calls
from workgym.train.playbook.toyrules import GOOD_RULE

BENCH = Path(__file__).resolve().parents[2] / "bench" / "playbook_real.py"


class ToyRulesServer(FakeChatServer):
    """Answers agent calls (they carry tools) like the toy's scripted agent, reflector calls
    (no tools) with one lesson."""

    def _take(self, body: dict[str, Any], headers: dict[str, str]) -> ScriptedReply:
        with self._lock:
            self.requests.append(body)
        messages = body["messages"]
        if not body.get("tools"):
            lesson = {"op": "ADD", "section": "format", "text": GOOD_RULE, "evidence": ["E1", "E2"]}
            return text(json.dumps({"diagnoses": ["case"], "lessons": [lesson]}))
        system = messages[0]["content"] if messages[0]["role"] == "system" else ""
        results = [m for m in messages if m["role"] == "tool"]
        if not results:
            task = next(m["content"] for m in messages if m["role"] == "user")
            part = re.search(r"'([^']+)'", task)
            return tool_calls(("lookup_code", {"name": part.group(1) if part else ""}))
        code = results[-1]["content"]
        upper = "upper case" in system or int(body.get("seed") or 0) % 3 == 0
        return tool_calls(("submit_code", {"code": code.upper() if upper else code}))


def load_bench() -> Any:
    spec = importlib.util.spec_from_file_location("playbook_real_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
