"""`bench/toy-examples-c1`: workgym/toy-examples as claim 1's second environment (decision 0198).

Claim 1 wants exposure bias measured on lookup and one more environment whose oracle can say the
right next action from any state. toy-examples declares one (`ToyExamples.next_actions`: the
transform call or the worked-out answer until a reply holds it, then its submission). This
variant keeps the environment's tasks, tools, verifier and salt and changes two things:

- the gold trajectory is the tool path, `transform` then `submit` (the environment's own oracle
  submits at once), so teacher forcing also asks for the step after a tool reply;
- its train families move to dev, so 36 tasks (12 per rule) are scored. No model scored here was
  trained or prompted on toy-examples; the test split stays in test, unused.

    workgym imitation-gap bench/toy-examples-c1 --import bench.toy_examples_c1 --split dev ...

`bench/toy-examples-c1t` is where claim 1's trained agents on toy-examples learn (decision 0199):
the same job on 36 fresh words that neither toy-examples nor c1 holds, 24 in train and 12 in dev
(8 and 4 per rule), with c1's tool-path gold trajectory. A playbook or checkpoint learned there is
scored on c1's dev split, none of whose tasks it saw, beside the untrained models.
"""

from __future__ import annotations

import workgym as wg
from workgym.core.messages import Message
from workgym.core.tasks import SplitSpec, Task, TaskSet
from workgym.envs.toy_examples.env import ToyExamples, rule_tasks

SALT = "toy-examples/66"
FRESH_WORDS: tuple[str, ...] = (
    "almond", "bishop", "copper", "dancer", "emblem", "fabric", "ginger", "helmet", "insect",
    "jigsaw", "kernel", "locket", "mitten", "noodle", "oracle", "pillow", "quartz", "raisin",
    "silver", "tomato", "urchin", "vessel", "walrus", "yeoman", "zenith", "button", "cradle",
    "donkey", "eclipse", "feather", "glider", "hornet", "iceberg", "jasmine", "knight", "lobster",
)  # fmt: skip
FRESH_TRAIN = 24  # the first 24 fresh words train, the last 12 are dev


@wg.register
class ToyExamplesC1(ToyExamples):
    """toy-examples with the tool path as its gold trajectory and train moved into dev."""

    id = "bench/toy-examples-c1"

    def tasks(self) -> TaskSet:
        base = ToyExamples().taskset
        # Every family pinned: toy-examples' train and dev families to dev, its test to test.
        pinned = {t.family: "test" if s == "test" else "dev"
                  for s in ("train", "dev", "test") for t in base.split(s)}  # fmt: skip
        split = SplitSpec(salt=SALT, train=0.0, dev=0.6, test=0.4, overrides=pinned)  # type: ignore[arg-type]
        return TaskSet(list(base), split)

    def oracle(self, task: Task) -> list[Message]:
        """The tool path: the transform call, then the submission of what it returns."""
        use_tool = self.next_actions(task, [])[0]
        replied = [Message(role="tool", content=str(task.answer))]
        return [use_tool, self.next_actions(task, replied)[0]]


@wg.register
class ToyExamplesC1Train(ToyExamplesC1):
    """c1's job on 36 fresh words, for training only: 24 train, 12 dev (decision 0199)."""

    id = "bench/toy-examples-c1t"

    def tasks(self) -> TaskSet:
        tasks = rule_tasks(FRESH_WORDS)
        pinned = {t.family: "train" if i < FRESH_TRAIN else "dev" for i, t in enumerate(tasks)}
        split = SplitSpec(salt=SALT, train=0.6, dev=0.4, test=0.0, overrides=pinned)  # type: ignore[arg-type]
        return TaskSet(tasks, split)
