"""Full-text search over one case's documents: SQLite FTS5 from the standard library.

FTS5 ships with CPython's sqlite3, so search works offline with no extension to download (the
DuckDB FTS extension would need network access to INSTALL). Each episode gets its own in-memory
index, read-only after it is built. The agent's query is reduced to word tokens, each quoted, so
FTS5 query syntax (NEAR, column filters, unbalanced quotes) can neither error nor be abused; any
token may match and BM25 ranks the hits.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable
from typing import Any

from workgym.envs.docstore.records import Doc

_TOKEN = re.compile(r"\w+", re.UNICODE)
MAX_TOKENS = 24


class SearchIndex:
    def __init__(self, docs: Iterable[Doc]) -> None:
        self.docs = {d.doc_id: d for d in docs}
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.db.execute(
            "CREATE VIRTUAL TABLE docs USING fts5(doc_id UNINDEXED, kind UNINDEXED, title, body, "
            "tokenize='unicode61')"
        )
        self.db.executemany(
            "INSERT INTO docs(doc_id, kind, title, body) VALUES (?, ?, ?, ?)",
            [(d.doc_id, d.kind, d.title, d.body) for d in self.docs.values()],
        )
        self.db.commit()

    def search(self, query: str, limit: int) -> list[dict[str, Any]]:
        tokens = list(dict.fromkeys(t.lower() for t in _TOKEN.findall(query)))[:MAX_TOKENS]
        if not tokens:
            return []
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in tokens)
        rows = self.db.execute(
            "SELECT doc_id, kind, title, snippet(docs, 3, '[', ']', ' ... ', 16) "
            "FROM docs WHERE docs MATCH ? ORDER BY bm25(docs, 0, 0, 4.0, 1.0) LIMIT ?",
            (match, limit),
        ).fetchall()
        return [{"doc_id": r[0], "kind": r[1], "title": r[2], "snippet": r[3]} for r in rows]

    def read(self, doc_id: str) -> Doc | None:
        return self.docs.get(doc_id.strip())

    def close(self) -> None:
        self.db.close()
