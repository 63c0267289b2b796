"""Re-issue every published certificate under docs/results/ with the corrected statistics.

Reads each certificate.json (the per-item outcomes it carries) and recomputes the gain, the task's
and every suite's non-inferiority with workgym.certify.comparison (declared estimand, exact and
score tests; decision 0070). Prints, per file, the old and the new reading. Files without
per-item outcomes (compare.json, comparison.json, imitation.json) are listed as not recomputable
here. Nothing is written unless --write.

    PYTHONPATH=src python bench/reissue_results.py [--write]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from workgym.certify import comparison
from workgym.certify.certificate import _conditions, _non_regression, _warnings
from workgym.certify.report_html import render
from workgym.certify.schema import Certificate
from workgym.stats.proportions import clopper_pearson

ROOT = Path(__file__).resolve().parents[1] / "docs" / "results"


def reissue(path: Path, write: bool) -> list[str]:
    cert = Certificate.model_validate_json(path.read_text(encoding="utf-8"))
    f = cert.frozen
    old_gain, old_ni = cert.task.gain, cert.task.non_inferiority
    g = comparison.gain(cert.task.items, f.alpha, f.epochs, f.n_resamples, f.seed, f.estimand)
    ni = comparison.non_inferiority(cert.task.items, f.task_margin, f.alpha)
    out = [
        f"{path.relative_to(ROOT.parent.parent)}: {len(cert.task.items)} items, "
        f"{g.n_clusters} families, K={f.epochs}",
        f"  gain   old {old_gain.method}: {old_gain.diff:+.3f}, lower "
        f"{_n(old_gain.lower)}, p {_n(old_gain.p_value)}, significant {old_gain.significant}, "
        f"MDE {_n(old_gain.mde)}",
        f"  gain   new {g.estimand}/{g.method}: {g.diff:+.3f}, lower {_n(g.lower)}, "
        f"95% [{_n(g.ci95[0])}, {_n(g.ci95[1])}], p {g.p_value:.3g}, smallest p "
        f"{g.smallest_p:.3g}, significant {g.significant}, MDE {_n(g.mde)}",
        f"  task non-inferiority old lower {_n(old_ni.lower)} passed {old_ni.passed}; new "
        f"{ni.method} lower {_n(ni.lower)} -> {ni.status}",
    ]
    suites = []
    for s in cert.suites:
        margin = f.margins.get(s.env.id, f.task_margin)
        new = comparison.non_inferiority(s.items, margin, f.alpha)
        out.append(
            f"  suite {s.env.id} ({len(s.items)} items): old lower "
            f"{_n(s.non_inferiority.lower)} passed {s.non_inferiority.passed}; new {new.method} "
            f"lower {_n(new.lower)} -> {new.status} ({new.reason})"
        )
        suites.append(s.model_copy(update={"non_inferiority": new}))
    ok, detail = _non_regression(suites, f.alpha)
    out.append(f"  non_regression new: {'pass' if ok else 'FAIL'} — {detail}")
    cert.task.gain, cert.task.non_inferiority, cert.suites = g, ni, suites
    cert.task.matched = None if not ni.passed else cert.task.matched
    cert.conditions = _conditions(f, cert.task, suites)
    cert.failed = [c.name for c in cert.conditions if not c.passed]
    cert.verdict = "FAIL" if cert.failed else "PASS"
    cert.warnings = _warnings(f, cert.task, suites)
    out.append(f"  verdict {cert.verdict}; failed: {', '.join(cert.failed) or 'none'}")
    if write:
        path.write_text(cert.to_json(), encoding="utf-8")
        if path.name == "certificate.json":
            (path.parent / "certificate.html").write_text(render(cert), encoding="utf-8")
    return out


def compare_file(path: Path) -> list[str]:
    """A compare.json has per-run rewards, not per-item outcomes: the run intervals are
    re-issued from the counts (K = 1, binary), the paired intervals are withdrawn."""
    data = json.loads(path.read_text(encoding="utf-8"))
    out = [
        f"{path.relative_to(ROOT.parent.parent)}: {data['items']} items, "
        f"{data['families']} families"
    ]
    for run in data["runs"]:
        n = int(data["items"])
        k = round(run["reward"] * n)
        if run["episodes"] == n and abs(k / n - run["reward"]) < 1e-9:
            cp = clopper_pearson(k, n)
            old = run["reward_ci"]
            out.append(
                f"  run {run['label']}: {k}/{n}; old t interval [{old[0]:+.3f}, {old[1]:+.3f}] "
                f"-> exact [{cp.lower:.3f}, {cp.upper:.3f}]"
            )
    for kind in ("matched_cost", "matched_reward", "pairwise"):
        for row in data.get(kind) or []:
            diff = row.get("diff") or row.get("reward")
            if diff and diff.get("method") == "paired_t_clustered":
                out.append(
                    f"  {kind} {row.get('target')} vs {row.get('reference')}: "
                    f"{diff['diff']:+.3f} [{diff['lower']:+.3f}, {diff['upper']:+.3f}] "
                    f"(clustered t, {diff['n_clusters']} families) -> withdrawn: not recomputable "
                    "without per-item outcomes"
                )
    return out


def _n(x: float | None) -> str:
    return "n/a" if x is None else f"{x:+.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--write", action="store_true", help="rewrite the certificate files")
    args = parser.parse_args()
    start = time.perf_counter()
    for path in sorted(ROOT.glob("*/certificate*.json")):
        print("\n".join(reissue(path, args.write)))
    for path in sorted(ROOT.glob("*/compare.json")):
        print("\n".join(compare_file(path)))
    lacking = sorted(
        str(p.relative_to(ROOT.parent.parent))
        for p in ROOT.glob("*/*.json")
        if not p.name.startswith("certificate")
        and p.name in ("compare.json", "comparison.json", "imitation.json")
    )
    print("no per-item paired outcomes (not re-issued here): " + ", ".join(lacking))
    print(f"wall {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
