"""Building fuzzed copies of a warehouse inside one in-memory DuckDB (the staging area).

The real database is attached read-only. A base sample of real rows is taken per table: rows that
pass the gold query's own single-table filters, random rows, and rows that join to what was
already sampled, so joins are not empty by construction. Each variant is an in-memory catalog
that starts from the base sample and is pushed, with plain SQL, towards one kind of case that
separates the gold from its neighbours. Key columns that are unique in the real data keep their
uniqueness and their values (no NULL, no duplicate) so that a correct query that relies on a
real key stays correct on the copy.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

import duckdb

from workgym.verifiers.sql_query_facts import LOCAL_ALIAS, ColumnRef, QueryFacts

STRATEGIES = (
    "sample",
    "boundary",
    "duplicates",
    "nulls",
    "orphans",
    "unlink",
    "ties",
    "mixed",
    "winners",
)
_INTS = {
    "TINYINT",
    "SMALLINT",
    "INTEGER",
    "BIGINT",
    "HUGEINT",
    "UTINYINT",
    "USMALLINT",
    "UINTEGER",
    "UBIGINT",
    "UHUGEINT",
}
_OTHER_TABLE_ROWS = 200
COPY_BLOCK_SIZE = 16_384  # bytes a storage block of a fuzzed copy takes (DuckDB default: 256 KB)


def qi(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def ql(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def around(literal: str, dtype: str) -> list[str]:
    """SQL expressions on and just around a literal, for a column of type `dtype`."""
    t = dtype.upper()
    if t in _INTS:
        return [literal, f"({literal}) - 1", f"({literal}) + 1"]
    if t.startswith("DECIMAL") or t in ("FLOAT", "DOUBLE", "REAL"):
        steps = ("- 1", "+ 1", "- 0.01", "+ 0.01")
        return [literal, *(f"CAST({literal} AS DOUBLE) {s}" for s in steps)]
    if t == "DATE":
        return [literal, f"CAST({literal} AS DATE) - 1", f"CAST({literal} AS DATE) + 1"]
    if t.startswith("TIMESTAMP"):
        moves = [f"{sign} INTERVAL 1 {unit}" for unit in ("SECOND", "DAY") for sign in "-+"]
        return [literal, *(f"CAST({literal} AS {t}) {m}" for m in moves)]
    return [literal]


class Stage:
    """The staging connection: the real database, the base sample, and the variants."""

    def __init__(
        self, source: Path, schema: dict[str, dict[str, str]], facts: QueryFacts, rows: int
    ) -> None:
        self.con: Any = duckdb.connect(":memory:")
        self.con.execute("SET TimeZone = 'UTC'")
        self.con.execute(f"ATTACH {ql(str(source.resolve()))} AS wg_src (READ_ONLY)")
        self.schema = schema
        self.facts = facts
        self.count = 0
        self.views = [
            sql
            for (sql,) in self.con.execute(
                "SELECT sql FROM duckdb_views() WHERE database_name = 'wg_src' AND NOT internal"
            ).fetchall()
        ]
        self.unique: set[ColumnRef] = set()
        self.nullable: set[ColumnRef] = set()
        # The gold's answer on the real database, as text: the `winners` strategy removes rows
        # carrying it, so a query that pastes the answer as a literal fails on that copy.
        self.answer_values: list[str] = []
        self._profile()
        self._sample(rows)
        self.touched = self._touched()
        # Tables no strategy can change are shared by every variant through views into one
        # catalog (materialised only when a copy is written): on TPC-DS, copying all 24 tables
        # into each of a suite's ~15 variants was most of its build time.
        self.con.execute("ATTACH ':memory:' AS wg_rest")
        for table in self.schema:
            if table not in self.touched:
                rest, base = f"wg_rest.main.{qi(table)}", f"wg_base.main.{qi(table)}"
                self.con.execute(f"CREATE TABLE {rest} AS SELECT * FROM {base}")

    def __enter__(self) -> Stage:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.con.close()

    def _profile(self) -> None:
        """Which referenced columns are unique keys, and which ever hold NULL, in the real data.

        Copies keep both facts: a key stays unique and a never-NULL column gets no NULL, so a
        query that is right under the real data's constraints stays right on every copy.
        """
        wanted: dict[str, set[str]] = {t: set(c) for t, c in self.facts.columns.items()}
        for pair in self.facts.joins:
            for table, column in pair:
                wanted.setdefault(table, set()).add(column)
        for table, columns in wanted.items():
            names = sorted(columns)
            stats = ", ".join(f"count({qi(c)}), count(DISTINCT {qi(c)})" for c in names)
            row = self.con.execute(
                f"SELECT count(*), {stats} FROM wg_src.main.{qi(table)}"
            ).fetchone()
            total = row[0]
            for n, column in enumerate(names):
                non_null, distinct = row[1 + 2 * n], row[2 + 2 * n]
                if non_null < total:
                    self.nullable.add((table, column))
                elif distinct == total and total > 0:
                    self.unique.add((table, column))

    def _touched(self) -> set[str]:
        """The tables a strategy may change, or whose order the reversed copy must reverse.
        With views in the source, every table: a view may read any of them."""
        if self.views:
            return set(self.schema)
        facts = self.facts
        refs = [*facts.order, *facts.group, *(ref for ref, _ in facts.literals)]
        refs += [ref for pair in facts.joins for ref in pair]
        return {*facts.tables, *facts.columns, *(table for table, _ in refs)}

    def _try(self, sql: str, params: list[Any] | None = None) -> bool:
        try:
            self.con.execute(sql, params or [])
            return True
        except duckdb.Error:
            return False

    def _part(self, table: str, where: str, order_seed: int, limit: int) -> str:
        return (
            f"(SELECT rowid AS __rid, {LOCAL_ALIAS}.* FROM wg_src.main.{qi(table)} AS {LOCAL_ALIAS}"
            f" WHERE {where} ORDER BY hash(rowid, {order_seed}) LIMIT {limit})"
        )

    def _valid(self, part: str) -> bool:
        return self._try(f"SELECT * FROM {part} LIMIT 0")

    def _sample(self, n: int) -> None:
        """(Re)build wg_base: per table, real rows passing the gold's own filters, random rows,
        and rows joining what was sampled before."""
        self.con.execute("USE memory")
        self._try("DETACH wg_base")
        self.con.execute("ATTACH ':memory:' AS wg_base")
        half = max(2, n // 2)
        done: list[str] = []
        for table in self.facts.tables:
            conds = [sql for sql, _ in self.facts.local.get(table, [])]
            filters = ([" AND ".join(f"({c})" for c in conds)] if len(conds) > 1 else []) + conds
            pos = [self._part(table, f, 11, half) for f in filters]
            pos = [p for p in pos if self._valid(p)]
            parts = [*pos, self._part(table, "true", 12, half)]
            for a, b in self.facts.joins:
                for mine, other in ((a, b), (b, a)):
                    if mine[0] == table and other[0] in done:
                        where = (
                            f"{LOCAL_ALIAS}.{qi(mine[1])} IN"
                            f" (SELECT {qi(other[1])} FROM wg_base.main.{qi(other[0])})"
                        )
                        parts.append(self._part(table, where, 13, n))
            self._dedup_into("wg_base", table, parts)
            done.append(table)
        for table in self.schema:
            if table not in self.facts.tables:
                self.con.execute(
                    f"CREATE TABLE wg_base.main.{qi(table)} AS SELECT * FROM"
                    f" wg_src.main.{qi(table)} LIMIT {_OTHER_TABLE_ROWS}"
                )

    def _dedup_into(self, catalog: str, table: str, parts: list[str]) -> None:
        union = " UNION ALL ".join(parts)
        self.con.execute(
            f"CREATE OR REPLACE TABLE {catalog}.main.{qi(table)} AS SELECT * EXCLUDE (__rid) FROM"
            f" (SELECT DISTINCT ON (__rid) * FROM ({union})) ORDER BY __rid"
        )

    def widen(self, n: int) -> None:
        """Take a larger base sample (when the gold came out empty on every copy)."""
        self._sample(n)

    def _new_catalog(self, source: str, reverse: bool = False) -> str:
        self.count += 1
        cat = f"wg_v{self.count}"
        self.con.execute(f"ATTACH ':memory:' AS {cat}")
        order = " ORDER BY rowid DESC" if reverse else ""
        for table in self.schema:
            if table in self.touched:
                self.con.execute(
                    f"CREATE TABLE {cat}.main.{qi(table)} AS"
                    f" SELECT * FROM {source}.main.{qi(table)}{order}"
                )
            else:
                self.con.execute(
                    f"CREATE VIEW {cat}.main.{qi(table)} AS SELECT * FROM wg_rest.main.{qi(table)}"
                )
        return cat

    def _views(self, cat: str) -> None:
        self.con.execute(f"USE {cat}")
        for sql in self.views:
            self._try(sql)

    def variant(self, strategy: str, seed: int) -> str | None:
        """A new catalog holding the base sample pushed by `strategy`; None if nothing applied."""
        cat = self._new_catalog("wg_base")
        steps: dict[str, Callable[[], int]] = {
            "sample": lambda: 1,
            "boundary": lambda: self._boundary(cat, seed),
            "duplicates": lambda: self._duplicates(cat, seed),
            "nulls": lambda: self._nulls(cat, seed),
            "orphans": lambda: self._orphans(cat, seed),
            "unlink": lambda: self._unlink(cat, seed),
            "ties": lambda: self._ties(cat, seed),
            "winners": lambda: self._winners(cat),
            "mixed": lambda: sum(
                f(cat, seed) for f in (self._boundary, self._duplicates, self._nulls, self._orphans)
            ),
        }
        if steps[strategy]() == 0:
            self.con.execute("USE memory")
            self.con.execute(f"DETACH {cat}")
            return None
        self._views(cat)
        return cat

    def reversed_copy(self, cat: str) -> str:
        """The same rows in reverse order: a gold whose answer changes is tie-dependent here."""
        rev = self._new_catalog(cat, reverse=True)
        self._views(rev)
        return rev

    def write(self, copies: list[tuple[str, Path]]) -> None:
        """Write each catalog to its own file. The shared tables are written once into a
        template whose bytes start every copy (a DuckDB file per table costs a block: 24
        TPC-DS tables took 150 ms a copy); only the tables a strategy may change are added."""
        self.con.execute("USE memory")
        shared = [t for t in self.schema if t not in self.touched]
        if not shared:  # every table touched (always so with views): copy the catalogs whole
            for cat, path in copies:
                self._attach_out(path)
                try:
                    self.con.execute(f"COPY FROM DATABASE {cat} TO wg_out")
                finally:
                    self.con.execute("DETACH wg_out")
            return
        if not copies:
            return
        own = [t for t in self.schema if t in self.touched]
        template = copies[0][1].with_name(".shared.tmp")
        try:
            self._fill(template, [(t, f"wg_rest.main.{qi(t)}") for t in shared])
            for cat, path in copies:
                shutil.copyfile(template, path)
                self._fill(path, [(t, f"{cat}.main.{qi(t)}") for t in own])
        finally:
            template.unlink(missing_ok=True)
            Path(f"{template}.wal").unlink(missing_ok=True)

    def _attach_out(self, path: Path) -> None:
        """A new copy file with small blocks: a DuckDB table takes at least one block, and a
        copy holds every table at two dozen rows each, so 256 KB blocks made EPSG's 45 suites
        of 60-table copies 2.3 GB of mostly empty blocks (decision 0184). A file existing
        already (the shared template copied to `path`) keeps the block size it was made with."""
        self.con.execute(f"ATTACH {ql(str(path))} AS wg_out (BLOCK_SIZE {COPY_BLOCK_SIZE})")

    def _fill(self, path: Path, tables: list[tuple[str, str]]) -> None:
        """Add `tables` (name, relation to copy) to the file at `path`, in one transaction."""
        self._attach_out(path)
        try:
            self.con.execute("BEGIN TRANSACTION")
            for name, relation in tables:
                self.con.execute(f"CREATE TABLE wg_out.main.{qi(name)} AS SELECT * FROM {relation}")
            self.con.execute("COMMIT")
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        finally:
            self.con.execute("DETACH wg_out")

    def _t(self, cat: str, table: str) -> str:
        return f"{cat}.main.{qi(table)}"

    def _anchor(self, cat: str, table: str, skip: str) -> str:
        """A filter (alias _t) for rows of `table` that pass its other gold filters and join to
        partner rows that pass theirs; the first variant of it that selects rows wins."""
        own = [sql for sql, cols in self.facts.local.get(table, []) if skip not in cols]
        links = []
        for a, b in self.facts.joins:
            for mine, other in ((a, b), (b, a)):
                if mine[0] == table:
                    theirs = [sql for sql, _ in self.facts.local.get(other[0], [])]
                    where = " AND ".join(f"({c})" for c in theirs) or "true"
                    links.append(
                        f"{LOCAL_ALIAS}.{qi(mine[1])} IN (SELECT {LOCAL_ALIAS}.{qi(other[1])}"
                        f" FROM {self._t(cat, other[0])} AS {LOCAL_ALIAS} WHERE {where})"
                    )
        options = [own + links, own + links[:1], own, links[:1], []]
        for option in options:
            where = " AND ".join(f"({c})" for c in option) or "true"
            found = self._try(
                f"SELECT 1 FROM {self._t(cat, table)} AS {LOCAL_ALIAS} WHERE {where} LIMIT 1"
            )
            if found and self.con.fetchone() is not None:
                return where
        return "true"

    def _boundary(self, cat: str, seed: int) -> int:
        """Rows on and around each literal: updated in place in key tables (the key stays
        unique), cloned elsewhere; taken from rows that otherwise pass the gold's filters and
        do not hold the value yet. A row already on the value would be moved nowhere: on a
        TPC-DS anti-join (no customer with salutation 'Sir' and flag 'Y' for a household) the
        only rows passing the other filters were the ones already matching, so no copy gained
        a match the real data lacks, and `WHERE key IN (real answer's keys)` passed the suite
        (decision 0162)."""
        applied = 0
        for k, ((table, column), literal) in enumerate(self.facts.literals):
            dtype = self.schema[table][column]
            t, c = self._t(cat, table), qi(column)
            where = self._anchor(cat, table, column)
            pick = (
                f"SELECT rowid FROM {t} AS {LOCAL_ALIAS} WHERE {where}"
                f" AND {LOCAL_ALIAS}.{c} IS DISTINCT FROM __V__"
                f" ORDER BY hash(rowid, {seed}, {k}) LIMIT 1 OFFSET __J__"
            )
            keyed = any(ref[0] == table for ref in self.unique)
            for j, expr in enumerate(around(literal, dtype)):
                value = f"CAST({expr} AS {dtype})"
                rows = pick.replace("__J__", str(j)).replace("__V__", value)
                if keyed:
                    sql = f"UPDATE {t} SET {c} = {value} WHERE rowid IN ({rows})"
                else:
                    sql = (
                        f"INSERT INTO {t} SELECT * REPLACE ({value} AS {c}) FROM {t}"
                        f" WHERE rowid IN ({rows})"
                    )
                applied += self._try(sql)
        return applied

    def _winners(self, cat: str) -> int:
        """Remove the rows whose group or order key is one of the real answer's values: each
        top-k winner of the real data is gone here, so the gold's answer changes."""
        if not self.answer_values:
            return 0
        deleted = 0
        for table, column in dict.fromkeys([*self.facts.group, *self.facts.order]):
            try:
                row = self.con.execute(
                    f"DELETE FROM {self._t(cat, table)} WHERE CAST({qi(column)} AS VARCHAR)"
                    " IN (SELECT unnest(?::VARCHAR[]))",
                    [self.answer_values],
                ).fetchone()
            except duckdb.Error:
                continue
            deleted += int(row[0]) if row else 0
        return deleted

    def _duplicates(self, cat: str, seed: int) -> int:
        applied = 0
        for table in self.facts.tables:
            if any(ref[0] == table for ref in self.unique):
                continue  # duplicating rows would break a real key
            applied += self._try(
                f"INSERT INTO {self._t(cat, table)} SELECT * FROM {self._t(cat, table)}"
                f" WHERE hash(rowid, {seed}) % 3 = 0"
            )
        return applied

    def _nulls(self, cat: str, seed: int) -> int:
        applied = 0
        for table in self.facts.tables:
            for column in sorted(self.facts.columns.get(table, ())):
                if (table, column) not in self.nullable:
                    continue
                applied += self._try(
                    f"UPDATE {self._t(cat, table)} SET {qi(column)} = NULL"
                    f" WHERE hash(rowid, {seed}, {ql(column)}) % 10 < 3"
                )
        return applied

    def _orphans(self, cat: str, seed: int) -> int:
        applied = 0
        for a, b in self.facts.joins:
            dim, fact = (a, b) if a in self.unique and b not in self.unique else (b, a)
            d, dc = self._t(cat, dim[0]), qi(dim[1])
            applied += self._try(
                f"DELETE FROM {d} WHERE {dc} IN (SELECT {dc} FROM (SELECT DISTINCT {dc} FROM {d})"
                f" ORDER BY hash({dc}, {seed}) LIMIT greatest(1, (SELECT count(DISTINCT {dc})"
                f" FROM {d}) // 3))"
            )
            if fact in self.nullable:
                f = self._t(cat, fact[0])
                applied += self._try(
                    f"INSERT INTO {f} SELECT * REPLACE (NULL AS {qi(fact[1])}) FROM {f}"
                    f" ORDER BY hash(rowid, {seed}) LIMIT 1"
                )
        return applied

    def _unlink(self, cat: str, seed: int) -> int:
        """Change which dimension keys are used: delete every fact row of a third of the join-key
        values (used keys become unused), and add a dimension row under a fresh key (a new key
        no fact uses). This separates an anti-join from a pasted list of the real answer's keys,
        which no other variant changes."""
        applied = 0
        for a, b in self.facts.joins:
            dim, fact = (a, b) if a in self.unique and b not in self.unique else (b, a)
            f, fc = self._t(cat, fact[0]), qi(fact[1])
            d, dc = self._t(cat, dim[0]), qi(dim[1])
            pick = f"FROM {d} ORDER BY hash(rowid, {seed}) LIMIT 1"
            applied += self._try(
                f"INSERT INTO {d} SELECT * REPLACE ({dc} || '_wg{seed % 1000}' AS {dc}) {pick}"
            ) or self._try(
                f"INSERT INTO {d} SELECT * REPLACE ((SELECT max({dc}) FROM {d}) + 1 + {seed % 1000}"
                f" AS {dc}) {pick}"
            )
            applied += self._try(
                f"DELETE FROM {f} WHERE {fc} IN (SELECT {fc} FROM (SELECT DISTINCT {fc} FROM {f}"
                f" WHERE {fc} IN (SELECT {dc} FROM {d})) ORDER BY hash({fc}, {seed})"
                f" LIMIT greatest(1, (SELECT count(DISTINCT {fc}) FROM {f}) // 3))"
            )
        return applied

    def _ties(self, cat: str, seed: int) -> int:
        applied = 0
        for table, column in self.facts.order:
            t, c = self._t(cat, table), qi(column)
            if (table, column) not in self.unique:
                applied += self._try(
                    f"UPDATE {t} SET {c} = (SELECT {c} FROM {t} WHERE {c} IS NOT NULL"
                    f" ORDER BY hash(rowid, {seed}) LIMIT 1) WHERE hash(rowid, {seed}, 't') % 2 = 0"
                )
        for table, column in self.facts.group:
            applied += self._clone_group(cat, table, column, seed)
        return applied

    def _clone_group(self, cat: str, table: str, column: str, seed: int) -> int:
        """Copy the largest group under a new real value of its key: a tie at the top."""
        t, c = self._t(cat, table), qi(column)
        try:
            new = self.con.execute(
                f"SELECT {c} FROM wg_src.main.{qi(table)} WHERE {c} IS NOT NULL AND {c} NOT IN"
                f" (SELECT {c} FROM {t} WHERE {c} IS NOT NULL) ORDER BY hash({c}, {seed}) LIMIT 1"
            ).fetchone()
            top = self.con.execute(
                f"SELECT {c} FROM {t} WHERE {c} IS NOT NULL GROUP BY 1"
                f" ORDER BY count(*) DESC, hash({c}, {seed}) LIMIT 1"
            ).fetchone()
        except duckdb.Error:
            return 0
        if new is None or top is None:
            return 0
        ok = self._try(
            f"INSERT INTO {t} SELECT * REPLACE (? AS {c}) FROM {t} WHERE {c} = ?", [new[0], top[0]]
        )
        for a, b in self.facts.joins:
            for mine, other in ((a, b), (b, a)):
                if mine == (table, column):
                    self._try(
                        f"INSERT INTO {self._t(cat, other[0])} SELECT * FROM"
                        f" wg_src.main.{qi(other[0])} WHERE {qi(other[1])} = ? LIMIT 1",
                        [new[0]],
                    )
        return int(ok)
