"""Skipping zero-advantage episodes leaves GRPO's gradient as it was, and skips nothing when
that would not be exact."""

from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip("torch")

from workgym.train.trl.signal_only import rows_with_signal, signal_only  # noqa: E402


class DapoLike:
    """TRL's "dapo" loss in miniature: advantage-weighted token log-probs summed over the
    micro-batch and divided by the generation batch's token count; it records every forward."""

    loss_type = "dapo"
    beta = 0.0
    _entropy_bonus_enabled = False
    top_entropy_quantile = 1.0
    aux_loss_enabled = False

    def __init__(self) -> None:
        self.forwarded: list[int] = []

    def _compute_loss(self, model: Any, inputs: dict[str, Any]) -> Any:
        ids, mask = inputs["completion_ids"], inputs["completion_mask"]
        self.forwarded.append(int(ids.shape[0]))
        logps = torch.log_softmax(model(torch.nn.functional.one_hot(ids, 5).float()), -1)
        token_logps = logps.gather(-1, ids.unsqueeze(-1)).squeeze(-1)
        per_token = -inputs["advantages"].unsqueeze(1) * token_logps
        return (per_token * mask).sum() / inputs["num_items_in_batch"]


def batch(advantages: list[float]) -> dict[str, Any]:
    rows = len(advantages)
    generator = torch.Generator().manual_seed(rows)
    return {
        "completion_ids": torch.randint(0, 5, (rows, 4), generator=generator),
        "completion_mask": torch.ones(rows, 4),
        "advantages": torch.tensor(advantages),
        "num_items_in_batch": torch.tensor(4.0 * rows),
        "old_per_token_logps": None,
    }


def gradient(trainer: Any, micro_batches: list[dict[str, Any]]) -> torch.Tensor:
    torch.manual_seed(0)
    model = torch.nn.Linear(5, 5)
    for inputs in micro_batches:
        trainer._compute_loss(model, inputs).backward()
    assert model.weight.grad is not None
    return model.weight.grad.clone()


def test_the_gradient_is_unchanged_and_zero_rows_are_never_forwarded() -> None:
    whole = batch([0.0, 1.5, 0.0, -0.5, 0.0, 0.0])
    micro = [{**whole, **{k: whole[k][i : i + 2] for k in ("completion_ids",
             "completion_mask", "advantages")}} for i in (0, 2, 4)]  # fmt: skip
    plain, skipping = DapoLike(), signal_only(DapoLike)()
    expected = gradient(plain, micro)
    assert torch.allclose(gradient(skipping, micro), expected, atol=1e-7)
    assert plain.forwarded == [2, 2, 2]
    assert skipping.forwarded == [1, 1]  # the all-zero last micro-batch ran no forward pass
    assert (skipping.rows_skipped, skipping.rows_trained) == (4, 2)


def test_a_loss_that_depends_on_the_micro_batch_skips_nothing() -> None:
    class WithKL(DapoLike):
        beta = 0.04

    trainer = signal_only(WithKL)()
    gradient(trainer, [batch([0.0, 1.0])])
    assert trainer.forwarded == [2] and trainer.rows_skipped == 0


def test_rows_are_cut_alike_and_scalars_pass() -> None:
    inputs = batch([0.0, 2.0, 0.0])
    cut, skipped = rows_with_signal(inputs, torch)
    assert cut is not None and skipped == 2
    assert torch.equal(cut["completion_ids"], inputs["completion_ids"][1:2])
    assert cut["num_items_in_batch"] is inputs["num_items_in_batch"]
    assert cut["old_per_token_logps"] is None
    assert rows_with_signal(batch([0.0, 0.0]), torch) == (None, 2)
