"""The toy-rules agent as an OpenAI-compatible server would play it (a test double).

Shared by the plumbing tests of bench/playbook_real.py and bench/swarm_real.py: look the code up,
then submit it, upper-cased when the system prompt says so (or on every third seed).
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType
from typing import Any

from fakes.chat_server import ScriptedReply, tool_calls

BENCH_DIR = Path(__file__).resolve().parents[2] / "bench"


def agent_reply(body: dict[str, Any]) -> ScriptedReply:
    """The agent's next turn for a chat request that carries tools."""
    messages = body["messages"]
    system = messages[0]["content"] if messages[0]["role"] == "system" else ""
    results = [m for m in messages if m["role"] == "tool"]
    if not results:
        task = next(m["content"] for m in messages if m["role"] == "user")
        part = re.search(r"'([^']+)'", task)
        return tool_calls(("lookup_code", {"name": part.group(1) if part else ""}))
    code = results[-1]["content"]
    upper = "upper case" in system or int(body.get("seed") or 0) % 3 == 0
    return tool_calls(("submit_code", {"code": code.upper() if upper else code}))


def load_bench(script: str) -> ModuleType:
    """A bench script (not a package module) loaded by path, so its functions can be driven."""
    path = BENCH_DIR / script
    spec = importlib.util.spec_from_file_location(path.stem + "_bench", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
