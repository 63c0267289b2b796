"""The viewer's data layer against the run files themselves: every listed number is recomputed
here from episodes.jsonl with plain Python and must agree."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from viewer_support import EARLY

from workgym.apps.viewer.compare_view import compare_runs
from workgym.apps.viewer.episode_view import build_steps, findings, flag_view
from workgym.apps.viewer.groundtruth import GroundTruth
from workgym.apps.viewer.queries import EpisodeFilter, RunQueries
from workgym.apps.viewer.reviews import REVIEWS, Review, append_review, latest_by_flag, read_reviews
from workgym.apps.viewer.workspace import OutsideRoot, Workspace
from workgym.core.episode import record_flags
from workgym.run.rundir import RunDir, read_spec
from workgym.run.runner import Run


def records(run: Path) -> list[dict[str, Any]]:
    return list(RunDir(run, read_spec(run)).records())


def all_flags(r: dict[str, Any]) -> set[str]:
    return set(record_flags(r)) | set((r.get("verdict") or {}).get("flags") or [])


@pytest.fixture()
def mixed(viewer_root: Path, tmp_path: Path) -> Path:
    """A private copy of the mixed run (some tests append to it)."""
    target = tmp_path / "mixed"
    shutil.copytree(viewer_root / "runs" / "mixed", target)
    return target


@pytest.mark.parametrize(
    ("flt", "check"),
    [
        (EpisodeFilter(), lambda r: True),
        (EpisodeFilter(split="dev"), lambda r: r["split"] == "dev"),
        (EpisodeFilter(family="stock/t1"), lambda r: r["family"] == "stock/t1"),
        (EpisodeFilter(status="no_answer"), lambda r: r["verdict"]["status"] == "no_answer"),
        (EpisodeFilter(success=True), lambda r: r["verdict"]["success"]),
        (
            EpisodeFilter(success=False, split="train"),
            lambda r: not r["verdict"]["success"] and r["split"] == "train",
        ),
        (EpisodeFilter(flag=EARLY), lambda r: EARLY in all_flags(r)),
        (EpisodeFilter(flag="*"), lambda r: bool(all_flags(r))),
        (EpisodeFilter(q="cheapest"), lambda r: "cheapest" in r["family"]),
    ],
)
def test_filters_match_a_python_scan(viewer_root: Path, flt: EpisodeFilter, check: Any) -> None:
    run = viewer_root / "runs" / "mixed"
    expected = sorted((r["task_id"], r["epoch"]) for r in records(run) if check(r))
    page = RunQueries().list_episodes(run, flt, limit=500)
    assert page["total"] == len(expected) > 0
    assert sorted((r["task_id"], r["epoch"]) for r in page["rows"]) == expected


def test_sorting_and_pages_cover_every_episode_once(viewer_root: Path) -> None:
    run = viewer_root / "runs" / "mixed"
    q = RunQueries()
    seen, tokens = [], []
    for offset in range(0, 200, 7):
        page = q.list_episodes(
            run, EpisodeFilter(), sort="tokens", order="desc", offset=offset, limit=7
        )
        seen += [(r["task_id"], r["epoch"]) for r in page["rows"]]
        tokens += [r["tokens"] for r in page["rows"]]
    raw = records(run)
    assert len(seen) == len(set(seen)) == len(raw)
    assert tokens == sorted(tokens, reverse=True)
    expected = sorted(
        (r["usage"]["prompt_tokens"] + r["usage"]["completion_tokens"] for r in raw), reverse=True
    )
    assert tokens == expected
    with pytest.raises(ValueError, match="cannot sort by"):
        q.list_episodes(run, EpisodeFilter(), sort="reward; DROP TABLE x")


def test_summary_is_workgym_summary_of_the_file(viewer_root: Path) -> None:
    run = viewer_root / "runs" / "mixed"
    mine = RunQueries().summary(run).model_dump()
    theirs = Run(RunDir(run, read_spec(run))).summary().model_dump()
    assert mine == theirs
    assert theirs["flags"][EARLY] == 8 and theirs["flags"]["judge_directed"] == 24
    assert theirs["flagged_successes"] >= 8


def test_episode_fetch_returns_the_stored_line(viewer_root: Path) -> None:
    run = viewer_root / "runs" / "mixed"
    q = RunQueries()
    for r in records(run)[::13]:
        assert q.episode(run, r["task_id"], r["epoch"]) == r
    assert q.episode(run, "no-such-task", 0) is None


def test_index_follows_appends_and_survives_a_corrupt_line(mixed: Path) -> None:
    q = RunQueries()
    before = q.facets(mixed)["rows"]
    lines = (mixed / "episodes.jsonl").read_text().splitlines(keepends=True)
    last = json.loads(lines[-1])
    extra = {**last, "task_id": "appended", "epoch": 0}
    # a corrupt line in the middle, then one more good episode at the end
    with (mixed / "episodes.jsonl").open("a") as fh:
        fh.write('{"task_id": "broken", "epoch": \n')
        fh.write(json.dumps(extra) + "\n")
    stat = (mixed / "episodes.jsonl").stat()
    os.utime(mixed / "episodes.jsonl", ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    facets = q.facets(mixed)
    assert facets["rows"] == before + 1 and facets["unreadable"] == 1
    assert q.episode(mixed, "appended", 0) == extra
    assert q.list_episodes(mixed, EpisodeFilter(q="appended"))["total"] == 1


def test_compare_matches_manual_paired_differences(viewer_root: Path) -> None:
    a, b = viewer_root / "runs" / "mixed", viewer_root / "runs" / "oracle"

    def per_task(run: Path) -> dict[str, float]:
        acc: dict[str, list[float]] = {}
        for r in records(run):
            acc.setdefault(r["task_id"], []).append(r["verdict"]["reward"])
        return {k: sum(v) / len(v) for k, v in acc.items()}

    ra, rb = per_task(a), per_task(b)
    diffs = {t: rb[t] - ra[t] for t in ra}
    result = compare_runs(RunQueries(), a, b, limit=500)
    assert result["n_common"] == len(diffs) and result["only_a"] == result["only_b"] == 0
    assert result["test"]["diff"] == pytest.approx(sum(diffs.values()) / len(diffs))
    assert result["b_better"] == sum(d > 0 for d in diffs.values())
    assert result["ties"] == sum(d == 0 for d in diffs.values())
    listed = {r["task_id"]: r["diff"] for r in result["rows"]}
    assert listed == {t: d for t, d in diffs.items() if d != 0}  # only where they disagree
    assert result["test"]["ci95"][0] < result["test"]["diff"] < result["test"]["ci95"][1]


def test_reviews_append_exact_lines(mixed: Path) -> None:
    (mixed / REVIEWS).unlink(missing_ok=True)  # the copy may hold other tests' reviews
    append_review(
        mixed, Review(task_id="t1", epoch=0, flag="peek", decision="exploit", note="reads <answer>")
    )
    first = (mixed / REVIEWS).read_text()
    append_review(mixed, Review(task_id="t1", epoch=0, flag="peek", decision="accepted"))
    text = (mixed / REVIEWS).read_text()
    assert text.startswith(first)  # appended, never rewritten
    lines = [json.loads(x) for x in text.splitlines()]
    assert [list(x) for x in lines] == [["task_id", "epoch", "flag", "decision", "note", "at"]] * 2
    assert latest_by_flag(read_reviews(mixed, "t1", 0))["peek"]["decision"] == "accepted"


def test_guards_read_what_the_viewer_writes(mixed: Path) -> None:
    from workgym.guards import review as guards

    (mixed / REVIEWS).unlink(missing_ok=True)
    flagged = next(r for r in records(mixed) if r["verdict"]["success"] and record_flags(r))
    outcomes = guards.TrustedOutcomes.from_run(mixed)
    assert not outcomes.trusted(flagged["task_id"], flagged["epoch"])
    for flag in guards.episode_flags(flagged):
        append_review(
            mixed,
            Review(task_id=flagged["task_id"], epoch=flagged["epoch"], flag=flag,
                   decision="accepted"),
        )  # fmt: skip
    outcomes = guards.TrustedOutcomes.from_run(mixed)
    assert outcomes.trusted(flagged["task_id"], flagged["epoch"])


def test_findings_point_at_the_cause(viewer_root: Path) -> None:
    run = viewer_root / "runs" / "mixed"
    truth = GroundTruth(viewer_root)
    by_kind: dict[str, dict[str, Any]] = {}
    for r in records(run):
        by_kind.setdefault(r["family"].split("/")[0], r)
    stock = by_kind["stock"]
    steps = build_steps(stock)
    gt = truth.task(run, stock["task_id"])
    assert gt["available"] and gt["note"] is None
    found = findings(stock, gt, steps)
    assert found[0]["text"] == f"answered {gt['answer'] + 1}; expected {gt['answer']}"
    assert "appears in the result of get_item at step 1" in found[1]["text"]
    assert found[1]["at"] == 2  # the assistant message that made the call
    size = by_kind["category_size"]
    texts = [f["text"] for f in findings(size, truth.task(run, size["task_id"]), build_steps(size))]
    assert any("1 tool call(s) failed; first at step 1: list_items (error)" in t for t in texts)
    # tool results are joined to their calls, so no tool message is shown twice
    assert all(s["role"] != "tool" for s in steps)
    assert steps[2]["calls"][0]["result"]["content"].startswith("{")


def test_flags_are_placed_at_the_message_the_audit_recorded(viewer_root: Path) -> None:
    r = next(x for x in records(viewer_root / "runs" / "mixed") if record_flags(x))
    assert r["audit"]["sites"]  # written by the real audit, not by this test
    view = flag_view(r, build_steps(r))
    assert view["at"] == r["audit"]["sites"] and view["unplaced"] == []
    assert set(view["why"]) == set(record_flags(r)) and all(view["why"].values())
    assert all(r["messages"][i]["role"] == "assistant" for at in view["at"].values() for i in at)


def test_flags_without_step_information_are_listed_unplaced(viewer_root: Path) -> None:
    # a record written before the audit recorded sites, or a flag an environment raised
    r = next(x for x in records(viewer_root / "runs" / "mixed") if record_flags(x))
    r = {**r, "audit": {k: v for k, v in r["audit"].items() if k != "sites"}}
    view = flag_view(r, build_steps(r))
    assert view["names"] == sorted(record_flags(r)) and view["unplaced"] == view["names"]
    assert view["at"] == {}
    located = {
        **r,
        "verdict": {
            **r["verdict"],
            "evidence": {"audit": [{"flag": record_flags(r)[0], "step": 1}]},
        },
    }
    view = flag_view(located, build_steps(located))
    assert view["at"] == {record_flags(r)[0]: [2]}
    assert record_flags(r)[0] not in view["unplaced"]


def test_ground_truth_says_when_the_environment_is_missing(mixed: Path) -> None:
    spec = json.loads((mixed / "run.json").read_text())
    spec["env_ref"] = "nobody/nothing"
    (mixed / "run.json").write_text(json.dumps(spec))
    gt = GroundTruth(mixed.parent).task(mixed, "anything")
    assert not gt["available"] and "cannot load environment 'nobody/nothing'" in gt["note"]


def test_workspace_refuses_paths_outside_root(viewer_root: Path, tmp_path: Path) -> None:
    ws = Workspace(viewer_root)
    assert ws.run_dir("runs/mixed") == (viewer_root / "runs" / "mixed").resolve()
    for bad in ["..", "../", "runs/../../x", "/etc", "/etc/passwd", "runs/../..", "\\etc"]:
        with pytest.raises(OutsideRoot):
            ws.resolve(bad)
    outside = tmp_path / "outside"
    outside.mkdir()
    link = viewer_root / "runs" / "escape-link"
    link.symlink_to(outside, target_is_directory=True)
    try:
        with pytest.raises(OutsideRoot):
            ws.resolve("runs/escape-link")
        assert "runs/escape-link" not in ws.scan().runs
    finally:
        link.unlink()
    found = ws.scan()
    assert found.runs == ["runs/mixed", "runs/oracle"]
    assert found.playbooks == ["train/pb"] and found.certificates == ["certs/toy"]


def test_playbook_deltas_carry_their_gate_decisions(viewer_root: Path) -> None:
    from workgym.apps.viewer.playbook_view import diff_versions, read_playbook

    pb = read_playbook(viewer_root / "train" / "pb", viewer_root)
    decisions = {d["id"]: (d["decision"], d["reason"]) for d in pb["deltas"]}
    assert decisions["d-0001"] == ("accepted", "gate B: reward +0.20 > 1 paired SE")
    assert decisions["d-0002"] == ("rejected", "gate A: worse on its source tasks")
    assert decisions["d-0003"][0] == "refused by curator" and "lint" in decisions["d-0003"][1]
    assert [v["hash"] for v in pb["versions"]] == ["h0", "h1"] and len(pb["entries"]) == 3
    assert pb["plot"] == "train/pb/learning_curve.png" and pb["stop"]["reason"] == "max_epochs"
    diff = diff_versions(viewer_root / "train" / "pb", "h0", "h1")["diff"]
    added = [x for x in diff if x.startswith("+") and not x.startswith("+++")]
    assert any("pb-002" in x and "rounded" in x for x in added)
    assert not any("pb-003" in x for x in added)  # retired entries are not rendered
    with pytest.raises(FileNotFoundError):
        diff_versions(viewer_root / "train" / "pb", "h0", "../../etc/passwd")


def test_certificate_summary_links_its_runs(viewer_root: Path) -> None:
    from workgym.apps.viewer.certificate_view import read_certificate

    cert = read_certificate(viewer_root / "certs" / "toy", viewer_root)
    assert cert["verdict"] == "FAIL" and cert["failed"] == ["non_regression"]
    runs = cert["summary"]["runs"]
    assert runs["baseline"]["link"] == "runs/mixed" and runs["candidate"]["link"] == "runs/oracle"
    assert cert["summary"]["suites"][0]["passed"] is False
    assert cert["html"] == "certs/toy/certificate.html"
