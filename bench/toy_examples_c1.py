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
"""

from __future__ import annotations

import workgym as wg
from workgym.core.messages import Message
from workgym.core.tasks import SplitSpec, Task, TaskSet
from workgym.envs.toy_examples.env import ToyExamples

SALT = "toy-examples/66"


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
