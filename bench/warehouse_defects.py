"""Counts of issue 40's defect classes over every task of generated warehouse environments.

    python bench/warehouse_defects.py ENV_DIR [ENV_DIR ...]

docs/warehouse-samples.md round 6 judged 30 tasks per warehouse by hand; this script counts the
classes that judging found over *all* tasks, from each task's prompt and gold SQL re-run on the
environment's snapshot, so a generator fix can be re-measured on the same environments without
judging again. The rules are text and SQL heuristics written for the defects seen, not a lint:
a count is a lower bound for its class (what a judge catches but these patterns miss is not
counted) and each rule says what it matches. The task lint (`workgym check`) is the generator's
own measurement; where the two disagree, this one was written from a person's judgement.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

import duckdb

QUESTION_END = " Answer with submit_answer"
OPTIONAL_TEXT = re.compile(r"\b(description|comment|remarks|note|notes)\b")
F6_SHAPE = re.compile(
    r"SELECT (r\.\w+) FROM (\w+) AS r WHERE NOT EXISTS\((.*)\)( AND (.*?))? ORDER BY"
)
ONE_COLUMN_JOIN = re.compile(r"JOIN (\w+) AS (\w+) ON \w+\.(\w+) = \2\.(\w+)(?! AND)")
F2_CODE_GROUP = re.compile(r"GROUP BY (?:\w+\.)?(\w*version\w*|\w*_code|code)\b", re.IGNORECASE)
MONTH_OF = re.compile(r"MONTH\((?:CAST\()?(?:(\w+)\.)?(\w+)")

RULES: dict[str, str] = {
    "record_talk": "the question says 'record(s)'",
    "table_column_in_text": "a lower-case `table.column` appears before the answer format",
    "refers_to": "key-path phrasing: 'refers to'",
    "authorities_name": "auth_name read out as 'authorities name'",
    "crs_as_cr": "'crs' singularised to 'cr'",
    "f2_groups_by_code_or_version": "F2 groups by a column named *version*, *_code or code",
    "f6_near_total": "F6 answer is 90% or more of its outer set",
    "f6_outer_one_row": "F6 outer set has at most one row",
    "f7_optional_text": "F7 on a description/comment/remarks/note column",
    "half_composite_join": "a join on one column into a table whose declared key has several",
    "f4_year_precision_months": "F4 buckets by month a date column that is 1 January in 80%+ rows",
}


def _question(prompt: str) -> str:
    return prompt.split(QUESTION_END)[0]


def _composite_keys(env: Path) -> set[str]:
    """Tables whose declared key has several columns (the schema card keeps the source's keys;
    the snapshot's tables carry no constraints)."""
    card = json.loads((env / "schema_card.json").read_text())
    return {
        str(table["name"])
        for table in card["tables"]
        for key in table.get("keys") or []
        if key.get("source") == "declared" and len(key["columns"]) > 1
    }


def _f6_shares(con: duckdb.DuckDBPyConnection, sql: str) -> tuple[int, int] | None:
    """(answer rows, outer rows) of an F6 anti-join, the outer set being its filter alone."""
    match = F6_SHAPE.match(sql)
    if not match:
        return None
    outer_where = match.group(5) or "TRUE"
    row = con.execute(f"SELECT COUNT(*) FROM {match.group(2)} AS r WHERE {outer_where}").fetchone()
    outer = int(row[0]) if row else 0
    return len(con.execute(sql).fetchall()), outer


def _jan_first_share(con: duckdb.DuckDBPyConnection, table: str, column: str) -> float:
    row = con.execute(
        f'SELECT COUNT(*), COUNT(*) FILTER (WHERE strftime(TRY_CAST("{column}" AS DATE), '
        f"'%m-%d') = '01-01') FROM \"{table}\" WHERE \"{column}\" IS NOT NULL"
    ).fetchone()
    total, first = (int(row[0]), int(row[1])) if row else (0, 0)
    return first / total if total else 0.0


def count_defects(env: Path) -> tuple[Counter[str], Counter[str], Counter[str]]:
    """(family counts, defect counts, tasks per table) over every task in `env`."""
    families: Counter[str] = Counter()
    defects: Counter[str] = Counter({name: 0 for name in RULES})
    tables: Counter[str] = Counter()
    with duckdb.connect(str(env / "snapshot.duckdb"), read_only=True) as con:
        composite = _composite_keys(env)
        for table in con.execute("SELECT table_name FROM duckdb_tables()").fetchall():
            tables[str(table[0])] = 0
        jan_first: dict[tuple[str, str], float] = {}
        for line in (env / "tasks.jsonl").read_text().splitlines():
            task = json.loads(line)
            meta = task["meta"]
            family = str(meta["family"])
            families[family] += 1
            question = _question(str(task["prompt"]))
            sql = str(meta.get("reference_sql") or "")
            found = {
                "record_talk": bool(re.search(r"\brecords?\b", question)),
                "table_column_in_text": bool(re.search(r"\b[a-z_]+\.[a-z_][a-z_0-9]*\b", question)),
                "refers_to": "refers to" in question,
                "authorities_name": "authorities name" in question,
                "crs_as_cr": bool(re.search(r"\bcr\b", question)),
                "f2_groups_by_code_or_version": family == "F2" and bool(F2_CODE_GROUP.search(sql)),
                "f7_optional_text": family == "F7" and bool(OPTIONAL_TEXT.search(sql)),
                "half_composite_join": any(
                    m.group(1) in composite for m in ONE_COLUMN_JOIN.finditer(sql)
                ),
            }
            for name, hit in found.items():
                defects[name] += int(hit)
            for table in set(re.findall(r"(?:FROM|JOIN)\s+(\w+)", sql)):
                if table in tables:
                    tables[table] += 1
            if family == "F6" and sql:
                shares = _f6_shares(con, sql)
                if shares:
                    answer, outer = shares
                    defects["f6_near_total"] += int(outer > 0 and answer >= 0.9 * outer)
                    defects["f6_outer_one_row"] += int(outer <= 1)
            if family == "F4" and sql:
                table_match = re.search(r"FROM (\w+)", sql)
                month = MONTH_OF.search(sql)
                if table_match and month:
                    # a date reached through a header or date dimension is qualified by its table
                    key = (month.group(1) or table_match.group(1), month.group(2))
                    if key not in jan_first:
                        jan_first[key] = _jan_first_share(con, *key)
                    defects["f4_year_precision_months"] += int(jan_first[key] >= 0.8)
    return families, defects, tables


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("envs", nargs="+", type=Path)
    args = parser.parse_args()
    for env in args.envs:
        families, defects, tables = count_defects(env)
        total = sum(families.values())
        print(f"## {env} ({total} tasks)")
        print("  families: " + ", ".join(f"{k} {v}" for k, v in sorted(families.items())))
        for name, count in defects.items():
            print(f"  {name}: {count}  ({RULES[name]})")
        unused = sorted(t for t, n in tables.items() if n == 0)
        print(f"  tables in no task's gold SQL: {', '.join(unused) or 'none'}")


if __name__ == "__main__":
    main()
