"""`suites/reasoning`: procedural reasoning problems from reasoning-gym, scored by its scorers.

Several generators (arithmetic, number theory, string manipulation, logic, dates), each a
family, with fixed seeds so the items are identical on every machine with the same
reasoning-gym version (the version is part of the environment's identity through its tasks).
The agent answers inside <answer></answer>; the generator's own `score_answer` judges it.

reasoning-gym's scorers give partial credit to near misses (an answer with the right number and
extra text scores 0.6); the suite counts success only at full credit and keeps the raw score as
a subscore, because partial credit for text that merely contains the answer is a false-pass path.
"""

from __future__ import annotations

from workgym.core.environment import Environment, Limits
from workgym.core.episode import Episode
from workgym.core.messages import Message
from workgym.core.tasks import Task, TaskSet
from workgym.core.verdict import Status, Verdict
from workgym.envs.suites.common import SUITE_SPLIT, require, tagged_answer

GENERATORS = (
    "basic_arithmetic",
    "chain_sum",
    "gcd",
    "lcm",
    "count_bits",
    "prime_factorization",
    "simple_equations",
    "letter_counting",
    "spell_backward",
    "word_sorting",
    "caesar_cipher",
    "base_conversion",
    "family_relationships",
    "syllogism",
    "time_intervals",
    "calendar_arithmetic",
)
PER_GENERATOR = 15
SEED = 20240601
FULL_CREDIT = 1.0 - 1e-9


def build_tasks(
    generators: tuple[str, ...] = GENERATORS, per_generator: int = PER_GENERATOR, seed: int = SEED
) -> list[Task]:
    rg = require("reasoning_gym", "suites/reasoning")
    tasks = []
    for g_index, name in enumerate(generators):
        dataset = rg.create_dataset(name, size=per_generator, seed=seed + g_index)
        for i, entry in enumerate(dataset):
            tasks.append(
                Task(
                    id=f"reasoning-{name}-{i}",
                    family=name,
                    prompt=str(entry["question"]),
                    answer={
                        "answer": entry["answer"],
                        "metadata": entry.get("metadata", {}),
                        "question": entry["question"],
                    },
                    meta={"generator": name, "seed": seed + g_index, "index": i},
                )
            )
    return tasks


class ReasoningSuite(Environment):
    """Solve procedurally generated reasoning problems; answer inside <answer></answer>."""

    id = "suites/reasoning"
    version = "1"
    tools = []
    limits = Limits(max_turns=1)
    instructions = (
        "Solve the problem. You may think step by step, but end your reply with the final "
        "answer alone inside answer tags, for example <answer>42</answer>."
    )

    def tasks(self) -> TaskSet:
        return TaskSet(build_tasks(), SUITE_SPLIT)

    def verify(self, task: Task, episode: Episode) -> Verdict:
        answer = tagged_answer(episode.answer)
        if answer is None:
            return Verdict.wrong(Status.parse_error, reason="no <answer>...</answer> in the reply")
        rg = require("reasoning_gym", self.id)
        score_fn = rg.get_score_answer_fn(task.family)
        try:
            score = float(score_fn(answer, dict(task.answer)))
        except (ValueError, TypeError, ArithmeticError, IndexError, KeyError) as exc:
            # reasoning-gym's parsers raise on malformed answers: the answer is unparseable.
            return Verdict.wrong(Status.parse_error, reason=f"{type(exc).__name__}: {exc}")
        success = score >= FULL_CREDIT
        return Verdict(
            reward=1.0 if success else 0.0,
            success=success,
            subscores={"reasoning_gym_score": score},
            evidence={"got": answer[:200]},
        )

    def oracle(self, task: Task) -> list[Message]:
        return [Message(role="assistant", content=f"<answer>{task.answer['answer']}</answer>")]
