"""Where `hf/` weights go: the best device in its fast precision, `--device`/`--dtype` override,
the choice recorded in run.json and the policy hash, and certify refusing mixed numerics."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from tiny_models import tiny_model  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

import workgym as wg  # noqa: E402
from workgym.certify.workflow import Request, certify_async  # noqa: E402
from workgym.core.errors import ConfigError  # noqa: E402
from workgym.models import placement  # noqa: E402
from workgym.models.hf import HFModel, load_local  # noqa: E402
from workgym.models.placement import Placement, choose, placement_of  # noqa: E402


@pytest.fixture(autouse=True)
def no_request() -> Iterator[None]:
    """Every test starts and ends with no process-wide --device/--dtype."""
    placement.request(None, None)
    yield
    placement.request(None, None)


def machine(
    monkeypatch: pytest.MonkeyPatch, *, cuda: bool = False, bf16: bool = False, mps: bool = False
) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: bf16)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: mps)


def test_defaults_follow_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    machine(monkeypatch, cuda=True, bf16=True, mps=True)
    assert choose() == Placement("cuda", "bfloat16")  # cuda before mps
    machine(monkeypatch, cuda=True, bf16=False)
    assert choose() == Placement("cuda", "float16")
    machine(monkeypatch, mps=True)
    assert choose() == Placement("mps", "float16")
    machine(monkeypatch)
    assert choose() == Placement("cpu", "float32")


def test_explicit_choices_override_and_training_keeps_float32(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    machine(monkeypatch, cuda=True, bf16=True)
    assert choose("cpu") == Placement("cpu", "float32")
    assert choose(dtype="bf16") == Placement("cuda", "bfloat16")
    assert choose("cuda:1", "float32") == Placement("cuda:1", "float32")
    assert choose(training=True) == Placement("cuda", "float32")
    placement.request("cpu", "bfloat16")  # the CLI's --device cpu --dtype bfloat16
    assert choose() == Placement("cpu", "bfloat16")
    assert choose(training=True) == Placement("cpu", "bfloat16")  # an asked dtype wins
    assert choose("cuda", "auto") == Placement("cuda", "bfloat16")  # arguments beat the request


def test_an_unusable_or_misspelt_choice_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    machine(monkeypatch)
    with pytest.raises(ConfigError, match=r"torch sees no CUDA device.*--device cpu"):
        choose("cuda")
    with pytest.raises(ConfigError, match="torch sees no MPS device"):
        choose("mps")
    with pytest.raises(ConfigError, match="--device 'gpu': use auto, cuda"):
        placement.request("gpu", None)
    with pytest.raises(ConfigError, match="--dtype 'int8': use auto, bfloat16"):
        placement.request(None, "int8")


def test_weights_land_where_asked_meta_and_cpu(tmp_path: Path) -> None:
    path = tiny_model(0).name.removeprefix("hf/")
    model, _ = load_local(path, Placement("meta", "float16"))
    assert {p.device.type for p in model.parameters()} == {"meta"}
    assert {p.dtype for p in model.parameters()} == {torch.float16}
    assert placement_of(model) == Placement("meta", "float16")
    model, _ = load_local(path, Placement("cpu", "bfloat16"))
    assert {p.dtype for p in model.parameters()} == {torch.bfloat16}
    assert placement_of(model) == Placement("cpu", "bfloat16")


def test_the_choice_is_printed_once_and_enters_the_hash_unless_cpu_float32(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    machine(monkeypatch)
    path = tiny_model(0).name
    monkeypatch.setattr(placement, "_announced", set())
    fp32 = HFModel(path)
    HFModel(path)
    bf16 = HFModel(path, dtype="bfloat16")
    lines = capsys.readouterr().err.splitlines()
    assert lines.count(f"workgym: {path} on cpu, float32") == 1
    assert lines.count(f"workgym: {path} on cpu, bfloat16") == 1
    assert fp32.placement == Placement("cpu", "float32")
    plain, half = wg.Policy(fp32), wg.Policy(bf16)
    assert "placement" not in plain.describe()  # hashes of runs made before stay valid
    assert half.describe()["placement"] == {"device": "cpu", "dtype": "bfloat16"}
    assert plain.hash != half.hash


def test_eval_records_device_and_dtype_in_run_json(tmp_path: Path) -> None:
    from workgym.apps.cli.main import app

    result = CliRunner().invoke(
        app,
        [
            "eval", "workgym/toy-shop", "--model", tiny_model(0).name, "--limit", "1",
            "--max-tokens", "4", "--out", str(tmp_path / "run"), "--no-progress",
            "--device", "cpu", "--dtype", "float32",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    spec = json.loads((tmp_path / "run" / "run.json").read_text())
    assert spec["placement"] == {"device": "cpu", "dtype": "float32"}
    episodes = (tmp_path / "run" / "episodes.jsonl").read_text().splitlines()
    assert [json.loads(line)["outcome"] for line in episodes] != ["error"]
    bad = CliRunner().invoke(
        app, ["eval", "workgym/toy-shop", "--model", tiny_model(0).name, "--dtype", "int4"]
    )
    assert bad.exit_code != 0 and "--dtype 'int4'" in str(bad.exception or bad.output)


def test_certify_refuses_arms_on_other_numerics(tmp_path: Path) -> None:
    path = tiny_model(0).name
    req = Request(
        env="workgym/toy-shop",
        baseline=wg.Policy(HFModel(path, device="cpu", dtype="float32")),
        candidate=wg.Policy(HFModel(path, device="cpu", dtype="bfloat16")),
        suites=[],
        out=tmp_path / "cert",
        looks_log=tmp_path / "looks.jsonl",
        progress=False,
    )
    with pytest.raises(ConfigError, match="same --device and --dtype"):
        asyncio.run(certify_async(req))
    assert not (tmp_path / "looks.jsonl").exists()  # refused before any look at the test split
