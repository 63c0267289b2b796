"""Issue 19, the first hour of a new user: each item driven through the `workgym` command in a
subprocess, as a newcomer types it, checking the message and that no traceback appears.

Item 3 (a user's own environment: `--import`, entry points) is tested with the registry that
owns it; here a user's module is reached with PYTHONPATH, as the docs say today.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHOP = ROOT / "examples" / "shop"
TRACEBACK = "Traceback (most recent call last)"


def run(
    *argv: str, cwd: Path, env: dict[str, str] | None = None, timeout: int = 300
) -> subprocess.CompletedProcess[str]:
    """`workgym ARGV...` (or `python FILE` when argv[0] ends in .py), with no traceback."""
    head = [sys.executable] if argv[0].endswith(".py") else [sys.executable, "-m", "workgym"]
    result = subprocess.run(
        [*head, *argv],
        cwd=cwd,
        env=env or environ(cwd),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert TRACEBACK not in result.stdout + result.stderr, result.stdout + result.stderr
    return result


def environ(cwd: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "COLUMNS": "100", "WORKGYM_HOME": str(cwd / "home"), **extra}
    env.pop("OPENAI_BASE_URL", None)
    return env


def looks(cwd: Path) -> list[dict[str, str]]:
    """Every look recorded under `cwd`: beside admission.json (runs/check) for a registered
    environment, inside the folder of a saved one (certify/looks.py), or in the old home log."""
    found = []
    for log in sorted(cwd.rglob("looks.jsonl")):
        found += [json.loads(line) for line in log.read_text().splitlines()]
    return found


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    """The one `error:` line, last on stderr (warnings about other plugins may come first)."""
    assert result.returncode == 2, result.stdout + result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == 1 and lines[-1] == errors[0], result.stderr
    return errors[0]


# 1. `make demo` ends by saying how to run workgym (activate line or full path) --------------


def test_demo_names_workgym_by_its_path_when_it_is_not_on_path(tmp_path: Path) -> None:
    code = "from workgym.apps.demo import workgym_command; print(workgym_command())"
    bare = dict(environ(tmp_path), PATH="/usr/bin:/bin")
    shown = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=bare, capture_output=True, text=True
    ).stdout.strip()
    assert shown != "workgym" and Path(shown).name == "workgym", shown
    pasted = subprocess.run([shown, "--help"], env=bare, capture_output=True, text=True)
    assert pasted.returncode == 0 and "Usage: workgym" in pasted.stdout
    on_path = dict(environ(tmp_path), PATH=f"{Path(sys.executable).parent}:/usr/bin:/bin")
    assert (
        subprocess.run(
            [sys.executable, "-c", code], cwd=tmp_path, env=on_path, capture_output=True, text=True
        ).stdout.strip()
        == "workgym"
    )


# 2. the README's short tour runs as written, from any directory -----------------------------


def test_the_shop_example_runs_from_another_directory(tmp_path: Path) -> None:
    result = run(str(SHOP / "shop.py"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "mean reward" in result.stdout and "1.000" in result.stdout  # 10: a table, no repr
    assert "run='" not in result.stdout
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]); import shop\n"
        "names = {t.name for t in shop.Shop.tools}\n"
        "assert 'list_items' in names, names\n"
        "assert 'list_items(category)' in open(shop.__file__).read()\n"
        "print(len(shop.Shop().taskset))"
    )
    listed = subprocess.run(
        [sys.executable, "-c", script, str(SHOP)], cwd=tmp_path, capture_output=True, text=True
    )
    assert listed.returncode == 0 and listed.stdout.strip() == "22", listed.stderr


# 4. `--db duckdb:///sales.duckdb` is relative to the working directory ---------------------


def _small_duckdb(path: Path) -> None:
    import duckdb

    con = duckdb.connect(str(path))
    con.execute(
        "CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, city VARCHAR, tier VARCHAR);"
        "INSERT INTO customers SELECT i, ['Oslo','Lima','Pune','Kyiv'][1 + i % 4], "
        "['gold','basic'][1 + i % 2] FROM range(1, 41) t(i);"
        "CREATE TABLE orders (order_id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES "
        "customers(customer_id), amount DECIMAL(10,2), status VARCHAR);"
        "INSERT INTO orders SELECT i, 1 + i % 40, (i * 7.25)::DECIMAL(10,2), "
        "CASE WHEN i % 3 = 0 THEN 'open' ELSE 'shipped' END FROM range(1, 201) t(i);"
    )
    con.close()


def test_duckdb_url_with_three_slashes_is_relative(tmp_path: Path) -> None:
    missing = run(
        "generate", "warehouse", "--db", "duckdb:///nope.duckdb", "--out", "e", "--no-progress",
        cwd=tmp_path,
    )  # fmt: skip
    message = one_line_error(missing)
    assert f"no such file: {tmp_path.resolve()}/nope.duckdb" in message
    _small_duckdb(tmp_path / "sales.duckdb")
    made = run(
        "generate", "warehouse", "--db", "duckdb:///sales.duckdb", "--out", "envs/sales",
        "--tasks", "18", "--no-suites", "--no-investigations", cwd=tmp_path, timeout=600,
    )  # fmt: skip
    assert made.returncode == 0, made.stdout + made.stderr
    assert "next: workgym check" in made.stdout
    # 10: a family's bar never ends past its total (42/40) or short of it (38/40)
    for done, total in re.findall(r" (\d+)/(\d+) ", made.stderr):
        assert done == total, made.stderr


# 5. a small environment warns at definition time -------------------------------------------

FIVE = '''
import workgym as wg

@wg.tool(final=True)
def submit_answer(answer: int) -> str:
    """Submit the answer."""
    return "ok"

class Five(wg.Environment):
    id = "acme/five"
    tools = [submit_answer]

    def tasks(self) -> wg.TaskSet:
        return wg.TaskSet.from_jsonl("tasks.jsonl")

    def verify(self, task: wg.Task, episode: wg.Episode) -> wg.Verdict:
        return wg.Verdict.correct() if episode.answer == task.answer else wg.Verdict.wrong()
'''


def _five(tmp_path: Path, families: int) -> None:
    (tmp_path / "five.py").write_text(FIVE)
    (tmp_path / "save.py").write_text("import five\n\nfive.Five().save('envs/five')\n")
    with (tmp_path / "tasks.jsonl").open("w") as fh:
        for i in range(families * 5):
            fh.write(json.dumps({"family": f"f{i % families}", "prompt": f"q{i}", "answer": i}))
            fh.write("\n")


def test_a_split_left_empty_warns_and_check_says_why(tmp_path: Path) -> None:
    _five(tmp_path, families=5)
    saved = run("save.py", cwd=tmp_path)
    assert saved.returncode == 0 and "EmptySplitWarning" in saved.stderr
    assert "5 families split train" in saved.stderr and "about ten families" in saved.stderr
    env = environ(tmp_path, PYTHONPATH=f"{tmp_path}:{os.environ.get('PYTHONPATH', '')}")
    checked = run("check", "envs/five", "--import", "five", "--no-progress", cwd=tmp_path, env=env)
    assert checked.returncode == 1
    assert "warning: acme/five: 5 families split" in checked.stderr
    assert "held-out tasks exist for every split" in checked.stdout


# 6. re-running: check re-uses its admission, edits need no rm -rf, Ctrl-C and resume speak ---


def test_check_is_reused_and_an_edited_environment_checks_without_rm(tmp_path: Path) -> None:
    _five(tmp_path, families=12)
    env = environ(tmp_path, PYTHONPATH=f"{tmp_path}:{os.environ.get('PYTHONPATH', '')}")
    assert run("save.py", cwd=tmp_path, env=env).returncode == 0
    # pass or fail (a constant baseline may beat its threshold here), a check is re-usable
    first = run("check", "envs/five", "--import", "five", "--no-progress", cwd=tmp_path, env=env)
    assert first.returncode in (0, 1) and "re-used" not in first.stdout, first.stderr
    again = run("check", "envs/five", "--import", "five", "--no-progress", cwd=tmp_path, env=env)
    assert again.returncode == first.returncode and "re-used the check" in again.stdout
    with (tmp_path / "tasks.jsonl").open("a") as fh:  # edit, re-save, check: no rm -rf
        fh.write(json.dumps({"family": "f0", "prompt": "one more", "answer": 7}) + "\n")
    assert run("save.py", cwd=tmp_path, env=env).returncode == 0
    edited = run("check", "envs/five", "--import", "five", "--no-progress", cwd=tmp_path, env=env)
    assert edited.returncode in (0, 1), edited.stdout + edited.stderr
    assert "re-used" not in edited.stdout and "holds a different run" not in edited.stderr
    fresh = run(
        "check", "envs/five", "--import", "five", "--no-progress", "--fresh", cwd=tmp_path, env=env
    )
    assert fresh.returncode in (0, 1) and "re-used" not in fresh.stdout


def _default_sigint() -> None:
    """The child gets Ctrl-C as a terminal would deliver it. A test run started in the
    background (`make test &`, or under GNU time) ignores SIGINT, and an ignored SIGINT is
    inherited, so without this the eval ran to its end and the test failed on the launcher."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_says_what_is_kept_and_the_rerun_says_it_resumes(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "workgym", "eval", "workgym/toy-shop", "--model",
            "scripted/oracle", "--split", "all", "--epochs", "100", "--out", "r"]  # fmt: skip
    proc = subprocess.Popen(
        argv, cwd=tmp_path, env=environ(tmp_path), stderr=subprocess.PIPE, text=True,
        preexec_fn=_default_sigint,
    )  # fmt: skip
    episodes = tmp_path / "r" / "episodes.jsonl"
    deadline = time.monotonic() + 120
    while not (episodes.exists() and episodes.stat().st_size) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130 and TRACEBACK not in stderr, stderr
    kept = re.search(r"interrupted: (\d+)/6000 episodes are kept in r", stderr)
    assert kept is not None and "re-run the same command to resume" in stderr, stderr
    assert int(kept.group(1)) < 6000  # stopped at once, not after the whole run
    again = run(*argv[3:], cwd=tmp_path, timeout=600)
    assert again.returncode == 0
    assert re.search(r"resuming r: \d+/6000 episodes done", again.stderr), again.stderr


# 7. typos and busy ports -------------------------------------------------------------------


def test_a_mistyped_split_is_one_line_with_a_suggestion(tmp_path: Path) -> None:
    for command in (
        ["eval", "workgym/toy-shop", "--model", "scripted/oracle"],
        ["baselines", "workgym/toy-shop"],
    ):
        message = one_line_error(run(*command, "--split", "tst", cwd=tmp_path))
        assert "unknown split 'tst': did you mean 'test'?" in message
    assert looks(tmp_path) == []


def test_a_mistyped_suite_is_one_line_and_costs_no_look(tmp_path: Path) -> None:
    assert run("check", "workgym/toy-shop", "--no-progress", cwd=tmp_path).returncode == 0
    result = run(
        "certify", "workgym/toy-shop", "--baseline-model", "scripted/null", "--candidate-model",
        "scripted/oracle", "--suites", "suites/reasonin", "--no-progress", cwd=tmp_path,
    )  # fmt: skip
    message = one_line_error(result)
    assert "unknown suite 'suites/reasonin': did you mean 'suites/reasoning'?" in message
    assert looks(tmp_path) == []


@pytest.mark.parametrize("command", [["view", "."], ["serve", "workgym/toy-shop"]])
def test_a_busy_port_fails_before_a_url_is_printed(command: list[str], tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        result = run(*command, "--port", port, cwd=tmp_path, timeout=60)
    message = one_line_error(result)
    assert f"port {port} on 127.0.0.1 is already in use" in message and "--port 0" in message
    assert "http://" not in result.stdout


# 8. looks at the test split ----------------------------------------------------------------


def test_eval_and_baselines_on_test_record_a_look_after_preflight(tmp_path: Path) -> None:
    dead = run(
        "eval", "workgym/toy-shop", "--model", "openai/m", "--base-url", "http://127.0.0.1:9/v1",
        "--split", "test", cwd=tmp_path,
    )  # fmt: skip
    assert "cannot reach http://127.0.0.1:9/v1" in one_line_error(dead)
    assert looks(tmp_path) == []  # an endpoint that does not answer costs no look
    ran = run("eval", "workgym/toy-shop", "--model", "scripted/oracle", "--split", "test",
              "--no-progress", cwd=tmp_path)  # fmt: skip
    assert ran.returncode == 0 and "recorded as a look" in ran.stderr
    baselines = run(
        "baselines", "workgym/toy-shop", "--split", "test", "--no-progress", cwd=tmp_path
    )
    assert baselines.returncode == 0 and "recorded as a look" in baselines.stderr
    assert (
        run(
            "eval", "workgym/toy-shop", "--model", "scripted/oracle", "--no-progress", cwd=tmp_path
        ).returncode
        == 0
    )  # fmt: skip  (dev: no look)
    assert [(lk["kind"], lk["split"]) for lk in looks(tmp_path)] == [
        ("eval", "test"),
        ("baselines", "test"),
    ]


def test_certify_with_a_missing_extra_says_so_in_full_and_costs_no_look(tmp_path: Path) -> None:
    blocker = tmp_path / "blocked" / "reasoning_gym"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('reasoning_gym is not installed')\n")
    env = environ(tmp_path, PYTHONPATH=f"{blocker.parent}:{os.environ.get('PYTHONPATH', '')}")
    assert run("check", "workgym/toy-shop", "--no-progress", cwd=tmp_path, env=env).returncode == 0
    result = run(
        "certify", "workgym/toy-shop", "--baseline-model", "scripted/null", "--candidate-model",
        "scripted/oracle", "--suites", "suites/reasoning", "--no-progress", cwd=tmp_path, env=env,
    )  # fmt: skip
    assert "pip install 'workgym[suites]'" in one_line_error(result)  # markup ate [suites]
    assert looks(tmp_path) == []


def test_the_admission_hint_names_what_check_can_load(tmp_path: Path) -> None:
    saved = "from workgym.envs.toy.env import ToyShop; ToyShop().save('envs/toy')"
    subprocess.run([sys.executable, "-c", saved], cwd=tmp_path, check=True)
    result = run(
        "certify", "envs/toy", "--baseline-model", "scripted/null", "--candidate-model",
        "scripted/oracle", "--suites", "none", cwd=tmp_path,
    )  # fmt: skip
    assert "run `workgym check envs/toy`" in one_line_error(result)
    assert looks(tmp_path) == []


# 9. two meanings of reward, bulk review, 80 columns ----------------------------------------


def test_summary_and_compare_say_how_they_count_and_review_works_in_bulk(tmp_path: Path) -> None:
    assert run(str(SHOP / "shop.py"), cwd=tmp_path).returncode == 0
    oracle = "runs/shop-oracle"
    summary = run("summary", oracle, cwd=tmp_path)
    assert "flagged successes" in summary.stdout and "count them 0" in summary.stdout
    for model in ("null", "oracle"):  # two runs of one environment: compare needs a pair
        made = run("eval", "workgym/toy-shop", "--model", f"scripted/{model}", "--out",
                   f"runs/{model}", "--no-progress", cwd=tmp_path)  # fmt: skip
        assert made.returncode == 0, made.stderr
    compared = run("compare", "runs/oracle", "--baseline", "runs/null", cwd=tmp_path)
    assert compared.returncode == 0, compared.stderr
    assert "flagged successes not yet accepted count 0" in compared.stdout
    listed = run("review", oracle, cwd=tmp_path, env=environ(tmp_path, COLUMNS="80"))
    assert "…" not in listed.stdout  # folded at 80 columns, never cut
    assert "--flag process_anomaly:no-tool-use --accept --note WHY" in listed.stdout
    no_note = run("review", oracle, "--flag", "process_anomaly:no-tool-use", "--accept",
                  cwd=tmp_path)  # fmt: skip
    assert "needs --note WHY" in one_line_error(no_note)
    bulk = run("review", oracle, "--flag", "process_anomaly:no-tool-use", "--accept",
               "--note", "the oracle test double calls no tools", cwd=tmp_path)  # fmt: skip
    assert (
        bulk.returncode == 0 and "accepted: 22 flags (process_anomaly:no-tool-use)" in bulk.stdout
    )


def test_help_is_wrapped_not_cut_at_80_columns(tmp_path: Path) -> None:
    result = run(
        "generate", "warehouse", "--help", cwd=tmp_path, env=environ(tmp_path, COLUMNS="80")
    )
    assert result.returncode == 0 and "duckdb:///file.duckdb" in result.stdout
    assert "…" not in result.stdout


# 10. progress bars say what they count -----------------------------------------------------


def test_the_check_labels_each_progress_bar(tmp_path: Path) -> None:
    result = run("check", "workgym/toy-shop", cwd=tmp_path)
    assert result.returncode == 0
    for label in ("oracle (every task)", "baseline null", "baseline constant", "attack"):
        assert label in result.stderr, result.stderr
