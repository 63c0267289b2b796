"""`bench/imitation_merge.py`: per-model imitation-gap folders gathered into one report folder.

Test doubles only (`scripted/`), which check the plumbing and measure nothing."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import workgym as wg
from fakes.toy_rules_agent import load_bench
from workgym.certify.imitation_gap import REPORT, SCORES, measure
from workgym.envs.lookup.env import Lookup

MODELS = ("scripted/oracle", "scripted/null")


def score(out: Path, *names: str) -> None:
    models = {name: wg.get_model(name) for name in names}
    asyncio.run(measure(Lookup(), models, split="dev", out=out, limit=4, progress=False))


def test_merged_folders_report_every_model_without_playing_again(tmp_path: Path) -> None:
    merge = load_bench("imitation_merge.py")
    for name in MODELS:
        score(tmp_path / name.split("/")[1], name)
    out = tmp_path / "all"
    sources = [tmp_path / "oracle", tmp_path / "null"]
    out.mkdir()
    assert merge.merge_scores(sources, out) == 2 * 4
    assert sorted(merge.merge_free(sources, out)) == ["scripted_null", "scripted_oracle"]
    before = {p: p.read_bytes() for p in out.rglob("*.jsonl") if p.name != "own_prefix.jsonl"}
    score(out, *MODELS)
    after = {p: p.read_bytes() for p in out.rglob("*.jsonl") if p.name != "own_prefix.jsonl"}
    assert after == before  # everything was already scored and played
    report = json.loads((out / REPORT).read_text())
    assert report["models"] == list(MODELS) and {c["model"] for c in report["cells"]} == set(MODELS)
    # Merging again adds nothing; a folder that scores a draw differently is refused.
    assert merge.merge_scores(sources, out) == 0
    line = json.loads((tmp_path / "null" / SCORES).read_text().splitlines()[0])
    line["steps"][0]["matched"] = not line["steps"][0]["matched"]
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / SCORES).write_text(json.dumps(line) + "\n")
    with pytest.raises(SystemExit, match="differently"):
        merge.merge_scores([tmp_path / "bad"], out)


def test_a_symbolic_link_in_a_run_folder_is_refused(tmp_path: Path) -> None:
    merge = load_bench("imitation_merge.py")
    run = tmp_path / "src" / "free" / "m"
    run.mkdir(parents=True)
    (run / "episodes.jsonl").symlink_to("/etc/hostname")
    with pytest.raises(SystemExit, match="symbolic link"):
        merge.merge_free([tmp_path / "src"], tmp_path / "out")
