"""The certificate from scripted baseline and candidate runs: PASS, each FAIL, recompute, looks."""

from __future__ import annotations

import asyncio
import base64
import json
import re
from pathlib import Path

import pytest
from certify_scripted import (
    BROKEN,
    JOB,
    REGRESS,
    SAME,
    STRONG,
    SUITE_A,
    SUITE_B,
    WEAK,
    own_admission,
)

import workgym as wg
from workgym.certify.certificate import recompute
from workgym.certify.looks import read_looks
from workgym.certify.schema import Certificate
from workgym.certify.workflow import Request, certify_async
from workgym.core.errors import ConfigError
from workgym.guards.admission import NotAdmittedError


@pytest.fixture
def job_check(tmp_path: Path) -> Path:
    return own_admission(JOB, tmp_path)


@pytest.fixture
def broken_check(tmp_path: Path) -> Path:
    return own_admission(BROKEN, tmp_path)


def certify(
    tmp: Path, baseline: str, candidate: str, check: Path | None, **kw: object
) -> Certificate:
    req = Request(
        env=kw.pop("env", JOB),  # type: ignore[arg-type]
        baseline=wg.Policy(baseline),
        candidate=wg.Policy(candidate),
        suites=[SUITE_A, SUITE_B],
        out=tmp / "cert",
        admission_dir=check,
        looks_log=tmp / "looks.jsonl",
        progress=False,
        n_resamples=2000,
        **kw,  # type: ignore[arg-type]
    )
    return asyncio.run(certify_async(req))[0]


def test_pass_when_better_and_non_inferior(tmp_path: Path, job_check: Path) -> None:
    cert = certify(tmp_path, WEAK, STRONG, job_check)
    assert cert.verdict == "PASS" and cert.failed == []
    assert [c.passed for c in cert.conditions] == [True, True, True]
    g = cert.task.gain
    assert g.baseline_mean == pytest.approx(sum(i.baseline.mean for i in cert.task.items) / 60)
    assert g.diff > 0.3 and g.lower is not None and g.lower > 0 and g.significant
    # 12 test families: 2^-12 <= alpha, so the default estimand is families (decision 0070)
    assert g.n_items == 60 and g.n_clusters == 12 and g.method == "sign_flip_families"
    assert g.estimand == "families" and g.smallest_p == 2.0**-12 and g.passable
    assert {t.name for t in g.tests} == {"sign_flip_families", "mcnemar_exact"}  # K=1, binary
    assert [t.name for t in g.tests if t.gate] == ["sign_flip_families"]
    # the stronger policy solves a superset: McNemar sees no baseline-only wins
    assert next(t for t in g.tests if t.name == "mcnemar_exact").detail.startswith("0 items")
    assert [s.env.id for s in cert.suites] == [SUITE_A, SUITE_B]
    assert all(s.non_inferiority.passed for s in cert.suites)
    assert cert.task.cost.ratio is not None and cert.task.cost.ratio < 1
    assert cert.task.matched and cert.task.matched.startswith("matched at")
    assert len(cert.task.gain.families) == 12
    out = tmp_path / "cert"
    data = json.loads((out / "certificate.json").read_text())
    assert data["format"] == "workgym-certificate/1" and data["verdict"] == "PASS"
    assert len(data["task"]["items"]) == 60 and data["frozen"]["looks"]["attempt"] == 1
    assert data["task"]["env"]["split_hash"] and data["frozen"]["candidate"]["hash"]
    assert all(len(r["episodes_sha256"]) == 64 for r in data["task"]["runs"])
    html = (out / "certificate.html").read_text()
    assert html.index(">PASS<") < html.index("Gain on held-out work")
    assert "data:image/png;base64," in html and "matched at" in html
    pngs = re.findall(r"data:image/png;base64,([A-Za-z0-9+/=]+)", html)
    assert len(pngs) == 2 and all(base64.b64decode(p)[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)


def test_fail_without_gain(tmp_path: Path, job_check: Path) -> None:
    cert = certify(tmp_path, WEAK, SAME, job_check)
    assert cert.verdict == "FAIL" and cert.failed == ["gain"]
    detail = cert.conditions[0].detail
    assert detail.startswith("no significant gain") and "+0.000" in detail


def test_fail_when_a_suite_regressed(tmp_path: Path, job_check: Path) -> None:
    cert = certify(tmp_path, WEAK, REGRESS, job_check)
    assert cert.verdict == "FAIL" and cert.failed == ["non_regression"]
    assert cert.task.gain.significant
    detail = next(c.detail for c in cert.conditions if c.name == "non_regression")
    assert f"suite {SUITE_B} not shown non-inferior:" in detail and SUITE_A not in detail
    html = (tmp_path / "cert" / "certificate.html").read_text()
    assert "non-regression" in html and ">FAIL<" in html


def test_refuses_an_environment_that_failed_admission(tmp_path: Path, broken_check: Path) -> None:
    report = broken_check
    assert not json.loads((report / "check" / "check.json").read_text())["passed"]
    with pytest.raises(NotAdmittedError, match="failed admission"):
        certify(tmp_path, WEAK, STRONG, report, env=BROKEN)
    assert read_looks(report / "looks.jsonl") == []  # refused before the test split opened


def test_forced_admission_fails_and_is_recorded(tmp_path: Path, broken_check: Path) -> None:
    report = broken_check
    cert = certify(tmp_path, WEAK, STRONG, report, env=BROKEN, force=True)
    assert cert.verdict == "FAIL" and cert.failed == ["admission"]
    assert cert.frozen.admission.forced and not cert.frozen.admission.passed
    assert "check` failed" in cert.conditions[2].detail
    assert "oracle solves every task" in cert.conditions[2].detail
    forced = [f"unadmitted-environment:{BROKEN}@{wg.load(BROKEN).content_hash()[:12]}"]
    assert all(r.forced == forced for r in cert.task.runs)
    run_json = json.loads((tmp_path / "cert/runs/task/candidate/run.json").read_text())
    assert run_json["forced"] == forced


def test_recompute_is_byte_for_byte_and_detects_changed_episodes(
    tmp_path: Path, job_check: Path
) -> None:
    certify(tmp_path, WEAK, STRONG, job_check, epochs=2)
    path = tmp_path / "cert" / "certificate.json"
    cert, same, changed = recompute(path)
    assert same and changed == [] and cert.to_json() == path.read_text()
    assert cert.task.gain.pass_hat_k is not None  # K=2
    episodes = tmp_path / "cert/runs/task/candidate/episodes.jsonl"
    lines = episodes.read_text().splitlines()
    record = json.loads(lines[0])
    record["verdict"]["reward"] = 1.0 - record["verdict"]["reward"]
    record["verdict"]["success"] = not record["verdict"]["success"]
    episodes.write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n")
    _, same, changed = recompute(path)
    assert not same and len(changed) == 1 and "candidate" in changed[0]


def test_every_look_is_counted_and_a_re_read_is_not(tmp_path: Path, job_check: Path) -> None:
    first = certify(tmp_path, WEAK, STRONG, job_check)
    again = certify(tmp_path, WEAK, STRONG, job_check)  # the same runs under the same gate
    assert again.frozen.looks == first.frozen.looks and again.frozen.looks.attempt == 1
    other = certify(tmp_path, WEAK, STRONG, job_check, margin=0.1)  # another gate: a new look
    assert other.frozen.looks.attempt == 2 and other.frozen.looks.previous_attempts == 1
    assert any("attempt 2" in w for w in other.warnings)
    recompute(tmp_path / "cert" / "certificate.json")
    looks = read_looks(job_check / "looks.jsonl")
    assert [lk.kind for lk in looks] == ["certify", "runs", "certify"]
    assert looks[1].of == first.frozen.looks.head and looks[2].seq == other.frozen.looks.seq == 3


def test_resumes_an_interrupted_run(tmp_path: Path, job_check: Path) -> None:
    first = certify(tmp_path, WEAK, STRONG, job_check)
    episodes = tmp_path / "cert/runs/task/baseline/episodes.jsonl"
    lines = episodes.read_text().splitlines()
    episodes.write_text("\n".join(lines[:20]) + "\n")  # as if killed after 20 episodes
    again = certify(tmp_path, WEAK, STRONG, job_check)
    assert len(episodes.read_text().splitlines()) == 60
    assert [i.baseline.rewards for i in again.task.items] == [
        i.baseline.rewards for i in first.task.items
    ]


def test_from_runs_builds_the_same_verdict_and_runs_missing_suites(
    tmp_path: Path, job_check: Path
) -> None:
    first = certify(tmp_path, WEAK, STRONG, job_check)
    runs = tmp_path / "cert" / "runs"
    req = Request(
        from_runs=[runs / "task/baseline", runs / "task/candidate"],
        suites=[SUITE_A],
        out=tmp_path / "again",
        admission_dir=job_check,
        looks_log=tmp_path / "looks.jsonl",
        progress=False,
        n_resamples=2000,
    )
    cert = asyncio.run(certify_async(req))[0]
    assert cert.verdict == "PASS"
    assert cert.task.gain.diff == first.task.gain.diff
    assert (tmp_path / "again/runs/test-certify_suite-a/candidate/episodes.jsonl").exists()


def test_from_runs_refuses_arms_with_different_seeds(tmp_path: Path, job_check: Path) -> None:
    env = wg.load(JOB)
    for name, model, seed in (("b", WEAK, 0), ("c", STRONG, 1)):
        wg.eval(env, model, split="test", seed=seed, out=tmp_path / name, progress=False)
    req = Request(
        from_runs=[tmp_path / "b", tmp_path / "c"],
        suites=[],
        admission_dir=job_check,
        looks_log=tmp_path / "looks.jsonl",
        progress=False,
    )
    with pytest.raises(ConfigError, match="not a pair"):
        asyncio.run(certify_async(req))


def test_a_built_in_suite_runs_through_the_workflow(tmp_path: Path, job_check: Path) -> None:
    req = Request(
        env=JOB,
        baseline=wg.Policy("scripted/oracle"),
        candidate=wg.Policy("scripted/oracle", playbook="Check every constraint twice."),
        suites=["suites/ifeval"],
        out=tmp_path / "cert",
        admission_dir=job_check,
        looks_log=tmp_path / "looks.jsonl",
        progress=False,
    )
    cert = asyncio.run(certify_async(req))[0]
    (suite,) = cert.suites
    ni = suite.non_inferiority
    # the oracle cannot beat the oracle; a suite both arms saturate cannot show non-regression
    saturated = all(i.baseline.mean == 1.0 for i in suite.items)
    assert cert.failed == (["gain", "non_regression"] if saturated else ["gain"])
    assert ni.status == ("cannot show" if saturated else "shown")
    assert suite.env.id == "suites/ifeval" and ni.n_items == 156 and ni.n_clusters == 26
    # identical arms: every pair ties, and the exact bound is about -(1 - 0.05^(1/n)) (-0.0190),
    # not the difference 0
    assert ni.baseline_mean == ni.candidate_mean and ni.lower is not None
    assert ni.lower == pytest.approx(-(1 - 0.05 ** (1 / 156)), abs=2e-4)
    assert ni.method == "exact_unconditional" and ni.status in ("shown", "cannot show")
    # the oracle solves every item; what does not count is a success the audit flagged
    # (GUARDS.md: not a success until reviewed), and the certificate says how many
    unsolved = [i for i in suite.items if i.baseline.mean < 1.0]
    assert all(i.baseline.failures == ["flagged"] and i.baseline.flags for i in unsolved)
    flagged = suite.cost.baseline.flagged_successes
    assert flagged == len(unsolved)
    if flagged:
        assert any(f"{flagged} flagged baseline successes" in w for w in cert.warnings)
    assert cert.frozen.candidate.playbook_sha256 and not cert.frozen.baseline.playbook_sha256


def test_a_flagged_success_counts_once_every_flag_is_accepted(tmp_path: Path) -> None:
    from workgym.certify.comparison import read_arm
    from workgym.envs.toy.env import ToyShop
    from workgym.guards.review import append_review

    env = ToyShop()
    run = wg.eval(env, "scripted/oracle", split="dev", out=tmp_path / "r", progress=False)
    records = [e for e in run.episodes()]
    items = [(e.task_id, e.family) for e in records]
    scores, cost = read_arm(tmp_path / "r", items, 1)
    # the oracle answers without looking anything up: every success is flagged, none counts
    assert cost.flagged_successes == len(items) and cost.reviewed_successes == 0
    assert all(s.rewards == [0.0] and s.failures == ["flagged"] for s in scores.values())
    first, second = records[0], records[1]
    for ep, decision in ((first, "accepted"), (second, "exploit")):
        for flag in ep.flags:
            append_review(tmp_path / "r", ep.task_id, 0, flag, decision)  # type: ignore[arg-type]
    scores, cost = read_arm(tmp_path / "r", items, 1)
    assert scores[first.task_id].rewards == [1.0] and scores[first.task_id].failures == ["reviewed"]
    assert scores[second.task_id].rewards == [0.0]  # a confirmed exploit never counts
    assert cost.reviewed_successes == 1 and cost.flagged_successes == len(items) - 1


def test_recompute_names_a_run_whose_reviews_changed(tmp_path: Path, job_check: Path) -> None:
    from workgym.guards.review import REVIEWS, Review

    certify(tmp_path, WEAK, STRONG, job_check)
    path = tmp_path / "cert" / "certificate.json"
    run = tmp_path / "cert/runs/task/candidate"
    record = json.loads((run / "episodes.jsonl").read_text().splitlines()[0])
    review = Review(task_id=record["task_id"], epoch=0, flag="x", decision="accepted")
    with (run / REVIEWS).open("a") as fh:
        fh.write(review.model_dump_json() + "\n")
    _, same, changed = recompute(path)
    assert not same and changed == [f"{run} reviews (candidate on {JOB})"]


def test_the_certificate_reads_episodes_with_the_run_directorys_one_reader(
    tmp_path: Path,
) -> None:
    """`read_arm` reads episodes.jsonl through `run.rundir.numbered_records`, as `RunDir` does:
    the same records, and a corrupt line is the same one-line error from both."""
    from workgym.certify.comparison import read_arm
    from workgym.core.errors import ConfigError
    from workgym.envs.toy.env import ToyShop
    from workgym.run.rundir import RunDir, read_spec

    out = tmp_path / "r"
    run = wg.eval(ToyShop(), "scripted/oracle", split="dev", out=out, progress=False)
    items = [(e.task_id, e.family) for e in run.episodes()]
    scores, _ = read_arm(out, items, 1)
    assert sorted(scores) == sorted(r["task_id"] for r in RunDir(out, read_spec(out)).records())
    with (out / "episodes.jsonl").open("a") as fh:
        fh.write("{not json\n")
    messages = []
    for read in (
        lambda: read_arm(out, items, 1),
        lambda: list(RunDir(out, read_spec(out)).records()),
    ):
        with pytest.raises(ConfigError) as err:
            read()
        messages.append(str(err.value))
    assert messages[0] == messages[1] and "\n" not in messages[0]
    assert f"episodes.jsonl:{len(items) + 1} is corrupt" in messages[0]
