"""Step 4: the one reflection call of an iteration, replayed from the log when resuming.

The reply is logged raw (with the prompt's hash and its token usage) before it is parsed, so a
resumed run parses the same text instead of asking the model again, and a changed prompt is
caught as a divergence instead of silently mixing two runs.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from workgym.core.errors import ModelError
from workgym.core.model import Sampling
from workgym.core.tasks import Task
from workgym.train.playbook.gates import Group
from workgym.train.playbook.reflection import Reflection, parse_reflection
from workgym.train.playbook.reflector import GroupView, build_prompt, call_reflector
from workgym.train.playbook.rollouts import Rollouts
from workgym.train.playbook.runlog import LogDiverged
from workgym.train.playbook.scoring import derive_seed, prompt_text

if TYPE_CHECKING:
    from workgym.train.playbook.loop import Trainer


async def reflect_step(
    t: Trainer, i: int, chosen: list[Group], roll: Rollouts, batch: list[Task]
) -> tuple[Reflection, dict[str, tuple[str, str]]]:
    """The one reflection call of iteration i (read back from the log when resuming)."""
    if not chosen:
        t.emit({"kind": "reflection", "iteration": i, "skipped": "every group passed"})
        return Reflection(), {}
    prompts = {t.id: prompt_text(t) for t in batch}
    views: list[GroupView] = []
    refs: dict[str, tuple[str, str]] = {}
    for g in chosen:
        order = sorted(zip(g.rewards, g.refs, strict=True), key=lambda x: (-x[0], x[1]))
        (_, best_ref), (_, worst_ref) = order[0], order[-1]
        best_label, worst_label = f"E{len(refs) + 1}", f"E{len(refs) + 2}"
        refs[best_label], refs[worst_label] = (best_ref, g.task_id), (worst_ref, g.task_id)
        views.append(
            GroupView(
                prompts[g.task_id],
                g.kind,
                g.rewards,
                roll.episodes[best_ref],
                best_label,
                roll.episodes[worst_ref],
                worst_label,
            )
        )
    messages = build_prompt(
        instructions=t.env.instructions,
        playbook_text=t.pb.render(),
        groups=views,
        recent=t.recent[-t.cfg.recent_deltas :] if t.cfg.recent_deltas else [],
        sections=t.pb.sections,
        max_words=t.cfg.max_words,
        max_lessons=t.cfg.max_lessons,
    )
    digest = hashlib.sha256("\n".join(m.content for m in messages).encode()).hexdigest()[:16]
    event = t.log.recall("reflection")
    if event is None:
        sampling = Sampling(
            temperature=t.cfg.reflector_temperature,
            max_tokens=t.cfg.reflector_max_tokens,
            seed=derive_seed(t.cfg.seed, "reflect", i),
        )
        raw, pt, ct, error = "", 0, 0, None
        try:
            completion = await call_reflector(t.reflector, messages, sampling)
            raw = completion.message.content
            pt, ct = completion.usage.prompt_tokens, completion.usage.completion_tokens
        except ModelError as exc:
            if not exc.retryable:
                raise
            error = f"reflector call failed: {exc}"
        event = t.emit(
            {
                "kind": "reflection",
                "iteration": i,
                "prompt_hash": digest,
                "raw": raw,
                "prompt_tokens": pt,
                "completion_tokens": ct,
                "error": error,
                "refs": {k: list(v) for k, v in refs.items()},
            }
        )
    elif event.get("prompt_hash") != digest:
        raise LogDiverged(f"{t.log.path}: the reflection prompt of iteration {i} changed")
    elif t.observer is not None:
        t.observer(event)
    t.ledger.charge(
        "reflector",
        i,
        int(event["prompt_tokens"]),
        int(event["completion_tokens"]),
        calls=1,
        key=f"reflection:{i}",
    )
    if event.get("error"):
        return Reflection(error=str(event["error"])), refs
    return parse_reflection(str(event["raw"]), max_lessons=t.cfg.max_lessons), refs
