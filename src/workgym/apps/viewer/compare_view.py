"""Two runs on the same tasks: paired per-task differences, and the tasks where they disagree.

Pairing by task is what makes a comparison of two policies sharp: task difficulty cancels in
d_i = reward_B(i) - reward_A(i). Epochs of a task are averaged first (the task is the unit), the
interval is the paired t interval clustered by family when there are several families
(workgym.stats.tests.paired_t_test), and the list shows where the runs actually differ.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workgym.apps.viewer.queries import RunQueries
from workgym.run.rundir import read_spec

_PER_TASK = """
SELECT task_id, any_value(family) AS family, avg(reward) AS reward, avg(success::INT) AS success,
  count(*) AS n, avg(tokens) AS tokens, min(epoch) AS first_epoch, mode(status) AS status
FROM {table} WHERE task_id IS NOT NULL GROUP BY task_id
"""


def compare_runs(
    queries: RunQueries,
    a: Path,
    b: Path,
    *,
    only_disagreements: bool = True,
    offset: int = 0,
    limit: int = 100,
) -> dict[str, Any]:
    """Paired summary of B - A over common tasks, plus one page of per-task rows."""
    ta, tb = queries.table(a), queries.table(b)
    spec_a, spec_b = read_spec(a), read_spec(b)
    cur = queries.cursor()
    joined = (
        f"WITH a AS ({_PER_TASK.format(table=ta)}), b AS ({_PER_TASK.format(table=tb)}) "
        "SELECT a.task_id, a.family, a.reward AS reward_a, b.reward AS reward_b, "
        "b.reward - a.reward AS diff, a.success AS success_a, b.success AS success_b, "
        "a.n AS n_a, b.n AS n_b, a.tokens AS tokens_a, b.tokens AS tokens_b, "
        "a.first_epoch AS epoch_a, b.first_epoch AS epoch_b, a.status AS status_a, "
        "b.status AS status_b FROM a JOIN b USING (task_id)"
    )
    counts = cur.execute(
        f"WITH a AS ({_PER_TASK.format(table=ta)}), b AS ({_PER_TASK.format(table=tb)}) "
        "SELECT (SELECT count(*) FROM a JOIN b USING (task_id)), "
        "(SELECT count(*) FROM a ANTI JOIN b USING (task_id)), "
        "(SELECT count(*) FROM b ANTI JOIN a USING (task_id))"
    ).fetchone()
    n_common, only_a, only_b = (int(x) for x in counts)
    pairs = cur.execute(
        f"SELECT reward_a, reward_b, family, success_a, success_b FROM ({joined})"
    ).fetchall()
    wins = sum(1 for ra, rb, *_ in pairs if rb > ra)
    losses = sum(1 for ra, rb, *_ in pairs if rb < ra)
    flips = {
        "fail_to_pass": sum(1 for *_, sa, sb in pairs if sa < 0.5 <= sb),
        "pass_to_fail": sum(1 for *_, sa, sb in pairs if sb < 0.5 <= sa),
    }
    test: dict[str, Any] | None = None
    if len(pairs) >= 2:
        import numpy as np

        from workgym.swarm.points import paired

        families = [f or "" for _, _, f, _, _ in pairs]
        result = paired(
            np.array([rb for _, rb, *_ in pairs], dtype=float),
            np.array([ra for ra, *_ in pairs], dtype=float),
            families,
        )
        test = {
            "diff": result.diff,
            "ci95": [result.lower, result.upper],
            "p_value": result.p_value,
            "method": result.method,
            "n": result.n,
            "n_clusters": result.n_clusters,
        }
    where = "WHERE diff <> 0 OR success_a <> success_b" if only_disagreements else ""
    total = cur.execute(f"SELECT count(*) FROM ({joined}) {where}").fetchone()
    rows = cur.execute(
        f"SELECT * FROM ({joined}) {where} ORDER BY abs(diff) DESC, task_id LIMIT ? OFFSET ?",
        [max(1, min(limit, 500)), max(0, offset)],
    )
    names = [d[0] for d in rows.description]
    warnings = []
    if spec_a.env_hash != spec_b.env_hash:
        warnings.append(
            "the runs used different environment versions (hashes differ): tasks with the same "
            "id may not be the same task"
        )
    if only_a or only_b:
        warnings.append(
            f"{only_a} task(s) only in A and {only_b} only in B are left out of the pairing"
        )
    return {
        "a": {"model": spec_a.policy.get("model"), "split": spec_a.split, "env": spec_a.env_id},
        "b": {"model": spec_b.policy.get("model"), "split": spec_b.split, "env": spec_b.env_id},
        "n_common": n_common,
        "only_a": only_a,
        "only_b": only_b,
        "b_better": wins,
        "a_better": losses,
        "ties": len(pairs) - wins - losses,
        "flips": flips,
        "test": test,
        "warnings": warnings,
        "total": int(total[0]),
        "offset": offset,
        "rows": [dict(zip(names, r, strict=True)) for r in rows.fetchall()],
    }
