"""bench/reissue_results.py against the published files: they are its fixed point (no number
under docs/results/ was edited by hand), and its readings are the ones the statistics give."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import ModuleType

import pytest

from fakes.toy_rules_agent import load_bench
from workgym.stats.proportions import paired_bound

RESULTS = Path(__file__).resolve().parents[2] / "docs" / "results"


@pytest.fixture()
def bench(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    module = load_bench("reissue_results.py")
    root = tmp_path / "docs" / "results"
    shutil.copytree(RESULTS, root)
    monkeypatch.setattr(module, "ROOT", root)
    return module


def test_rerunning_the_reissue_changes_no_published_file(bench: ModuleType) -> None:
    root: Path = bench.ROOT
    calls = [
        (bench.sft_patch_file, "*/sft_patch.json"),
        (bench.playbook_comparison, "*/comparison.json"),
        (bench.playbook_report_md, "*/report.md"),
        (bench.compare_file, "*/compare.json"),
        (bench.swarm_study_file, "*/swarm_study.json"),
    ]
    seen = 0
    for fn, pattern in calls:
        for path in sorted(root.glob(pattern)):
            before = path.read_text(encoding="utf-8")
            fn(path, True)
            assert path.read_text(encoding="utf-8") == before, path
            seen += 1
    assert seen >= 11


def test_no_clustered_t_interval_is_left_in_the_swarm_files() -> None:
    for path in sorted(RESULTS.glob("*/compare.json")) + sorted(RESULTS.glob("*/swarm_study.json")):
        text = path.read_text(encoding="utf-8")
        assert '"method": "paired_t_clustered"' not in text, path


def test_tied_playbook_arms_no_longer_match() -> None:
    data = json.loads((RESULTS / "playbook-real-lookup" / "comparison.json").read_text())
    te = data["token_efficiency"]
    cand = data["held_out"][te["candidate"]]["scores"]
    base = data["held_out"][te["baseline"]]["scores"]
    assert cand == base  # every pair ties
    bound = paired_bound(cand, base, 0.05)
    assert te["lower"] == pytest.approx(bound.lower)
    assert te["lower"] < -te["margin"] and te["non_inferior"] is False


def test_sft_patch_bounds_are_the_certificates() -> None:
    folder = RESULTS / "sft-patch-lookup"
    data = json.loads((folder / "sft_patch.json").read_text())
    for arm, row in data["arms"].items():
        cert = json.loads((folder / f"certificate-{arm}.json").read_text())
        suites = {s["env"]["id"]: s for s in cert["suites"]}
        for sid, got in row["suites"].items():
            assert got["lower"] == pytest.approx(suites[sid]["non_inferiority"]["lower"])
            assert got["status"] == suites[sid]["non_inferiority"]["status"]
