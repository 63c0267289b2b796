"""A user's own environment, model provider, test double and command, found the way the README
says: an installed package's entry points, or `--import MODULE` for a `@wg.register` class.

The installed package is a real one: a `*.dist-info` folder with `entry_points.txt` next to its
module, on the path the way pip leaves it; no network, nothing faked in importlib.metadata.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import workgym as wg
from workgym.core import registry
from workgym.core.loading import ENVIRONMENTS, is_trusted, registered_class

SHOP = '''
import workgym as wg

TASKS = [
    wg.Task(id=f"t{i}", family=f"codes/{i}", prompt=f"Which code does item {i} have?",
            answer=(i * 7919) % 1009 + 1000)
    for i in range(24)
]


@wg.tool(final=True)
def submit_answer(answer: int) -> str:
    """Submit the final answer (an integer). This ends the task."""
    return "answer recorded"


{decorator}class Shop(wg.Environment):
    id = "acme/shop"
    version = "1"
    tools = [submit_answer]
    limits = wg.Limits(max_turns=4)

    def tasks(self) -> wg.TaskSet:
        return wg.TaskSet(TASKS)

    def verify(self, task: wg.Task, episode: wg.Episode) -> wg.Verdict:
        return wg.Verdict.correct() if episode.answer == task.answer else wg.Verdict.wrong()
'''

PLUGIN_EXTRAS = '''

def echo(name, *, base_url=None, api_key=None):
    """A provider: `echo/<text>` replies <text> (a test double, and named as one)."""
    return wg.ScriptedModel(f"scripted/echo-{name}", turns=[wg.Message(role="assistant",
                                                                       content=name)])


def always_seven():
    return wg.ScriptedModel("scripted/acme-seven", turns=[wg.Message(role="assistant",
                                                                     content="7")])


class Broken(Shop):
    id = "acme/broken"

    def tasks(self) -> wg.TaskSet:
        raise RuntimeError("the task file is missing")


class SavedOnly(Shop):
    """Only ever a directory a generator saved: no id of its own."""

    id = ""


def stamp(env, task, episode):
    """A finisher: applied to every finished episode."""


def register(app):
    @app.command("acme-hello")
    def hello() -> None:
        """Say hello from the acme plugin."""
        print("hello from acme")
'''

ENTRY_POINTS = """\
[workgym.environments]
acme/shop = acme_shop:Shop
acme/broken = acme_shop:Broken

[workgym.models]
echo = acme_shop:echo

[workgym.scripted]
acme-seven = acme_shop:always_seven

[workgym.commands]
acme = acme_shop:register

[workgym.saved_environments]
acme/saved = acme_shop:SavedOnly

[workgym.finishers]
acme-stamp = acme_shop:stamp
"""


def _workgym(*args: str, cwd: Path, path: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COLUMNS="200")  # table rows on one line each
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(path), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "workgym", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
    )


@pytest.fixture
def installed(tmp_path: Path) -> Path:
    """A folder holding the `acme-shop` distribution as pip installs it."""
    site = tmp_path / "site"
    (site / "acme_shop").mkdir(parents=True)
    source = SHOP.replace("{decorator}", "") + PLUGIN_EXTRAS
    (site / "acme_shop" / "__init__.py").write_text(textwrap.dedent(source))
    info = site / "acme_shop-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-shop\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return site


@pytest.fixture
def on_path(installed: Path) -> Iterator[Path]:
    """The installed distribution on this process's path, the registry re-scanned."""
    sys.path.insert(0, str(installed))
    registry.rescan()
    yield installed
    sys.path.remove(str(installed))
    for name in [m for m in sys.modules if m.partition(".")[0] == "acme_shop"]:
        del sys.modules[name]
    registry.rescan()


def test_an_installed_entry_point_builds_the_environment_not_its_loader(on_path: Path) -> None:
    env = wg.load("acme/shop")
    assert type(env).__name__ == "Shop" and len(env.taskset) == 24
    assert "acme/shop" in wg.registered()
    assert registered_class("acme/shop") is type(env)
    assert ENVIRONMENTS.get("acme/shop").distribution == "acme-shop"  # type: ignore[union-attr]


def test_an_installed_provider_and_test_double_resolve(on_path: Path) -> None:
    assert wg.get_model("echo/hi").name == "scripted/echo-hi"
    assert wg.get_model("scripted/acme-seven").name == "scripted/acme-seven"


def test_workgym_envs_lists_an_entry_point_environment(installed: Path, tmp_path: Path) -> None:
    result = _workgym("envs", cwd=tmp_path, path=installed)
    assert result.returncode == 0, result.stderr
    row = next(line for line in result.stdout.splitlines() if "acme/shop" in line)
    assert "24" in row and "unavailable" not in row
    broken = next(line for line in result.stdout.splitlines() if "acme/broken" in line)
    assert "unavailable: RuntimeError" in broken  # one row, not a traceback over the list
    assert "Traceback" not in result.stderr


def test_an_installed_command_group_joins_the_cli(installed: Path, tmp_path: Path) -> None:
    result = _workgym("acme-hello", cwd=tmp_path, path=installed)
    assert result.returncode == 0, result.stderr
    assert "hello from acme" in result.stdout


def test_check_finds_a_registered_class_with_import(tmp_path: Path) -> None:
    (tmp_path / "shop.py").write_text(SHOP.replace("{decorator}", "@wg.register\n"))
    missing = _workgym("check", "acme/shop", cwd=tmp_path)
    assert missing.returncode == 2 and "unknown environment 'acme/shop'" in missing.stderr
    assert "--import" in missing.stderr and "Traceback" not in missing.stderr
    out = tmp_path / "check"
    found = _workgym(
        "check", "acme/shop", "--import", "shop", "--out", str(out), "--no-progress", cwd=tmp_path
    )
    assert found.returncode == 0, found.stdout + found.stderr
    assert (out / "check.json").exists() and "workgym check acme/shop" in found.stdout


def test_a_bad_import_is_a_one_line_error(tmp_path: Path) -> None:
    result = _workgym("eval", "acme/shop", "--import", "shop.py", "--model", "x/y", cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "--import shop.py: cannot import it" in result.stderr


def test_a_saved_environment_whose_class_is_missing_says_how_to_fix_it(tmp_path: Path) -> None:
    code = tmp_path / "code"
    code.mkdir()
    (code / "shop.py").write_text(SHOP.replace("{decorator}", ""))
    save = "import shop; shop.Shop().save('saved')"
    subprocess.run([sys.executable, "-c", save], cwd=tmp_path, check=True, timeout=120,
                   env={**os.environ, "PYTHONPATH": str(code)})  # fmt: skip
    result = _workgym("eval", "saved", "--model", "scripted/oracle", cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    # never imported on a manifest's word (decision 0037), and the message says how to vouch
    assert "'shop:Shop', which is not an installed, registered environment" in result.stderr
    assert "PYTHONPATH" in result.stderr and "--import" in result.stderr
    ok = _workgym(
        "eval", "saved", "--import", "shop", "--model", "scripted/oracle", "--split", "all",
        "--out", "runs/o", "--no-progress", cwd=code.parent, path=code,
    )  # fmt: skip
    assert ok.returncode == 0, ok.stderr


def test_a_saved_environment_loads_its_saved_tasks_over_an_overridden_tasks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "shop_saved.py").write_text(SHOP.replace("{decorator}", ""))
    monkeypatch.syspath_prepend(str(tmp_path))
    import shop_saved

    shop_saved.Shop().save(tmp_path / "saved")
    # tasks() now builds something else (it read a file relative to the working directory)
    monkeypatch.setattr(shop_saved, "TASKS", shop_saved.TASKS[:3])
    env = wg.load(tmp_path / "saved", trust=True)  # an unregistered class this test wrote
    assert len(env.taskset) == 24 and env.taskset["t23"].answer == (23 * 7919) % 1009 + 1000
    assert len(shop_saved.Shop().taskset) == 3  # a fresh instance still asks tasks()


def test_is_trusted_names_only_registered_classes(on_path: Path) -> None:
    assert is_trusted("acme_shop:Shop")  # an installed entry point, not imported
    assert is_trusted("workgym.envs.toy.env:ToyShop")
    assert not is_trusted("os:system")


def test_a_package_saved_only_class_is_trusted_without_importing_it(on_path: Path) -> None:
    assert is_trusted("acme_shop:SavedOnly") and "acme_shop" not in sys.modules
    assert not is_trusted("acme_shop:Stamp")


def test_a_package_finisher_joins_the_default_ones(on_path: Path) -> None:
    from workgym.run.finish import FINISHERS

    assert FINISHERS.names() == ["acme-stamp", "audit"]
    assert FINISHERS.get("acme-stamp").distribution == "acme-shop"  # type: ignore[union-attr]
    assert FINISHERS.load("acme-stamp").__name__ == "stamp"


def test_test_doubles_do_not_depend_on_what_was_imported(tmp_path: Path) -> None:
    names = ["toy-rules-agent", "investigator", "probe-broken-json", "baseline-constant"]
    code = "from workgym.models import get_model\n" + "".join(
        f"print(get_model('scripted/{n}').name)\n" for n in names
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.splitlines()) == len(names)


def test_a_typo_suggests_the_name_meant() -> None:
    with pytest.raises(wg.ConfigError, match=r"did you mean 'oracle'"):
        wg.get_model("scripted/oracel")
    with pytest.raises(wg.ConfigError, match=r"did you mean 'workgym/toy-shop'"):
        wg.load("workgym/toy-shp")
    with pytest.raises(wg.ConfigError, match=r"did you mean 'openai'"):
        wg.get_model("opneai/gpt")
    from workgym.run.executors import resolve_executor

    with pytest.raises(wg.ConfigError, match=r"did you mean 'ray'"):
        resolve_executor("rya")


def test_a_registry_family_and_process_entries() -> None:
    reg: registry.Registry[int] = registry.Registry("number", "workgym.tests-none")
    reg.add("one", 1)
    reg.add("big-*", lambda: {"big-ten": 10, "big-twenty": 20})  # type: ignore[arg-type]
    assert reg.load("one") == 1 and reg.load("big-twenty") == 20
    assert reg.names(expand=True) == ["big-ten", "big-twenty", "one"]
    assert "big-eleven" not in reg
    with pytest.raises(wg.ConfigError, match=r"did you mean 'big-ten'"):
        reg.load("big-tenn")


def test_every_builtin_entry_point_is_installed_and_imports() -> None:
    """pyproject.toml's entry points are what the installed metadata declares (a stale
    editable install fails here with the fix), and each one names something importable."""
    import tomllib

    from workgym.apps.cli.main import COMMANDS
    from workgym.apps.cli.train import TRAINERS
    from workgym.core.loading import SAVED_ENVIRONMENTS
    from workgym.envs.warehouse.runtime.family_plug import FAMILIES
    from workgym.guards.catalog import PROBES
    from workgym.models import PROVIDERS
    from workgym.run.executors import EXECUTORS
    from workgym.run.finish import FINISHERS
    from workgym.testing.scripted import DOUBLES

    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    declared = tomllib.loads(pyproject.read_text())["project"]["entry-points"]
    # Entry points into other ecosystems (inspect_ai's task registry) belong to the adapters;
    # their tests run that ecosystem's own loader (tests/adapters).
    declared = {group: names for group, names in declared.items() if group.startswith("workgym.")}
    registries: list[registry.Registry[Any]] = [
        ENVIRONMENTS, PROVIDERS, DOUBLES, COMMANDS, TRAINERS, EXECUTORS,
        SAVED_ENVIRONMENTS, FINISHERS, PROBES, FAMILIES,
    ]  # fmt: skip
    assert sorted(declared) == sorted(r.group for r in registries)
    for reg in registries:
        ours = [e for e in reg.declared() if e.distribution == "workgym"]
        installed = {e.name: e.source for e in ours}
        assert installed == declared[reg.group], f"{reg.group}: re-run `pip install -e .`"
        for entry in ours:
            assert entry.load() is not None
