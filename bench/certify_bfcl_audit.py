"""Audit of the BFCL suite's scorer (numbers quoted in docs/certificate.md).

Run with the [suites] extra: `python bench/certify_bfcl_audit.py`. Where BFCL's own checker is
importable (bfcl-eval installed with its dependencies) it also prints the cross-check table and
the reasons for every kind of disagreement.
"""

from __future__ import annotations

import re
import time
from collections import Counter

from workgym.envs.suites.bfcl import build_tasks
from workgym.envs.suites.bfcl_audit import audit, crosscheck


def reason_kind(reason: str) -> str:
    reason = re.sub(
        r"^call \d+ \([^)]*\): ",
        "",
        reason.split(": ", 1)[-1] if "arguments." in reason else reason,
    )
    for key in (
        "must be one of",
        "must be",
        "not a declared argument",
        "required argument is missing",
        "is not an accepted value",
        "is missing",
    ):
        if key in reason:
            return key
    return reason[:60]


def main() -> None:
    started = time.perf_counter()
    tasks = build_tasks(None, consistent=False)
    kept = build_tasks(None)
    a = audit(tasks)
    print(f"items in categories: {len(tasks)} ({a.items} with expected calls)")
    print(f"suites/bfcl-full keeps {len(kept)} (items whose answer fits BFCL's own schema)")
    share = a.answers_correct / a.items
    print(
        f"BFCL answers (first fitting value) correct: {a.answers_correct}/{a.items} = {share:.4f}"
    )
    share = a.options_correct / a.options
    print(f"every listed value correct: {a.options_correct}/{a.options} = {share:.4f}")
    for name in a.mutations:
        print(f"mutation {name}: scored wrong {a.mutations_wrong[name]}/{a.mutations[name]}")
    print("answers scored wrong (BFCL's answer breaks BFCL's own schema):")
    for tid, why in a.answer_failures:
        print(f"  {tid}: {why}")
    by_reason = Counter(reason_kind(r) for _, _, r in a.option_failures)
    print("listed values scored wrong, by reason:", dict(by_reason))
    examples: dict[tuple[str, bool, bool], list[str]] = {}
    counts = crosscheck(tasks, examples)
    if counts is None:
        print("BFCL's checker is not importable here: no cross-check")
    else:
        print("cross-check (kind, workgym, BFCL): count")
        for key, n in sorted(counts.items()):
            print(f"  {key}: {n}")
        for key, rows in sorted(examples.items()):
            kinds = dict(Counter(reason_kind(r) for r in rows))
            print(f"disagreements {key}: {len(rows)}; by reason {kinds}")
            for row in rows[:3]:
                print(f"    e.g. {row}")
    print(f"time: {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
