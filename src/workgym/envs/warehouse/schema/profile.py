"""Profile a snapshot into a schema card, with SQL aggregates only (no Python loops over rows).

Per table, one aggregate query computes every column's counts, extremes, quantiles and
string-shape counts; small per-column queries then fetch top values, samples, sentinel values
and case/space variant groups. Keys, foreign keys and roles come from `keys`, `relations` and
`roles`. Everything is ordered deterministically (ties broken by value, samples ordered by
hash), so the same snapshot always yields the same card.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from workgym.envs.warehouse.schema.card import (
    CARD_FILE,
    ColumnCard,
    SchemaCard,
    TableCard,
    ValueCount,
)
from workgym.envs.warehouse.schema.column_roles import assign_roles
from workgym.envs.warehouse.schema.identities import per_unit_columns, verified_abbreviations
from workgym.envs.warehouse.schema.keys import add_keys
from workgym.envs.warehouse.schema.meaning import assign_meanings
from workgym.envs.warehouse.schema.own_key_values import own_key_columns
from workgym.envs.warehouse.schema.relations import infer_foreign_keys, trusted_foreign_keys
from workgym.envs.warehouse.schema.timelinks import find_time_links
from workgym.envs.warehouse.source.duck import qi, ql
from workgym.envs.warehouse.source.snapshot import (
    MANIFEST_FILE,
    SnapshotColumn,
    SnapshotManifest,
    SnapshotTable,
    open_snapshot,
)
from workgym.envs.warehouse.source.typemap import NUMERIC_FAMILIES

QUANTILES = (0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99)
TOP_K = 10
SAMPLES = 5
TEXT_SENTINELS = (
    "N/A", "NA", "#N/A", "NULL", "NONE", "NIL", "NAN", "-", "--", "?", "UNKNOWN", "MISSING",
    "TBD", "-1", "9999", "99999", "999999", "-999", "-9999", "0000-00-00", "1900-01-01",
    "9999-12-31",
)  # fmt: skip
NUMBER_SENTINELS = (9999, 99999, 999999, -999, -9999)
_MONTHS = "jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec"
SHAPE_PATTERNS = {
    "numeric_text": r"^\s*[-+(]?[$€£]?\s*(\d{1,3}(,\d{3})+|\d+)(\.\d*)?\s*%?\)?\s*$",
    "date_iso": (
        r"^\s*\d{4}-\d{1,2}-\d{1,2}([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?)?"
        r"\s*(Z|[+-]\d{2}:?\d{2})?\s*$"
    ),
    "date_slash": (
        r"^\s*\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}"
        r"(\s+\d{1,2}:\d{2}(:\d{2})?\s*([AaPp][Mm])?)?\s*$"
    ),
    "date_named_month": (
        rf"(?i)^\s*(\d{{1,2}}[ -])?({_MONTHS})[a-z]*\.?([ -]\d{{1,2}},?)?[ -]\d{{2,4}}\s*$"
    ),
}  # fmt: skip


def profile_snapshot(snapshot_dir: str | Path, *, save: bool = True) -> SchemaCard:
    """Profile `snapshot_dir` (made by `build_snapshot`); write `schema_card.json` if `save`."""
    out = Path(snapshot_dir)
    manifest = SnapshotManifest.load(out / MANIFEST_FILE)
    con = open_snapshot(out)
    try:
        tables = [profile_table(con, t) for t in manifest.tables]
        for t in tables:
            t.abbreviations = verified_abbreviations(con, t)
            t.per_unit = per_unit_columns(con, t)
        add_keys(con, tables, manifest)
        for t in tables:
            t.own_key_refs = own_key_columns(con, t)
        fks, candidates = trusted_foreign_keys(infer_foreign_keys(con, tables, manifest), tables)
        assign_roles(tables, fks)
        links = find_time_links(con, tables, fks)
        assign_meanings(tables, fks, links)
    finally:
        con.close()
    card = SchemaCard(
        source=manifest.source,
        snapshot_digest=manifest.digest(),
        tables=tables,
        foreign_keys=fks,
        candidate_foreign_keys=candidates,
        time_links=links,
        issues=manifest.issues,
    )
    if save:
        card.save(out / CARD_FILE)
    return card


def json_expr(expr: str, family: str) -> str:
    """SQL turning a value into its card form (see card.py: numbers stay numbers)."""
    if family in ("integer", "boolean"):
        return expr
    if family in ("decimal", "float"):
        return f"CAST({expr} AS DOUBLE)"
    return f"CAST({expr} AS VARCHAR)"


def profile_table(con: duckdb.DuckDBPyConnection, table: SnapshotTable) -> TableCard:
    rel = qi(table.name)
    exprs: list[str] = ["count(*)"]
    slots: list[dict[str, int]] = []
    for col in table.columns:
        slot: dict[str, int] = {}
        for key, expr in _aggregates(col):
            slot[key] = len(exprs)
            exprs.append(expr)
        slots.append(slot)
    row = con.execute(f"SELECT {', '.join(exprs)} FROM {rel}").fetchone()
    assert row is not None
    rows = int(row[0])
    columns = [
        _column_card(con, rel, rows, col, {k: row[i] for k, i in slot.items()})
        for col, slot in zip(table.columns, slots, strict=True)
    ]
    return TableCard(
        name=table.name,
        kind=table.kind,
        comment=table.comment,
        rows=rows,
        source_rows=table.source_rows,
        sample_fraction=table.sample_fraction,
        columns=columns,
    )


def _aggregates(col: SnapshotColumn) -> list[tuple[str, str]]:
    c, fam = qi(col.name), col.family
    out = [
        ("non_null", f"count({c})"),
        ("distinct", f"count(DISTINCT {c})"),
        ("min", json_expr(f"min({c})", fam)),
        ("max", json_expr(f"max({c})", fam)),
    ]
    if fam in NUMERIC_FAMILIES:
        qs = ", ".join(str(q) for q in QUANTILES)
        # On the raw column: a CAST inside the aggregate makes it several times slower.
        out.append(("quantiles", f"quantile_cont({c}, [{qs}])"))
        out.append(("mean", f"avg({c})"))
        nums = ", ".join(str(n) for n in NUMBER_SENTINELS)
        out.append(("sentinel", f"count(*) FILTER (WHERE {c} IN ({nums}))"))
    if fam == "integer" and any(k in col.name.lower() for k in ("time", "hhmm", "clock")):
        out.append(("hhmm", f"count(*) FILTER (WHERE {c} BETWEEN 0 AND 2400 AND {c} % 100 < 60)"))
    if fam == "string":
        for shape, pattern in SHAPE_PATTERNS.items():
            out.append((shape, f"count(*) FILTER (WHERE regexp_matches({c}, {ql(pattern)}))"))
        sentinels = ", ".join(ql(s) for s in TEXT_SENTINELS)
        out += [
            ("padded", f"count(*) FILTER (WHERE {c} <> trim({c}))"),
            ("inner_spaces", f"count(*) FILTER (WHERE {c} LIKE '%  %')"),
            ("empty", f"count(*) FILTER (WHERE {c} = '')"),
            ("sentinel", f"count(*) FILTER (WHERE upper(trim({c})) IN ({sentinels}))"),
            ("spaced", f"count(*) FILTER (WHERE trim({c}) LIKE '% %')"),
        ]
    return out


def _column_card(
    con: duckdb.DuckDBPyConnection, rel: str, rows: int, col: SnapshotColumn, agg: dict[str, Any]
) -> ColumnCard:
    c, fam = qi(col.name), col.family
    non_null = int(agg["non_null"])
    value = json_expr(c, fam)
    top = con.execute(
        f"SELECT {value}, count(*) AS n FROM {rel} WHERE {c} IS NOT NULL "
        f"GROUP BY {c} ORDER BY n DESC, {c} LIMIT {TOP_K}"
    ).fetchall()
    samples = con.execute(
        f"SELECT {value} FROM (SELECT DISTINCT {c} FROM {rel} WHERE {c} IS NOT NULL) "
        f"ORDER BY hash({c}), {c} LIMIT {SAMPLES}"
    ).fetchall()
    shapes = {
        k: int(agg[k])
        for k in (*SHAPE_PATTERNS, "padded", "inner_spaces", "empty", "sentinel")
        if agg.get(k)
    }
    sentinels: list[ValueCount] = []
    if shapes.get("sentinel"):
        sentinels = _sentinel_values(con, rel, c, fam)
    variants: list[list[str]] = []
    if fam == "string" and non_null:
        variant_rows, variants = _variants(con, rel, c)
        if variant_rows:
            shapes["case_space_variant"] = variant_rows
    quantiles = None
    if agg.get("quantiles") is not None:
        quantiles = {
            f"p{round(q * 100):02d}": float(v)
            for q, v in zip(QUANTILES, agg["quantiles"], strict=True)
        }
    hhmm = agg.get("hhmm")
    encoding = "hhmm" if hhmm and hhmm == non_null and (agg["max"] or 0) >= 100 else None
    if fam == "string" and non_null and shapes.get("date_iso") == non_null:
        encoding = "iso_text"
    return ColumnCard(
        name=col.name,
        type=col.type,
        family=fam,
        source_type=col.source_type,
        comment=col.comment,
        null_count=rows - non_null,
        null_rate=(rows - non_null) / rows if rows else 0.0,
        distinct_count=int(agg["distinct"]),
        min=agg["min"],
        max=agg["max"],
        mean=None if agg.get("mean") is None else float(agg["mean"]),
        quantiles=quantiles,
        top_values=[ValueCount(value=v, count=int(n)) for v, n in top],
        samples=[s[0] for s in samples],
        shapes=shapes,
        sentinels=sentinels,
        variants=variants,
        free_text=bool(non_null) and int(agg.get("spaced") or 0) * 2 >= non_null,
        encoding=encoding,
    )


def _sentinel_values(
    con: duckdb.DuckDBPyConnection, rel: str, c: str, fam: str
) -> list[ValueCount]:
    if fam == "string":
        where = f"upper(trim({c})) IN ({', '.join(ql(s) for s in TEXT_SENTINELS)})"
    else:
        where = f"{c} IN ({', '.join(str(n) for n in NUMBER_SENTINELS)})"
    rows = con.execute(
        f"SELECT {json_expr(c, fam)}, count(*) AS n FROM {rel} WHERE {where} "
        f"GROUP BY {c} ORDER BY n DESC, {c} LIMIT {TOP_K}"
    ).fetchall()
    return [ValueCount(value=v, count=int(n)) for v, n in rows]


def _variants(con: duckdb.DuckDBPyConnection, rel: str, c: str) -> tuple[int, list[list[str]]]:
    """Rows whose value has another spelling up to case and spacing, and example groups."""
    norm = f"lower(trim(regexp_replace({c}, '\\s+', ' ', 'g')))"
    groups = con.execute(
        f"SELECT list_sort(list_distinct(list({c}))), count(*) AS n FROM {rel} "
        f"WHERE {c} IS NOT NULL GROUP BY {norm} HAVING count(DISTINCT {c}) > 1 "
        f"ORDER BY n DESC, min({c})"
    ).fetchall()
    total = sum(int(n) for _, n in groups)
    return total, [list(g)[:SAMPLES] for g, _ in groups[:SAMPLES]]
