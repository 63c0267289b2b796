"""Supervised patches on a tiny local model: the mask covers the assistant turns exactly, and the
loss TRL reports is the masked cross-entropy we compute ourselves (a known-loss check, not a
learning result)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("trl")

from trainkit import tiny_dir

from workgym.envs.toy.env import ToyShop
from workgym.models.hf import HFModel, load_local
from workgym.train.sft import SFTSettings, gold_examples, masked_loss, train_sft


@pytest.fixture(scope="module")
def examples() -> list:  # type: ignore[type-arg]
    env = ToyShop()
    chat = HFModel(f"hf/{tiny_dir()}").chat
    return asyncio.run(gold_examples(env, list(env.taskset.split("train"))[:3], chat))


def test_the_mask_is_the_assistant_turns_and_nothing_else(examples: list) -> None:  # type: ignore[type-arg]
    chat = HFModel(f"hf/{tiny_dir()}").chat
    example = examples[0]
    trained = chat.decode(
        [t for t, m in zip(example.input_ids, example.assistant_masks, strict=True) if m]
    )
    rest = chat.decode(
        [t for t, m in zip(example.input_ids, example.assistant_masks, strict=True) if not m]
    )
    assert '"name": "submit_answer"' in trained and "<tool_call>" in trained
    assert (
        "user" not in trained
        and "submit_answer" not in rest.split("<tools>")[-1].split("</tools>")[-1]
    )
    assert len(example.input_ids) == len(example.assistant_masks)


def test_the_first_logged_loss_is_the_masked_cross_entropy(
    examples: list,  # type: ignore[type-arg]
    tmp_path: Path,
) -> None:
    network, _ = load_local(str(tiny_dir()))
    expected = masked_loss(network, examples[0])
    settings = SFTSettings(steps=2, batch_size=1, learning_rate=1e-3, gradient_checkpointing=False)
    result = train_sft(f"hf/{tiny_dir()}", examples[:1], tmp_path / "sft", settings)
    assert result.losses[0] == pytest.approx(expected, rel=1e-3)
    trained, _ = load_local(str(result.checkpoint))
    assert masked_loss(trained, examples[0]) < expected  # two steps on one example fit it
    with pytest.raises(Exception, match="already holds"):
        train_sft(f"hf/{tiny_dir()}", examples[:1], tmp_path / "sft", settings)


def test_a_checkpoint_saved_along_the_way_is_the_shorter_runs_checkpoint(
    examples: list,  # type: ignore[type-arg]
    tmp_path: Path,
) -> None:
    """A budget sweep reads step k off one long run; that is sound only if the model after step k
    is exactly what a k-step run with the same seed ends with."""
    import torch

    kwargs = {"batch_size": 1, "learning_rate": 1e-3, "gradient_checkpointing": False}
    long = train_sft(
        f"hf/{tiny_dir()}", examples, tmp_path / "long", SFTSettings(steps=3, save_at=[1], **kwargs)
    )
    short = train_sft(
        f"hf/{tiny_dir()}", examples, tmp_path / "short", SFTSettings(steps=1, **kwargs)
    )
    assert [p.name for p in long.along] == ["step-0001"]
    along, _ = load_local(str(long.along[0]))
    one, _ = load_local(str(short.checkpoint))
    end, _ = load_local(str(long.checkpoint))
    for a, b in zip(along.parameters(), one.parameters(), strict=True):
        assert torch.equal(a, b)
    pairs = zip(along.parameters(), end.parameters(), strict=True)
    assert any(not torch.equal(a, c) for a, c in pairs)  # and the run went on after step 1
    with pytest.raises(Exception, match="save_at"):
        train_sft(f"hf/{tiny_dir()}", examples, tmp_path / "bad", SFTSettings(steps=2, save_at=[2]))
