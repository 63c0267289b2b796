"""Lay the turns of one episode end to end as a single training sequence, token for token.

A multi-turn episode is one sequence for the trainer: the first prompt, then the model's first
turn, then whatever the environment inserted (tool results, the next assistant header), then the
model's second turn, and so on. Only the model's own tokens are trained (mask 1); inserted tokens
are context (mask 0, logprob 0). The ids are never re-tokenised from text: each turn's prompt must
start with the previous prompt plus completion exactly, and a provider that breaks this (one that
re-renders the conversation) is refused with an error rather than trained on silently wrong data.
"""

from __future__ import annotations

from pydantic import BaseModel

from workgym.core.episode import TurnTokens


class TokenMismatchError(ValueError):
    """The turns of an episode cannot be laid end to end without re-tokenising."""


class EpisodeTokens(BaseModel):
    """One episode as a trainer sees it; the four lists after the prompt have equal length."""

    prompt_ids: list[int]
    completion_ids: list[int]
    env_mask: list[int]
    logprobs: list[float]

    def truncated(self, max_completion: int) -> EpisodeTokens:
        """The first `max_completion` completion tokens (the trainer's length budget)."""
        n = max_completion
        return EpisodeTokens(
            prompt_ids=self.prompt_ids,
            completion_ids=self.completion_ids[:n],
            env_mask=self.env_mask[:n],
            logprobs=self.logprobs[:n],
        )


def episode_tokens(turns: list[TurnTokens] | None) -> EpisodeTokens:
    """Concatenate per-turn ids; raise `TokenMismatchError` if a turn does not extend the last."""
    if not turns:
        raise TokenMismatchError(
            "the episode has no token ids: use a provider that returns them (hf/, or a vLLM "
            "server with return_token_ids)"
        )
    completion: list[int] = []
    mask: list[int] = []
    logprobs: list[float] = []
    prompt: list[int] = []
    sequence: list[int] = []
    for index, turn in enumerate(turns):
        if turn.prompt_token_ids is None or turn.completion_token_ids is None:
            raise TokenMismatchError(f"turn {index} has no prompt or completion ids")
        if turn.logprobs is None or len(turn.logprobs) != len(turn.completion_token_ids):
            raise TokenMismatchError(
                f"turn {index} has no logprob per completion token; ask the provider for them "
                "(Sampling(logprobs=True) for openai/ endpoints)"
            )
        if index == 0:
            prompt = list(turn.prompt_token_ids)
            inserted: list[int] = []
        else:
            head = turn.prompt_token_ids[: len(sequence)]
            if head != sequence:
                at = next(
                    (i for i, (a, b) in enumerate(zip(head, sequence, strict=False)) if a != b),
                    min(len(head), len(sequence)),
                )
                raise TokenMismatchError(
                    f"turn {index}'s prompt does not start with the previous turns' tokens "
                    f"(first difference at token {at}): the provider re-tokenised the "
                    "conversation; train with hf/ or the vLLM token generator"
                )
            inserted = list(turn.prompt_token_ids[len(sequence) :])
        completion += inserted + list(turn.completion_token_ids)
        mask += [0] * len(inserted) + [1] * len(turn.completion_token_ids)
        logprobs += [0.0] * len(inserted) + list(turn.logprobs)
        sequence = list(turn.prompt_token_ids) + list(turn.completion_token_ids)
    return EpisodeTokens(
        prompt_ids=prompt, completion_ids=completion, env_mask=mask, logprobs=logprobs
    )
