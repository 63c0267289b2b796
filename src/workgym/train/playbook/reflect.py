"""Step 4, reflection: one model call per iteration that turns contrasting rollouts into lessons.

The reflector sees, for the few most contrastive groups, the task, the best and the worst
transcript, the verifier's feedback (marked as not available at test time: only the reflector
ever sees verifier internals), the entries the agent cited, and the recent deltas with their gate
outcomes, so it does not propose again what the gates already refused. It may be a different
(often stronger) model than the agent: `--reflector-model`.

Where the reflector's runtime constrains decoding (llama.cpp, OpenAI-compatible servers), the
reply is held to `reply_schema.reflection_schema`: only ops, sections, entry ids and episode
labels this iteration can accept (`reflector_schema`, on by default).

The reply is logged raw (with the prompt's hash and its token usage) before it is parsed
(`lessons.parse_reflection`), so a resumed run parses the same text instead of asking the model
again, and a changed prompt is caught as a divergence instead of silently mixing two runs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workgym.core.episode import Episode
from workgym.core.errors import ModelError
from workgym.core.messages import Message
from workgym.core.model import Completion, Model, Sampling
from workgym.core.tasks import Task
from workgym.core.tools import ToolSpec
from workgym.train.playbook.entries import CITATION
from workgym.train.playbook.groups import Group
from workgym.train.playbook.lessons import Reflection, parse_reflection
from workgym.train.playbook.reply_schema import reflection_schema
from workgym.train.playbook.rollouts import Rollouts
from workgym.train.playbook.runlog import LogDiverged
from workgym.train.playbook.scoring import derive_seed, prompt_text

if TYPE_CHECKING:
    from workgym.train.playbook.state import TrainingState


SYSTEM = """\
You improve a playbook: a short list of strategies that is put into an AI agent's system prompt.
The agent's weights are frozen; the playbook is the only thing that changes. You see attempts at
the same task that went well and badly, and you write lessons that would make the next attempts
at *other* tasks of this job go better. Reply with one JSON object and nothing else."""

RULES = """\
Reply with exactly this JSON shape:
{{"diagnoses": ["<what separated the best from the worst attempt>", ...],
  "lessons": [{{"op": "ADD|UPDATE|MERGE|DELETE", "section": "<one of: {sections}>",
               "text": "<the entry, at most {max_words} words>", "target_ids": ["pb-..."],
               "rationale": "<why>", "evidence": ["E1", ...]}}],
  "tags": [{{"id": "pb-...", "tag": "helpful|harmful|neutral"}}]}}
Rules:
- At most {max_lessons} lessons; zero is fine when nothing general was learned.
- ADD needs a section and text; UPDATE one target and new text; MERGE two or more targets and the
  merged text; DELETE the targets only. Prefer UPDATE over an ADD that repeats an entry.
- Lessons must be general strategies for this job: no answers, ids or constants of one task, no
  mention of the grader, verifier, rewards or test files, never "claim success".
- evidence lists the episode ids (E1, E2, ...) the lesson is based on.
- Do not propose again a change that the gates rejected unless you fix why it failed."""

# One worked reply, for another job: small reflectors copy a shape far more reliably than they
# follow a described one (issue 34 measured 6/6 valid lessons from 0.5B and 1.5B models given an
# example and the tool list, where the 135M model without them echoed its prompt).
EXAMPLE = """An example of a good reply, for another job (a unit-conversion agent):
{{"diagnoses": ["the best attempt read the unit the tool reported before converting; the worst \
assumed metres"],
  "lessons": [{{"op": "ADD", "section": "{section}", "text": "Read the unit a tool reports and \
convert from that unit, never from an assumed one.", "target_ids": [], "rationale": "the worst \
attempt submitted a value in the wrong unit", "evidence": ["E1", "E2"]}}],
  "tags": []}}"""


@dataclass(frozen=True)
class GroupView:
    """One group shown to the reflector: its task, rewards and two contrasting episodes."""

    task_prompt: str
    kind: str
    rewards: tuple[float, ...]
    best: Episode
    best_ref: str
    worst: Episode
    worst_ref: str


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 15] + " ...[clipped]"


def transcript(episode: Episode, *, per_message: int = 600, total: int = 5000) -> str:
    """The agent's side of an episode (its turns and the tool results), without the system
    prompt or the task, which the reflector is shown once."""
    lines: list[str] = []
    for m in episode.messages:
        if m.role in ("system", "user"):
            continue
        if m.role == "assistant":
            if m.content.strip():
                lines.append(f"agent: {_clip(m.content, per_message)}")
            for call in m.tool_calls:
                lines.append(f"agent calls {call.name}({_clip(call.arguments, per_message)})")
        else:
            lines.append(f"tool {m.name or ''} -> {_clip(m.content, per_message)}")
    if episode.outcome != "terminated":
        lines.append(f"[episode {episode.outcome}: {episode.truncation or episode.error or ''}]")
    return _clip("\n".join(lines), total)


def verifier_feedback(episode: Episode) -> str:
    v = episode.verdict
    if v is None:
        return "none (the episode errored before scoring)"
    body = {"reward": v.reward, "success": v.success, "status": str(v.status)}
    if v.subscores:
        body["subscores"] = v.subscores
    if v.evidence:
        body["evidence"] = v.evidence
    if v.flags or episode.flags:
        body["flags"] = sorted(set(v.flags) | set(episode.flags))
    return _clip(json.dumps(body, default=str, sort_keys=True), 1200)


def build_prompt(
    *,
    instructions: str,
    playbook_text: str,
    groups: Sequence[GroupView],
    recent: Sequence[str],
    sections: Sequence[str],
    max_words: int,
    max_lessons: int,
    tools: Sequence[ToolSpec] = (),
) -> list[Message]:
    parts = ["# The job (what every agent is told)", instructions.strip() or "(no instructions)"]
    if tools:
        listed = (f"- {t.name}: {(t.description.strip().splitlines() or [''])[0]}" for t in tools)
        parts += ["# The agent's tools", "\n".join(listed)]
    parts += ["# Current playbook", playbook_text.strip() or "(empty: no entries yet)"]
    parts += [
        "# Recent changes and what the gates decided (rejected ones are negative examples)",
        "\n".join(f"- {r}" for r in recent) or "(none yet)",
    ]
    for i, g in enumerate(groups, 1):
        rewards = ", ".join(f"{r:g}" for r in g.rewards)
        parts.append(f"# Group {i} ({g.kind}; rewards of {len(g.rewards)} attempts: {rewards})")
        parts.append(f"Task:\n{_clip(g.task_prompt, 2000)}")
        for label, ref, ep in (("Best", g.best_ref, g.best), ("Worst", g.worst_ref, g.worst)):
            cited = sorted(set(CITATION.findall(transcript(ep, total=100_000))))
            parts.append(
                f"## {label} attempt, episode id {ref} (reward {ep.reward:g})\n"
                f"Entries it cited: {', '.join(cited) or 'none'}\n{transcript(ep)}\n"
                f"Verifier feedback (NOT available to the agent at test time): "
                f"{verifier_feedback(ep)}"
            )
    parts.append(
        RULES.format(sections=", ".join(sections), max_words=max_words, max_lessons=max_lessons)
    )
    parts.append(EXAMPLE.format(section=sections[0] if sections else "strategies"))
    return [
        Message(role="system", content=SYSTEM),
        Message(role="user", content="\n\n".join(parts)),
    ]


async def call_reflector(model: Model, messages: list[Message], sampling: Sampling) -> Completion:
    """The one reflection call of an iteration (no tools: the reply is the JSON)."""
    return await model.complete(messages, [], sampling)


async def reflect_step(
    t: TrainingState, i: int, chosen: list[Group], roll: Rollouts, batch: list[Task]
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
        tools=[tool.spec for tool in t.env.tools],
    )
    digest = hashlib.sha256("\n".join(m.content for m in messages).encode()).hexdigest()[:16]
    event = t.log.recall("reflection")
    if event is None:
        schema = None
        if t.cfg.reflector_schema:
            schema = reflection_schema(
                sections=t.pb.sections,
                entry_ids=[e.id for e in t.pb.live],
                evidence=list(refs),
                max_lessons=t.cfg.max_lessons,
            )
        sampling = Sampling(
            temperature=t.cfg.reflector_temperature,
            max_tokens=t.cfg.reflector_max_tokens,
            seed=derive_seed(t.cfg.seed, "reflect", i),
            json_schema=schema,
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
