"""The regression suites under the guards' attack: no content-free pass survives.

`workgym attack` found replies that attempt nothing passing negative IFEval constraints, and
any reply passing BFCL's irrelevance items under the answer-content probes; both were closed
(docs/certificate.md, "The suites under attack"). This keeps them closed.
"""

from __future__ import annotations

import asyncio

import pytest

import workgym as wg
from workgym.guards.attack import attack_async


@pytest.mark.parametrize("suite", ["suites/ifeval", "suites/bfcl", "suites/reasoning"])
def test_every_probe_gets_its_expected_verdict_on_the_suite(suite: str) -> None:
    if suite == "suites/reasoning":
        pytest.importorskip("reasoning_gym", reason="needs the [suites] extra")
    if suite == "suites/bfcl":
        pytest.importorskip("bfcl_eval", reason="needs bfcl-eval (installed by make test)")
    report = asyncio.run(attack_async(wg.load(suite)))
    failures = [
        f"{c.probe}@{c.family}: expected {c.expected}, got {c.got}" for c in report.failures()
    ]
    assert report.passed and not failures, failures
    assert len(report.cells) > 100
