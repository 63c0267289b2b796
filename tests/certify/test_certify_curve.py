"""`workgym certify --curve`: both trainers' curve files are read, drawn, kept and recomputed.

The GRPO file is written the way `train_grpo` writes it: one `rollout_stats(...)` point per batch
of real (scripted) episodes, serialised with `model_dump_json()` (the trainer's own writer is a
closure inside `train_grpo`, which needs torch and a model). The playbook output is a real, tiny
`train_playbook` run on the toy-rules test environment with its scripted doubles.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path

import pytest
from certify_scripted import JOB, STRONG, WEAK
from test_certify_certificate import certify, job_check  # noqa: F401  (fixture)
from typer.testing import CliRunner

import workgym as wg
from workgym.apps.cli.main import app
from workgym.certify import plots
from workgym.certify.certificate import build, recompute, sides_of
from workgym.certify.curve import read_curve
from workgym.certify.looks import read_looks
from workgym.certify.report_html import NO_CURVE, render
from workgym.core.errors import ConfigError
from workgym.envs.toy.env import ToyShop
from workgym.envs.toy_rules.env import ToyRules, ToyRulesAgent, ToyRulesReflector
from workgym.train.playbook.api import train_playbook
from workgym.train.playbook.config import TrainConfig
from workgym.train.trl.rollout import RolloutStats, rollout_stats

PNG = re.compile(r"data:image/png;base64,([A-Za-z0-9+/=]+)")


def grpo_out(root: Path) -> tuple[Path, list[RolloutStats]]:
    """A GRPO --out folder holding reward_curve.jsonl: three scored batches, one fully masked."""
    env = ToyShop()
    null = wg.eval(env, "scripted/null", split="dev", out=root / "null", progress=False)
    oracle = wg.eval(env, "scripted/oracle", split="dev", out=root / "oracle", progress=False)
    bad, good = list(null.episodes()), list(oracle.episodes())
    stats = [
        rollout_stats(bad, 0, 2),
        rollout_stats(bad[:2] + good[:2], 1, 2),
        RolloutStats(step=2, episodes=4, mean_reward=None, success_rate=0.0, masked=4),
        rollout_stats(good, 3, 2),
    ]
    out = root / "grpo"
    out.mkdir()
    with (out / "reward_curve.jsonl").open("a", encoding="utf-8") as fh:
        for s in stats:
            fh.write(s.model_dump_json() + "\n")  # as train_grpo's on_stats writes each batch
    return out, stats


def test_reads_the_grpo_reward_curve(tmp_path: Path) -> None:
    out, stats = grpo_out(tmp_path)
    curve = read_curve(out, tmp_path / "cert")
    assert curve.trainer == "grpo" and curve.x_label == "optimizer step"
    scored = [s for s in stats if s.mean_reward is not None]
    assert [(p.x, p.reward) for p in curve.points] == [(s.step, s.mean_reward) for s in scored]
    assert [p.reward for p in curve.points] == [0.0, 0.5, 1.0]
    assert curve.dropped == 1 and curve.band is None and curve.chosen is None
    data = (out / "reward_curve.jsonl").read_bytes()
    assert curve.sha256 == hashlib.sha256(data).hexdigest()
    assert curve.path == "../grpo/reward_curve.jsonl"
    assert read_curve(out / "reward_curve.jsonl", tmp_path / "cert") == curve


def test_reads_a_playbook_run_report(tmp_path: Path) -> None:
    out = tmp_path / "pb"
    result = train_playbook(
        ToyRules(),
        ToyRulesAgent(),
        reflector=ToyRulesReflector(),
        out=out,
        config=TrainConfig(max_iterations=2),
    )
    curve = read_curve(out, tmp_path)
    report = result.report
    assert curve.trainer == "playbook" and curve.path == "pb/report.json"
    assert [(p.x, p.reward) for p in curve.points] == [
        (c["iteration"], c["reward"]) for c in report["checkpoints"]
    ]
    assert len(curve.points) >= 2 and curve.chosen == result.best_iteration
    for p, c in zip(curve.points, report["checkpoints"], strict=True):
        assert p.lower == pytest.approx(c["reward"] - 1.96 * c["se"], abs=1e-4)
        assert p.upper == pytest.approx(c["reward"] + 1.96 * c["se"], abs=1e-4)
    assert curve.references == {b["name"]: b["reward"] for b in report["baselines"]}
    assert curve.band and "1.96 SE" in curve.band
    png = base64.b64decode(plots.learning_curve(curve))
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and plots.learning_curve(curve) == plots.learning_curve(
        curve
    )


def test_the_certificate_carries_draws_and_recomputes_the_curve(
    tmp_path: Path,
    job_check: Path,  # noqa: F811
) -> None:
    out, _ = grpo_out(tmp_path)
    cert = certify(tmp_path, WEAK, STRONG, job_check, curve=out)
    path = tmp_path / "cert" / "certificate.json"
    assert cert.frozen.curve == read_curve(out, tmp_path / "cert")
    stored = json.loads(path.read_text())["frozen"]["curve"]
    assert stored["trainer"] == "grpo" and len(stored["points"]) == 3
    assert stored["sha256"] == hashlib.sha256((out / "reward_curve.jsonl").read_bytes()).hexdigest()
    html = (tmp_path / "cert" / "certificate.html").read_text()
    pngs = PNG.findall(html)
    assert len(pngs) == 3 and base64.b64decode(pngs[2]) == base64.b64decode(
        plots.learning_curve(cert.frozen.curve)
    )
    assert "Learning curve of the grpo training" in html and NO_CURVE not in html
    rebuilt, same, changed = recompute(path)
    assert same and changed == [] and rebuilt.frozen.curve == cert.frozen.curve
    # the curve never enters the verdict: without it everything but the frozen curve is equal
    task, suites = sides_of(cert, tmp_path / "cert")
    bare = build(cert.frozen.model_copy(update={"curve": None}), task, suites, tmp_path / "cert")
    assert bare.verdict == cert.verdict == "PASS"
    assert bare.model_dump(exclude={"frozen"}) == cert.model_dump(exclude={"frozen"})
    assert "curve" not in json.loads(bare.to_json())["frozen"]  # older files keep their bytes
    plain = render(bare)
    assert len(PNG.findall(plain)) == 2 and NO_CURVE in plain


GRPO_LINE = '{"step": 0, "episodes": 2, "mean_reward": %s}\n'


@pytest.mark.parametrize(
    ("name", "body", "folder", "message"),
    [
        ("grpo/reward_curve.jsonl", GRPO_LINE % "0.5" + '{"st', False, "jsonl:2 is not a"),
        ("grpo/reward_curve.jsonl", "\n", True, "reward_curve.jsonl is empty"),
        ("grpo/reward_curve.jsonl", GRPO_LINE % "NaN", False, "jsonl:1 is not a"),
        ("grpo/reward_curve.jsonl", GRPO_LINE % "null", True, "has no point with a reward"),
        ("pb/report.json", '{"checkpoints": [{"iteration": 0}]}', True, "not a learning curve"),
        ("pb/log.jsonl", '{"kind": "start"}\n', True, "has not finished (no report.json)"),
        ("pb/log.jsonl", '{"kind": "start"}\n', False, "is the playbook trainer's log, not"),
        ("other/notes.txt", "", True, "holds no learning curve"),
        ("pb/learning_curve.png", "\x89PNG\r\n\x1a\n\xff\xfe", False, "not a text file"),
    ],
)
def test_a_bad_curve_says_what_it_takes(
    tmp_path: Path, name: str, body: str, folder: bool, message: str
) -> None:
    file = tmp_path / name
    file.parent.mkdir(parents=True)
    file.write_bytes(body.encode("latin-1"))
    with pytest.raises(ConfigError) as info:
        read_curve(file.parent if folder else file, tmp_path)
    assert message in str(info.value)
    assert "reward_curve.jsonl" in str(info.value) and "report.json" in str(info.value)


def test_a_missing_or_corrupt_curve_costs_no_look(
    tmp_path: Path,
    job_check: Path,  # noqa: F811
) -> None:
    bad = tmp_path / "reward_curve.jsonl"
    bad.write_text("not json\n")
    with pytest.raises(ConfigError, match=r"reward_curve.jsonl:1 is not a reward-curve point"):
        certify(tmp_path, WEAK, STRONG, job_check, curve=bad)
    result = CliRunner().invoke(
        app,
        [
            "certify",
            JOB,
            "--baseline-model",
            WEAK,
            "--candidate-model",
            STRONG,
            "--curve",
            str(tmp_path / "missing"),
            "--admission-dir",
            str(job_check),
            "--looks-log",
            str(tmp_path / "looks.jsonl"),
            "--no-progress",
        ],
    )
    assert result.exit_code == 2 and "no curve at" in result.output
    assert "Traceback" not in result.output
    assert read_looks(job_check / "looks.jsonl") == []
    again = CliRunner().invoke(app, ["certify", "--recompute", "x.json", "--curve", str(bad)])
    assert again.exit_code == 2 and "drop --curve" in again.output
