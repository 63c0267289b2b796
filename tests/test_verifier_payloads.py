"""Every built-in verifier, walked with the deep-nesting and huge-value payloads (issue 39, item
3): whatever a submitted answer provokes is the agent's failure (scored, trainable), never
`verifier_error`, which training masks. The warehouse's SQL and evidence verifiers have their
own walks (tests/warehouse/test_warehouse_deep_sql.py, test_warehouse_evidence_bounds.py)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import workgym as wg
from workgym.guards.capabilities import submit

ENVS = [
    "workgym/toy-shop",
    "workgym/toy-rules",
    "workgym/lookup",
    "workgym/ops-api",
    "workgym/docstore",
    "suites/reasoning",
    "suites/bfcl",
    "suites/ifeval",
]


def _deep_list(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


PAYLOADS: dict[str, Any] = {
    "parens-300": "SELECT" + "(" * 300 + "1" + ")" * 300,
    "parens-3000": "(" * 3000 + "1" + ")" * 3000,
    "nested-list-300": _deep_list(300),
    "nested-dict-300": {"a": _deep_list(300)},
    "text-1mb": "x" * 2**20,
    "int-400-digits": 10**400,
    "float-max": 1.7976931348623157e308,
    "nan": float("nan"),
}


@pytest.mark.parametrize("name", ENVS)
def test_no_payload_masks_a_verdict(name: str) -> None:
    try:
        env = wg.load(name)
    except Exception as err:  # an environment that needs data this machine lacks
        pytest.skip(f"{name} does not load here: {err}")
    task = next(iter(env.taskset))
    for label, payload in PAYLOADS.items():
        turns = submit(env, task, payload)
        model = wg.TaskScript(f"scripted/payload-{label}", lambda t, e, turns=turns: turns)
        ep = asyncio.run(wg.run_episode(env, task, wg.Policy(model)))
        verdict = ep.verdict
        assert verdict is not None, (name, label, ep.outcome)
        assert verdict.status != "verifier_error", (name, label, verdict.evidence)
        assert not verdict.success, (name, label)
