"""Does each anti-join task's fuzz suite separate the gold from its answer's keys pasted as the
filter (`sql-in-gold-ids`) and from its answer pasted as literals (`sql-gold-literals`)?

For every SQL-answer task of a generated warehouse environment (TPC-DS: its 20 F6 anti-joins),
rebuild the task's fuzz suite with the code on PYTHONPATH into a fresh cache (the environment is
only read), build both probes' queries from the real answer, and ask the verifier whether they
fail on the real database plus the suite. Prints one line per task and the totals; asserts
nothing. Decision 0162 ran it against main (before) and the fix (after) on the same
environment:

    PYTHONPATH=src python bench/fuzz_pasted_keys.py /tmp/m40/tpcds --cache /tmp/fuzz-after
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from workgym.envs.warehouse.runtime.answers import SqlSpec
from workgym.envs.warehouse.runtime.env import sql_spec
from workgym.guards.capabilities import ResultSet
from workgym.guards.catalog_sqltext import GoldLiterals, InGoldIds
from workgym.verifiers.sql_exec import execute_sql
from workgym.verifiers.sql_fuzz import build_suite, distinguishes


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("env", type=Path, help="a generated warehouse environment directory")
    p.add_argument("--cache", type=Path, required=True, help="where the rebuilt suites go")
    p.add_argument("--seed", type=int, default=0, help="the suites' seed (generation's --seed)")
    args = p.parse_args()
    snapshot = args.env / "snapshot.duckdb"
    totals = {"tasks": 0, "in-gold-ids passes": 0, "gold-literals passes": 0, "fallbacks": 0}
    started = time.perf_counter()
    for line in (args.env / "tasks.jsonl").read_text().splitlines():
        task = json.loads(line)
        spec = task["meta"]["answer_spec"]
        if "gold_sql" not in spec:
            continue
        gold_sql = spec["gold_sql"]
        answer_spec = sql_spec(SqlSpec.model_validate(spec.get("sql", {})))
        suite = build_suite(
            snapshot, gold_sql, cache_dir=args.cache, spec=answer_spec, seed=args.seed,
            fingerprint="bench",
        )  # fmt: skip
        real = execute_sql(gold_sql, snapshot, timeout_s=120.0, max_rows=10_000)
        gold = ResultSet(columns=real.columns, rows=[list(r) for r in real.rows])
        passed = {}
        for probe in (InGoldIds(), GoldLiterals()):
            queries = probe.queries(gold_sql, gold, "duckdb")
            passed[probe.name] = any(
                not distinguishes(gold_sql, q, suite.databases, answer_spec) for q in queries
            )
        totals["tasks"] += 1
        totals["in-gold-ids passes"] += passed["sql-in-gold-ids"]
        totals["gold-literals passes"] += passed["sql-gold-literals"]
        totals["fallbacks"] += suite.fallback is not None
        print(
            task["id"], task["meta"]["family"], ",".join(suite.strategies),
            "in-gold-ids PASSES (bad)" if passed["sql-in-gold-ids"] else "in-gold-ids caught",
            "gold-literals PASSES (bad)" if passed["sql-gold-literals"] else "gold-literals caught",
            f"fallback: {suite.fallback}" if suite.fallback else "", flush=True,
        )  # fmt: skip
    print(json.dumps(totals), f"wall {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
