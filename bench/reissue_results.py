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
import time
from pathlib import Path

from workgym.certify import comparison
from workgym.certify.certificate import _non_regression
from workgym.certify.schema import Certificate

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
        f"95% [{_n(g.ci95[0])}, {_n(g.ci95[1])}], p {_n(g.p_value)}, smallest p "
        f"{_n(g.smallest_p)}, significant {g.significant}, MDE {_n(g.mde)}",
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
    if write:
        cert.task.gain, cert.task.non_inferiority, cert.suites = g, ni, suites
        path.write_text(cert.to_json(), encoding="utf-8")
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
