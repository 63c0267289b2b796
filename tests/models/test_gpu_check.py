"""bench/gpu_check.py's pieces with known answers (the whole check is a bench, run by hand)."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from tiny_models import tiny_model  # noqa: E402

from fakes.toy_rules_agent import load_bench  # noqa: E402
from workgym.core.messages import Message, ToolCall  # noqa: E402

check = load_bench("gpu_check.py")


class Replies:
    def __init__(self, *messages: Message) -> None:
        self.messages = list(messages)


def test_the_check_scores_episodes_by_the_share_of_letters_the_model_wrote() -> None:
    env = check.letter_lookup()
    task = env.taskset.split("train")[0]
    call = ToolCall(id="c1", name="city_of", arguments="ab")  # 2 letters of 2
    episode = Replies(
        Message(role="user", content="xxxxxxxx"),  # not the model's: not counted
        Message(role="assistant", content="1!", tool_calls=[call]),  # 0 letters of 2
    )
    assert env.score(task, episode).reward == pytest.approx(0.5)
    assert env.score(task, Replies()).reward == 0.0


def test_the_bandwidth_bound_reads_the_weights_once_a_step() -> None:
    model = tiny_model(0)
    size = sum(p.numel() * p.element_size() for p in model.model.parameters())
    assert check.bandwidth_bound(model, 8, 100.0) == pytest.approx(8 * 100e9 / size)
    assert check.bandwidth_bound(model, 8, None) is None


def test_the_run_asks_for_prepare_first(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match=r"run `python bench/gpu_check\.py prepare` first"):
        check.build(tmp_path, tmp_path / "work", 0)
