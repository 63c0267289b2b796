"""A seeded sample of generated warehouse tasks with their gold SQL re-run, for judging by hand.

    .venv/bin/python bench/warehouse_samples.py ENV_DIR [--n 30] [--seed 17] > samples.md

Prints, per sampled task: family, prompt, reference SQL, the SQL's result re-run now on the
environment's snapshot (or the task's planted copy), and the stored gold answer, so a reader can
judge whether each task is natural, unambiguous and correct. The judgement itself is a person's
(docs/warehouse-samples.md); this script only gathers what they need and says whether the re-run
agrees with the stored answer.
"""

from __future__ import annotations

import argparse
import json
import random
from decimal import Decimal
from pathlib import Path

from workgym.core.tasks import TaskSet
from workgym.verifiers.sql_exec import execute_sql


def _agrees(answer: dict[str, object], rows: list[tuple[object, ...]], decimals: int) -> str:
    kind = answer.get("kind")
    if kind in ("integer", "number") and len(rows) == 1:
        got = rows[0][0]
        want = answer.get("value")
        if isinstance(got, int | float | Decimal) and isinstance(want, int | float):
            same = round(float(got), decimals) == round(float(want), decimals)
            return "yes" if same else f"NO ({got})"
    if kind in ("keys", "top_k"):
        got_keys = [str(r[0]) for r in rows]
        want_keys = [str(v) for v in answer.get("values", [])]  # type: ignore[attr-defined]
        same = got_keys == want_keys if kind == "top_k" else sorted(got_keys) == sorted(want_keys)
        return "yes" if same else "NO"
    return "n/a"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("env", type=Path)
    parser.add_argument("--n", type=int, default=30)
    parser.add_argument("--seed", type=int, default=17)
    args = parser.parse_args()
    if not (args.env / "tasks.jsonl").is_file():
        parser.error(f"{args.env} holds no tasks.jsonl; give a folder `workgym generate` wrote")
    tasks = [t for t in TaskSet.from_jsonl(args.env / "tasks.jsonl")]
    rng = random.Random(args.seed)
    sample = rng.sample(tasks, min(args.n, len(tasks)))
    sample.sort(key=lambda t: (int(str(t.meta["family"])[1:]), t.id))
    for i, task in enumerate(sample, 1):
        meta = task.meta
        print(f"### {i}. {meta['family']} {meta.get('shape', '')} `{task.id}`\n")
        print(f"> {task.prompt}\n")
        sql = meta.get("reference_sql")
        if sql:
            database = args.env / str(meta.get("database") or "snapshot.duckdb")
            # every row for the comparison, the first 12 for the reader
            result = execute_sql(str(sql), database, timeout_s=60.0, max_rows=100_000)
            print(f"```sql\n{sql}\n```\n")
            shown = list(result.rows[:12]) if result.ok else result.error
            print(f"re-run: {shown!s:.400}\n")
            print(f"stored answer: `{json.dumps(task.answer, default=str)[:300]}`; ", end="")
            decimals = int(meta.get("answer_spec", {}).get("decimals") or 0)
            rows = list(result.rows) if result.ok else []
            print(f"agrees: {_agrees(task.answer, rows, decimals)}\n")
        else:
            print(f"stored answer: `{json.dumps(task.answer, default=str)[:300]}`\n")
        if meta.get("check_sql"):
            print(f"premise check: `{meta['check_sql']}`\n")


if __name__ == "__main__":
    main()
