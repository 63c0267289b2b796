"""From a confirmed exploit to a regression probe (docs/guards.md, "From exploit to probe").

`export_exploit` copies the assistant turns of a reviewed episode into a small JSON file; a
`ReplayProbe` plays those exact turns on the same task again and expects the verifier to fail
them. The file is the regression test of the fix; the general form of the trick then goes into
workgym/guards/found.py so that it attacks every environment and family.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from workgym.core.errors import ConfigError
from workgym.core.messages import Message
from workgym.guards.probes import (
    AttackContext,
    Expect,
    Outcome,
    Probe,
    describe,
    judge_verdict,
    play,
)
from workgym.testing.scripted import TaskScript

if TYPE_CHECKING:
    from workgym.core.tasks import Task


class ExploitRecord(BaseModel):
    """One confirmed exploit, as found: enough to replay it and to explain it."""

    name: str
    env_id: str
    env_hash: str
    task_id: str
    family: str
    epoch: int = 0
    flags: list[str] = Field(default_factory=list)
    note: str = ""
    expect: Expect = Expect.must_fail
    turns: list[Message]


def export_exploit(run: str | Path, task_id: str, epoch: int, name: str, out: Path) -> Path:
    """Write the exploit record of one episode of RUN; it must be reviewed as an exploit."""
    from workgym.guards.review import TrustedOutcomes, episode_flags

    outcomes = TrustedOutcomes.from_run(run)
    record = outcomes.records.get((task_id, epoch))
    if record is None:
        raise ConfigError(f"no episode ({task_id}, epoch {epoch}) in {run}")
    confirmed = [
        r
        for (t, e, _), r in outcomes.reviews.items()
        if (t, e) == (task_id, epoch) and r.decision == "exploit"
    ]
    if not confirmed:
        raise ConfigError(
            f"episode ({task_id}, epoch {epoch}) has no flag reviewed as an exploit; mark it "
            f"first: workgym review {run} --task {task_id} --epoch {epoch} --exploit --note ..."
        )
    turns = [Message.model_validate(m) for m in record["messages"] if m["role"] == "assistant"]
    exploit = ExploitRecord(
        name=name,
        env_id=record.get("env_id", ""),
        env_hash=record.get("env_hash", ""),
        task_id=task_id,
        family=record.get("family", ""),
        epoch=epoch,
        flags=episode_flags(record),
        note="; ".join(r.note for r in confirmed if r.note),
        turns=turns,
    )
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.json"
    path.write_text(exploit.model_dump_json(indent=2) + "\n")
    return path


class ReplayProbe(Probe):
    """Replays one exploit's turns on its own task (n/a on any other task or environment)."""

    group = "found"

    def __init__(self, record: ExploitRecord) -> None:
        self.record = record
        self.name = f"replay-{record.name}"
        self.summary = f"replay of a confirmed exploit: {record.note or record.name}"

    @classmethod
    def load(cls, path: str | Path) -> ReplayProbe:
        try:
            return cls(ExploitRecord.model_validate_json(Path(path).read_text()))
        except ValueError as exc:
            raise ConfigError(f"{path} is not an exploit record ({exc})") from exc

    @classmethod
    def load_dir(cls, directory: str | Path) -> list[ReplayProbe]:
        return [cls.load(p) for p in sorted(Path(directory).glob("*.json"))]

    def attacker(self) -> TaskScript:
        return TaskScript(f"scripted/probe-{self.name}", lambda task, env: self.record.turns)

    async def run(self, ctx: AttackContext, task: Task) -> Outcome | None:
        if ctx.env.id != self.record.env_id or task.id != self.record.task_id:
            return None
        expected = self.record.expect
        ep = await play(ctx, task, self.attacker(), self.seed_for(ctx, task))
        return self.outcome(task, expected, describe(ep), judge_verdict(expected, ep))
