"""The investigator's tools: full-text search, read one document, submit a conclusion.

The tools see one episode's index and nothing else: the planted causes live in the task's hidden
answer, which no tool holds. `submit_conclusion` refuses cause types outside the vocabulary (with
the list of accepted terms) so a typo costs a retry, not the episode, while a hedge such as
"deploy_regression or config_change" can never be submitted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workgym.core.errors import ToolError
from workgym.core.tools import Ctx, tool
from workgym.envs.docstore.causes import VOCABULARY
from workgym.envs.docstore.index import SearchIndex
from workgym.envs.docstore.records import Case
from workgym.verifiers.conclusion_docs import Cause

MAX_QUERY_CHARS = 500
MAX_LIMIT = 20


@dataclass
class DocSession:
    """One episode's document store."""

    case: Case
    index: SearchIndex

    def close(self) -> None:
        self.index.close()


def _store(ctx: Ctx) -> DocSession:
    if not isinstance(ctx.state, DocSession):
        raise ToolError("no document store for this episode")
    return ctx.state


@tool
def search_documents(ctx: Ctx, query: str, limit: int = 8) -> list[dict[str, Any]]:
    """Full-text search over incident reports, service logs, changelog entries, vendor status
    pages, the certificate inventory, metrics reports, runbooks and past postmortems. Returns
    document ids, kinds, titles and a snippet, best match first.

    Args:
        query: Words to look for (any of them may match), e.g. "checkout-api deploy".
        limit: How many hits to return, 1 to 20.
    """
    if not 1 <= limit <= MAX_LIMIT:
        raise ToolError(f"limit must be between 1 and {MAX_LIMIT}, got {limit}")
    if len(query) > MAX_QUERY_CHARS:
        raise ToolError(f"query is {len(query)} characters; keep it under {MAX_QUERY_CHARS}")
    hits = _store(ctx).index.search(query, limit)
    if not hits:
        raise ToolError(f"no document matches {query!r}; try other words")
    return hits


@tool
def read_document(ctx: Ctx, doc_id: str) -> dict[str, Any]:
    """Read one document in full.

    Args:
        doc_id: The document id, as search_documents returns it (e.g. LOG-1234).
    """
    doc = _store(ctx).index.read(doc_id)
    if doc is None:
        raise ToolError(f"no document {doc_id!r}; search_documents lists the ids")
    return doc.model_dump()


@tool(final=True)
def submit_conclusion(causes: list[Cause], summary: str) -> str:
    """Submit the root cause(s) of the incident. This ends the task.

    Args:
        causes: One entry per distinct cause — exactly as many as there really were, no
            alternatives. Each has cause_type (one of deploy_regression, config_change,
            capacity_exhaustion, dependency_outage, expired_certificate, data_migration,
            normal_variation), component (the service or vendor where the cause was, not where
            the symptom showed; null for normal_variation), window_start and window_end (ISO
            8601 UTC timestamps bracketing the cause and its effect), direction ("up" or "down":
            how the alerting metric moved) and evidence (ids of documents you read that show it).
        summary: A short explanation for the postmortem.
    """
    for i, cause in enumerate(causes, 1):
        if VOCABULARY.canonical(cause.cause_type) is None:
            accepted = ", ".join(VOCABULARY.terms())
            raise ToolError(
                f"cause {i}: {cause.cause_type!r} is not a cause type; use one of: {accepted}"
            )
        if cause.direction not in (None, "up", "down"):
            raise ToolError(f"cause {i}: direction must be 'up', 'down' or null")
    return "conclusion recorded"


TOOLS = [search_documents, read_document, submit_conclusion]
