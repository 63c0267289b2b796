"""The task lint's counts per rule, and the meanings it typed, on a generated warehouse.

    .venv/bin/python bench/warehouse_lint.py --env DIR [--env DIR ...]
    .venv/bin/python bench/warehouse_lint.py --db builtin:nycflights13 --out /tmp/flights [--seed 0]
    .venv/bin/python bench/warehouse_lint.py --tpcds-sf 0.1 --out /tmp/tpcds [--seed 0]

With `--db` it first generates the environment (`workgym generate warehouse`, default options
and the given seed) into `--out`; `--tpcds-sf` first makes a TPC-DS DuckDB file of that scale
factor beside `--out` with the duckdb-extension-tpcds package (docs/warehouse.md). With `--env`
it lints an environment already generated (its card typed again by the current code, the
per-unit identities and own-key references checked again on its snapshot). Prints the
command, the seed, the wall times, then per warehouse: the column meanings and table grains of
its card, the counts of every lint rule (failing and warning rules, schema/meaning.py and
runtime/lint.py) and a few example task ids with their question. Numbers, not assertions.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

import duckdb

from workgym.core.tasks import Task
from workgym.envs.warehouse.runtime.env import WarehouseEnv
from workgym.envs.warehouse.runtime.lint import RULES, RULES_NAME, WARNING_RULES, Linter, lint_tasks
from workgym.envs.warehouse.schema.identities import per_unit_columns
from workgym.envs.warehouse.schema.meaning import assign_meanings
from workgym.envs.warehouse.schema.own_key_values import own_key_columns


def lint_env(path: Path, examples: int) -> None:
    started = time.perf_counter()
    env = WarehouseEnv(path)
    card = env.card
    con = duckdb.connect(str(path / "snapshot.duckdb"), read_only=True)
    try:  # a card profiled before decision 0191 has no per-unit columns: find them again
        for table in card.tables:
            table.per_unit = per_unit_columns(con, table)
            table.own_key_refs = own_key_columns(con, table)
    finally:
        con.close()
    assign_meanings(card.tables, card.foreign_keys, card.time_links)  # by the current code
    report = lint_tasks(env.taskset, card)
    wall = time.perf_counter() - started
    cfg = env.config
    print(
        f"\n== {path} (source {cfg.source}, seed {cfg.seed}): "
        f"{report.tasks} tasks, lint {wall:.1f} s"
    )
    meanings = collections.Counter(c.meaning for t in card.tables for c in t.columns)
    print("column meanings:", dict(sorted(meanings.items(), key=lambda kv: str(kv[0]))))
    print("table grains:", {t.name: t.grain for t in card.tables})
    print("per-unit columns:", {t.name: t.per_unit for t in card.tables if t.per_unit})
    print("own-key references:", {t.name: t.own_key_refs for t in card.tables if t.own_key_refs})
    print(f"lint {RULES_NAME}:")
    for rule in RULES:
        kind = "warning" if rule in WARNING_RULES else "failing"
        print(f"  {rule:26s} {kind:8s} {report.counts.get(rule, 0):4d}")
    linter = Linter(card)
    by_id = {t.id: t for t in env.taskset}
    raw = [linter.raw_identifier(_prompt(by_id[i])) for i in by_id]
    tables = sum(1 for r in raw if r is not None and r in linter.tables)
    columns = sum(1 for r in raw if r is not None and r not in linter.tables)
    print(f"raw identifiers (first per task, all families): {columns} columns, {tables} tables")
    for rule in WARNING_RULES:
        for task_id in report.examples.get(rule, [])[:examples]:
            task = by_id[task_id]
            prompt = task.prompt if isinstance(task.prompt, str) else str(task.prompt)
            extra = linter.raw_identifier(prompt) if rule == "raw_identifier_in_prompt" else ""
            first = prompt.split("Answer with")[0].strip()[:220]
            print(
                f"  [{rule}] {task_id} {task.meta.get('family')}/{task.meta.get('shape')}"
                f" {extra or ''}: {first}"
            )


def _prompt(task: Task) -> str:
    return task.prompt if isinstance(task.prompt, str) else str(task.prompt)


def make_tpcds(path: Path, sf: float) -> str:
    """A TPC-DS DuckDB file made by dsdgen at scale `sf` (kept if it is already there)."""
    import duckdb
    import duckdb_extension_tpcds as ext

    if not path.exists():
        started = time.perf_counter()
        binary = Path(ext.__file__).parent / "extensions" / f"v{duckdb.__version__}"
        con = duckdb.connect(str(path))
        con.execute(f"LOAD '{binary / 'tpcds.duckdb_extension'}'")
        con.execute(f"CALL dsdgen(sf={sf})")
        con.close()
        print(f"dsdgen sf={sf:g} into {path} in {time.perf_counter() - started:.1f} s")
    return f"duckdb://{path}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--env", action="append", type=Path, default=[])
    ap.add_argument("--db", help="generate from this source first (with --out)")
    ap.add_argument("--tpcds-sf", type=float, help="make a TPC-DS file of this scale first")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--examples", type=int, default=3)
    ap.add_argument(
        "--light",
        action="store_true",
        help="generate without fuzz suites and investigations (F9): less disk and time",
    )
    args = ap.parse_args()
    print("command:", " ".join([Path(sys.executable).name, *sys.argv]))
    print("seed:", args.seed)
    envs = list(args.env)
    if args.tpcds_sf is not None:
        if args.out is None:
            ap.error("--tpcds-sf needs --out DIR")
        args.db = make_tpcds(args.out.parent / f"tpcds_sf{args.tpcds_sf:g}.duckdb", args.tpcds_sf)
    if args.db:
        if args.out is None:
            ap.error("--db needs --out DIR")
        from workgym.envs.warehouse.generate.pipeline import GenerateOptions, generate

        started = time.perf_counter()
        opts = GenerateOptions(db=args.db, out=args.out, seed=args.seed)
        if args.light:
            opts = opts.model_copy(update={"suites": False, "investigations": False})
        print("options:", "suites and investigations off" if args.light else "defaults")
        generate(opts, overwrite=True)
        print(f"generated {args.db} into {args.out} in {time.perf_counter() - started:.1f} s")
        envs.append(args.out)
    if not envs:
        ap.error("give --env DIR or --db URL --out DIR")
    for path in envs:
        lint_env(path, args.examples)


if __name__ == "__main__":
    main()
