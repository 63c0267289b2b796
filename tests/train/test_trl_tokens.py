"""Laying episode turns end to end (pure Python: runs without torch)."""

from __future__ import annotations

import pytest

from workgym.core.episode import TurnTokens
from workgym.train.trl.tokens import TokenMismatchError, episode_tokens


def turn(prompt: list[int], completion: list[int]) -> TurnTokens:
    return TurnTokens(
        prompt_token_ids=prompt,
        completion_token_ids=completion,
        logprobs=[-0.5 - i for i in range(len(completion))],
    )


def test_turns_concatenate_with_model_tokens_masked_in() -> None:
    first = turn([1, 2, 3], [10, 11, 99])
    second = turn([1, 2, 3, 10, 11, 99, 50, 51], [12, 99])
    tokens = episode_tokens([first, second])
    assert tokens.prompt_ids == [1, 2, 3]
    assert tokens.completion_ids == [10, 11, 99, 50, 51, 12, 99]
    assert tokens.env_mask == [1, 1, 1, 0, 0, 1, 1]
    assert tokens.logprobs == [-0.5, -1.5, -2.5, 0.0, 0.0, -0.5, -1.5]


def test_a_reworded_history_is_refused_not_trained_on() -> None:
    first = turn([1, 2, 3], [10, 11, 99])
    rerendered = turn([1, 2, 3, 10, 12, 99, 50], [12, 99])  # the provider re-tokenised turn 1
    with pytest.raises(TokenMismatchError, match="first difference at token 4"):
        episode_tokens([first, rerendered])


def test_missing_ids_or_logprobs_are_errors() -> None:
    with pytest.raises(TokenMismatchError, match="no token ids"):
        episode_tokens(None)
    bare = TurnTokens(prompt_token_ids=[1], completion_token_ids=[2], logprobs=None)
    with pytest.raises(TokenMismatchError, match="logprob"):
        episode_tokens([bare])


def test_truncation_keeps_the_lists_aligned() -> None:
    tokens = episode_tokens([turn([1], [5, 6]), turn([1, 5, 6, 7], [8, 9])]).truncated(4)
    assert tokens.completion_ids == [5, 6, 7, 8]
    assert tokens.env_mask == [1, 1, 0, 1]
    assert len(tokens.logprobs) == 4
