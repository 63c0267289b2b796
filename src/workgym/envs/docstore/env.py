"""`workgym/docstore`: find the root cause of an incident in a store of documents.

The agent searches (SQLite FTS5) and reads generated incident reports, service logs, changelog
entries, vendor status pages and runbooks, then submits structured causes with evidence ids. The
verifier (`verifiers.conclusion_docs`) wants the planted cause type (aliases accepted) in the
right component, window and direction, exactly as many causes as were planted, and evidence the
agent really observed. Scoring reads only the task and the episode record (tool outputs are in
it), so an episode read back from disk scores the same as a live one.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from workgym.core.environment import Environment, Limits
from workgym.core.episode import Episode
from workgym.core.messages import Message, ToolCall
from workgym.core.tasks import SplitSpec, Task, TaskSet
from workgym.core.verdict import Verdict
from workgym.envs.docstore.causes import VOCABULARY
from workgym.envs.docstore.corpus import CORPUS_VERSION, build_case
from workgym.envs.docstore.index import SearchIndex
from workgym.envs.docstore.records import Case
from workgym.envs.docstore.tasks import build_tasks
from workgym.envs.docstore.tools import TOOLS, DocSession, read_document, search_documents
from workgym.verifiers.conclusion_docs import Cause, verify_conclusion

_DOC_ID = re.compile(r"\b[A-Z]{2,5}-\d{4}\b")
INSTRUCTIONS = """\
You investigate production incidents. The document store holds the incident report, a log per
service for the incident day, changelog entries, vendor status pages, the TLS certificate
inventory, a weekly metrics report, runbooks and old postmortems. Search, read, and find what
caused each alert: the component where the cause was (not the service that showed the symptom),
the cause type, when it happened and which way the alerting metric moved. If nothing caused a
small blip, the cause type is normal_variation. Name exactly as many causes as there were: one
per alert that had a cause, no alternatives. Cite the ids of the documents that show each cause,
then call submit_conclusion once."""


@lru_cache(maxsize=128)
def case_for(seed: int, plant: tuple[str, ...]) -> Case:
    """A task's corpus (deterministic, so it is cached and rebuilt at will)."""
    return build_case(seed, list(plant))


def task_case(task: Task) -> Case:
    return case_for(int(task.meta["case_seed"]), tuple(task.meta["plant"]))


def observed_ids(episode: Episode, known: set[str]) -> set[str]:
    """Document ids the agent's tools returned in this episode (search hits and reads)."""
    seen: set[str] = set()
    for result in getattr(episode, "tool_calls", []):
        if result.status == "ok" and result.name in (search_documents.name, read_document.name):
            seen.update(i for i in _DOC_ID.findall(result.content) if i in known)
    return seen


def submitted_causes(answer: Any) -> Any:
    return answer.get("causes") if isinstance(answer, dict) else answer


class DocStore(Environment):
    """Root-cause investigation over a generated document store."""

    id = "workgym/docstore"
    version = "1"
    tools = TOOLS
    limits = Limits(max_turns=20, max_total_tokens=120_000, max_tool_output_chars=12_000)
    instructions = INSTRUCTIONS
    # Its `conclusion` tag is detected from the ConclusionAnswers methods below
    # (workgym.guards.capabilities); nothing to declare.

    def tasks(self) -> TaskSet:
        # 24 families (8 kinds x 3 phrasings); this salt splits them 14/5/5 with every kind in
        # train (tests check it).
        return TaskSet(build_tasks(), SplitSpec(salt="docstore/78"))

    def data_hash(self) -> str:
        return CORPUS_VERSION

    def state(self, task: Task) -> DocSession:
        case = task_case(task)
        return DocSession(case=case, index=SearchIndex(case.docs))

    async def score_async(self, task: Task, episode: Episode) -> Verdict:
        if isinstance(episode.state, DocSession):
            episode.state.close()
        return self.score(task, episode)

    def verify(self, task: Task, episode: Episode) -> Verdict:
        case = task_case(task)
        known = {d.doc_id for d in case.docs}
        return verify_conclusion(
            [Cause.model_validate(c) for c in task.answer],
            submitted_causes(episode.answer),
            VOCABULARY,
            observed_ids(episode, known),
        )

    def oracle(self, task: Task) -> list[Message]:
        return self.submit_causes(task, task.answer, text="Root cause(s) from the documents.")

    # -- guard hooks: what the investigation probes of docs/guards.md need -------------------------

    def submit(self, task: Task, answer: Any, text: str = "") -> list[Message]:
        """Submit `answer` (a list of causes) as the conclusion, with `text` as the summary."""
        args = json.dumps({"causes": answer, "summary": text}, default=str)
        call = ToolCall(id="submit_0", name="submit_conclusion", arguments=args)
        return [Message(role="assistant", content=text, tool_calls=[call])]

    def cause_vocabulary(self) -> dict[str, list[str]]:
        """Canonical cause types and their declared aliases (both are accepted)."""
        return {k: list(v) for k, v in VOCABULARY.causes.items()}

    def planted_causes(self, task: Task) -> list[dict[str, Any]]:
        """The planted causes of `task`, in the submission format."""
        return [dict(c) for c in task.answer]

    def symptom_components(self, task: Task) -> list[str]:
        """Where each planted cause showed up (the tempting wrong component)."""
        return list(task.meta["symptoms"])

    def submit_causes(
        self, task: Task, causes: Any, *, observe: bool = True, text: str = ""
    ) -> list[Message]:
        """Read every cited document that exists (when `observe`), then submit `causes`."""
        known = {d.doc_id for d in task_case(task).docs}
        cited: list[str] = []
        if observe and isinstance(causes, list):
            for c in causes:
                for doc_id in c.get("evidence", []) if isinstance(c, dict) else []:
                    if doc_id in known and doc_id not in cited:
                        cited.append(doc_id)
        reads = [
            Message(
                role="assistant",
                tool_calls=[
                    ToolCall(
                        id=f"read_{i}",
                        name=read_document.name,
                        arguments=json.dumps({"doc_id": doc_id}),
                    )
                ],
            )
            for i, doc_id in enumerate(cited)
        ]
        return [*reads, *self.submit(task, causes, text)]
