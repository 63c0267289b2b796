"""The looks log (issue 33, item 4): it lives with the environment, is hash-chained, merges the
logs kept before, treats a re-read as no look, and refuses a log that is not ours or was cut
short with one line and no look spent."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from certify_scripted import JOB, STRONG, WEAK, own_admission
from typer.testing import CliRunner

import workgym as wg
from workgym.apps.cli.main import app
from workgym.certify.looks import (
    FORMAT,
    GENESIS,
    Look,
    default_log,
    line_hash,
    read_chain,
    read_looks,
    record_look,
)
from workgym.certify.schema import Certificate
from workgym.certify.workflow import Request, certify_async
from workgym.core.errors import ConfigError


@pytest.fixture
def job_check(tmp_path: Path) -> Path:
    return own_admission(JOB, tmp_path)


@pytest.fixture
def saved(tmp_path: Path) -> Path:
    """The job environment saved as a folder: its looks log lives inside it."""
    return Path(wg.load(JOB).save(tmp_path / "env-a"))


def certify(env: Path | str, check: Path, out: Path, **kw: object) -> Certificate:
    req = Request(
        env=str(env),
        baseline=wg.Policy(WEAK),
        candidate=wg.Policy(STRONG),
        suites=[],
        out=out,
        admission_dir=check,
        progress=False,
        n_resamples=500,
        **kw,  # type: ignore[arg-type]
    )
    return asyncio.run(certify_async(req))[0]


def look(env_hash: str = "e" * 64, kind: str = "certify", **kw: str) -> Look:
    fields = {
        "at": "2026-01-01T00:00:00+00:00",
        "kind": kind,
        "env_id": "test/env",
        "env_hash": env_hash,
        "split": "test",
        "split_hash": "s" * 64,
        "baseline": "b",
        "candidate": "c",
        "out": "",
        **kw,
    }
    return Look.model_validate(fields)


def cli(*argv: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(argv))
    assert "Traceback" not in result.output
    return result.exit_code, result.output


# -- the chain ---------------------------------------------------------------------------------


def test_each_line_carries_the_hash_of_the_one_before(tmp_path: Path) -> None:
    log = tmp_path / "looks.jsonl"
    first = record_look(log, look())
    second = record_look(log, look())
    lines = log.read_bytes().splitlines()
    entries = read_looks(log)
    assert [e.seq for e in entries] == [1, 2] and [e.attempt for e in entries] == [1, 2]
    assert entries[0].prev == GENESIS and entries[1].prev == line_hash(lines[0])
    assert json.loads(lines[0])["format"] == FORMAT
    assert (first.attempt, first.head, first.seq) == (1, line_hash(lines[0]), 1)
    assert (second.attempt, second.previous_attempts, second.head) == (2, 1, line_hash(lines[1]))
    eval_look = record_look(log, look(kind="eval"))  # logged, not an attempt
    assert (eval_look.attempt, eval_look.seq) == (2, 3)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda lines: lines[1:], "cut short or edited at its start"),
        (lambda lines: [lines[0], lines[2]], "cut short or edited at line 2"),
        (lambda lines: [lines[0], lines[1].replace(b'"b"', b'"x"'), lines[2]], "at line 3"),
        (lambda lines: [*lines, b"hello"], "jsonl:4 is not a workgym looks-log line"),
        (lambda lines: [*lines, b'{"at": 1}'], "is not a workgym looks-log line"),
        (lambda lines: [*lines, b"[1, 2]"], "not a JSON object"),
    ],
)
def test_a_damaged_log_is_one_line_and_gets_no_look(
    tmp_path: Path, damage: object, message: str
) -> None:
    log = tmp_path / "looks.jsonl"
    for _ in range(3):
        record_look(log, look())
    body = b"\n".join(damage(log.read_bytes().splitlines())) + b"\n"  # type: ignore[operator]
    log.write_bytes(body)
    with pytest.raises(ConfigError, match=message) as caught:
        record_look(log, look())
    assert "\n" not in str(caught.value)
    assert log.read_bytes() == body  # nothing appended


def test_an_unfinished_last_line_is_refused(tmp_path: Path) -> None:
    log = tmp_path / "looks.jsonl"
    record_look(log, look())
    log.write_bytes(log.read_bytes() + b'{"format": "workgym-lo')
    with pytest.raises(ConfigError, match="jsonl:2 is an unfinished line"):
        record_look(log, look())


def test_a_symlinked_log_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "elsewhere.jsonl"
    record_look(real, look())
    log = tmp_path / "looks.jsonl"
    log.symlink_to(real)
    with pytest.raises(ConfigError, match="is a symbolic link"):
        record_look(log, look())
    assert len(read_looks(real)) == 1


# -- migration: the logs kept so far are merged in ---------------------------------------------


def first_format(path: Path, looks: list[Look]) -> bytes:
    """A log as workgym wrote it before the chain: Look lines, nothing else."""
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "".join(lk.model_dump_json(exclude={"gate", "runs"}) + "\n" for lk in looks).encode()
    path.write_bytes(body)
    return body


def test_the_home_log_is_merged_in_never_dropped(tmp_path: Path) -> None:
    mine, other = "e" * 64, "f" * 64
    home = default_log()
    body = first_format(
        home, [look(mine), look(other), look(mine, kind="eval"), look(mine, out="second")]
    )
    try:
        log = tmp_path / "looks.jsonl"
        record = record_look(log, look(mine))
        assert record.attempt == 3 and record.previous_attempts == 2  # two earlier attempts
        entries = read_looks(log)
        assert [e.kind for e in entries] == ["certify", "eval", "certify", "certify"]
        assert all(e.env_hash == mine for e in entries) and all(e.source for e in entries[:3])
        assert record_look(log, look(mine)).attempt == 4  # merging again adds nothing
        assert len(read_looks(log)) == 5
        assert home.read_bytes() == body  # the old log is left as it was
    finally:
        home.unlink()


def test_a_first_format_log_where_the_log_now_lives_is_retired_and_merged(
    tmp_path: Path,
) -> None:
    log = tmp_path / "looks.jsonl"
    body = first_format(log, [look(), look()])
    record = record_look(log, look())
    assert record.attempt == 3
    assert (tmp_path / "looks.v1.jsonl").read_bytes() == body
    assert [e.seq for e in read_looks(log)] == [1, 2, 3]
    assert record_look(log, look()).attempt == 4  # the retired file is not merged twice


def test_looks_log_is_merged_into_the_environment_log(tmp_path: Path, job_check: Path) -> None:
    env = wg.load(JOB)
    from workgym.certify.certificate import env_record

    items = [(t.id, t.family) for t in env.taskset.split("test")]
    record = env_record(env, JOB, "test", items)
    older = tmp_path / "old-looks.jsonl"
    first_format(older, [look(record.hash, split_hash=record.split_hash, env_id=env.id)] * 2)
    cert = certify(JOB, job_check, tmp_path / "cert", looks_log=older)
    assert cert.frozen.looks.attempt == 3
    assert cert.frozen.looks.log == str(job_check / "looks.jsonl")


# -- with the environment: copied, it keeps counting; cut short, it is caught -------------------


def test_a_log_copied_with_the_environment_keeps_counting(
    tmp_path: Path, job_check: Path, saved: Path
) -> None:
    first = certify(saved, job_check, tmp_path / "cert-a")
    assert first.frozen.looks.attempt == 1 and (saved / "looks.jsonl").exists()
    assert first.frozen.looks.log == str(saved / "looks.jsonl")
    elsewhere = Path(shutil.copytree(saved, tmp_path / "moved" / "env-b"))
    second = certify(elsewhere, job_check, tmp_path / "cert-b")
    assert second.frozen.looks.attempt == 2 and second.frozen.looks.previous_attempts == 1
    assert len(read_looks(saved / "looks.jsonl")) == 2  # certify, runs
    assert [e.kind for e in read_looks(elsewhere / "looks.jsonl")] == [
        "certify", "runs", "certify", "runs",
    ]  # fmt: skip


def test_a_log_cut_short_is_caught_against_the_certificate(
    tmp_path: Path, job_check: Path, saved: Path
) -> None:
    out = tmp_path / "cert"
    certify(saved, job_check, out)
    log = saved / "looks.jsonl"
    kept = log.read_bytes()
    second = certify(saved, job_check, out, margin=0.1)  # a second attempt, same folder
    assert second.frozen.looks.attempt == 2
    log.write_bytes(kept)  # the second attempt's line is gone
    with pytest.raises(ConfigError, match="was cut short") as caught:
        certify(saved, job_check, out, margin=0.2)
    message = str(caught.value)
    assert "records attempt 2" in message and "\n" not in message
    assert log.read_bytes() == kept  # no look spent
    # a certificate elsewhere, named by a line the log still holds, catches it too
    with pytest.raises(ConfigError, match="was cut short"):
        certify(saved, job_check, tmp_path / "new-folder", margin=0.2)
    assert log.read_bytes() == kept


def test_the_cli_refuses_a_log_not_ours_or_cut_short_with_one_line(
    tmp_path: Path, job_check: Path, saved: Path
) -> None:
    args = [
        "certify", str(saved), "--baseline-model", WEAK, "--candidate-model", STRONG,
        "--suites", "none", "--admission-dir", str(job_check), "--no-progress",
    ]  # fmt: skip
    out = tmp_path / "cert"
    code, output = cli(*args, "--out", str(out))
    assert code in (0, 1) and "certificate:" in output, output  # a verdict, PASS or FAIL
    log = saved / "looks.jsonl"
    kept = log.read_bytes()
    code, output = cli(*args, "--out", str(out), "--margin", "0.1")
    assert code in (0, 1) and "attempt 2" in output, output
    log.write_bytes(kept)
    code, output = cli(*args, "--out", str(out), "--margin", "0.2")
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert code == 2 and len(errors) == 1 and "was cut short" in errors[0], output
    assert log.read_bytes() == kept
    code, output = cli("certify", "--recompute", str(out / "certificate.json"))
    assert code == 0 and "does not hold this certificate's look (attempt 2" in output, output
    log.write_text("this is my shopping list\n")
    code, output = cli(*args, "--out", str(tmp_path / "other"))
    assert code == 2 and "is not a workgym looks-log line" in output, output
    assert log.read_text() == "this is my shopping list\n"
    assert not (tmp_path / "other" / "runs").exists()  # no episode ran


# -- re-reads are not looks --------------------------------------------------------------------


def test_from_runs_of_the_same_runs_is_no_new_look(
    tmp_path: Path, job_check: Path, saved: Path
) -> None:
    """As `make demo` does on a re-run: the same runs, certified again into the same folder."""
    for name, model in (("baseline", WEAK), ("candidate", STRONG)):
        wg.eval(wg.load(saved), model, split="test", out=tmp_path / name, progress=False)

    def from_runs(out: str, **kw: object) -> Certificate:
        req = Request(
            from_runs=[tmp_path / "baseline", tmp_path / "candidate"],
            suites=[],
            out=tmp_path / out,
            admission_dir=job_check,
            progress=False,
            n_resamples=500,
            **kw,  # type: ignore[arg-type]
        )
        return asyncio.run(certify_async(req))[0]

    first = from_runs("cert")
    assert first.frozen.looks.attempt == 1
    again = from_runs("cert")
    elsewhere = from_runs("cert-2")  # the same runs read into another folder
    assert again.frozen.looks == first.frozen.looks == elsewhere.frozen.looks
    assert [e.kind for e in read_looks(saved / "looks.jsonl")] == ["certify"]
    assert from_runs("cert", alpha=0.01).frozen.looks.attempt == 2  # another gate is a look
    code, output = cli("certify", "--recompute", str(tmp_path / "cert" / "certificate.json"))
    assert code == 0 and "identical" in output
    assert len(read_looks(saved / "looks.jsonl")) == 2


def test_a_certificate_records_its_head_and_older_ones_recompute(
    tmp_path: Path, job_check: Path
) -> None:
    out = tmp_path / "cert"
    cert = certify(JOB, job_check, out)
    chain = read_chain(job_check / "looks.jsonl")
    assert cert.frozen.looks.head == chain.hashes[0] and cert.frozen.looks.seq == 1
    path = out / "certificate.json"
    data = json.loads(path.read_text())
    assert data["frozen"]["looks"]["head"] == chain.hashes[0]
    # a certificate written before the chain (no head, no seq) keeps its bytes on recompute
    del data["frozen"]["looks"]["head"], data["frozen"]["looks"]["seq"]
    older = Certificate.model_validate(data)
    assert "head" not in json.loads(older.to_json())["frozen"]["looks"]
    path.write_text(older.to_json())
    before = (job_check / "looks.jsonl").read_bytes()
    code, output = cli("certify", "--recompute", str(path))
    assert code == 0 and "identical" in output, output
    assert (job_check / "looks.jsonl").read_bytes() == before  # a recompute is no look
