"""Re-issue every published certificate under docs/results/ with the corrected statistics.

Reads each certificate.json (the per-item outcomes it carries) and recomputes the gain, the task's
and every suite's non-inferiority with workgym.certify.comparison (declared estimand, exact and
score tests; decision 0070). Also: sft_patch.json (its arms' verdicts and suite bounds, from the
certificates beside it), comparison.json (bench/playbook_real.py: gain and token-matched
statement from the per-task scores it carries), compare.json (run intervals exact from the
counts) and swarm_study.json: these carry no per-item paired outcomes, so their clustered-t
paired intervals are withdrawn (set to null, the point estimate kept). Prints, per file, the old
and the new reading. Nothing is written unless --write.

    PYTHONPATH=src python bench/reissue_results.py [--write]
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path
from typing import Any

from workgym.certify import comparison
from workgym.certify.certificate import _conditions, _non_regression, _warnings
from workgym.certify.comparison import gain_of
from workgym.certify.report_html import render
from workgym.certify.schema import Certificate
from workgym.stats.proportions import clopper_pearson
from workgym.train.playbook.report import token_efficiency

ROOT = Path(__file__).resolve().parents[1] / "docs" / "results"


def reissue(path: Path, write: bool) -> list[str]:
    return reissue_cert(path, write)[0]


def reissue_cert(path: Path, write: bool) -> tuple[list[str], Certificate]:
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
    return out, cert


def sft_patch_file(path: Path, write: bool) -> list[str]:
    """sft_patch.json copies each arm's verdict and suite bounds from its certificate, which sits
    next to it (certificate-<arm>.json): both are recomputed from that certificate's items."""
    data = json.loads(path.read_text(encoding="utf-8"))
    out = [f"{path.relative_to(ROOT.parent.parent)}:"]
    for arm, row in data["arms"].items():
        _, cert = reissue_cert(path.parent / f"certificate-{arm}.json", write=False)
        f = cert.frozen
        out.append(f"  {arm}: verdict {row['verdict']} -> {cert.verdict}")
        row["verdict"] = cert.verdict
        for s in cert.suites:
            if s.env.id not in row["suites"]:
                continue
            ni = comparison.non_inferiority(
                s.items, f.margins.get(s.env.id, f.task_margin), f.alpha
            )
            old = row["suites"][s.env.id]
            out.append(
                f"  {arm} suite {s.env.id}: diff {old['diff']:+.3f}, old lower {_n(old['lower'])} "
                f"non_inferior {old['non_inferior']} -> {ni.method} lower {_n(ni.lower)}, "
                f"{ni.status}"
            )
            row["suites"][s.env.id] = {
                "diff": ni.diff,
                "lower": ni.lower,
                "non_inferior": ni.passed,
                "status": ni.status,
                "method": ni.method,
            }
    if write:
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return out


def playbook_comparison(path: Path, write: bool) -> list[str]:
    """comparison.json (bench/playbook_real.py) carries every arm's per-task scores: the gain and
    the token-matched statement are recomputed with the functions that script calls now."""
    data = json.loads(path.read_text(encoding="utf-8"))
    te = data["token_efficiency"]
    cand, base = data["held_out"][te["candidate"]], data["held_out"][te["baseline"]]
    epochs = max(1, round(cand["episodes"] / len(cand["tasks"])))
    g = gain_of(cand["scores"], base["scores"], cand["families"], epochs)
    eff = token_efficiency(
        candidate=te["candidate"],
        baseline=te["baseline"],
        candidate_scores=cand["scores"],
        baseline_scores=base["scores"],
        candidate_tpt=cand["tokens_per_task"],
        baseline_tpt=base["tokens_per_task"],
        training_tokens=int(te["training_tokens"]),
        margin=float(te["margin"]),
        alpha=float(te["alpha"]),
        where=te["where"],
    )
    old = data["gain"]
    out = [
        f"{path.relative_to(ROOT.parent.parent)}: {len(cand['tasks'])} tasks, K={epochs}",
        f"  gain old {old['method']}: {old['diff']:+.3f}, lower {_n(old['lower'])}, MDE "
        f"{_n(old.get('mde'))} -> {g.estimand}/{g.method}: {g.diff:+.3f}, lower {_n(g.lower)}, "
        f"p {g.p_value:.3g}, MDE {_n(g.mde)}",
        f"  token-matched old {te['method']}: lower {_n(te['lower'])}, non_inferior "
        f"{te['non_inferior']} -> {eff.method}: lower {_n(eff.lower)}, non_inferior "
        f"{eff.non_inferior}",
        f"  statement now: {eff.statement}",
    ]
    data["gain"] = {
        "diff": g.diff,
        "lower": g.lower,
        "p_value": g.p_value,
        "n": g.n_items,
        "method": g.method,
        "estimand": g.estimand,
        "mde": g.mde,
    }
    data["token_efficiency"] = eff.model_dump(mode="json")
    if write:
        path.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
    return out


def playbook_report_md(path: Path, write: bool) -> list[str]:
    """A playbook training report.md prints the dev-select token-matched statement. It carries no
    per-task scores, but where both arms' dev-select reward and SE are 0.000 every task scored 0
    in both (rewards lie in [0, 1]), so the per-task scores are known and the statement is
    recomputed with :func:`token_efficiency`; otherwise it is listed as not recomputable."""
    text = path.read_text(encoding="utf-8")
    rel = path.relative_to(ROOT.parent.parent)
    best = re.search(
        r"best checkpoint: iteration (\d+) \((\w+)\), dev-select reward ([\d.]+) \(SE ([\d.]+)\), "
        r"(\d+) tokens per task",
        text,
    )
    said = re.search(
        r"## Token efficiency\n\n(.+?) matches (.+?) at \d+% .*?margin -([\d.]+), "
        r"n=(\d+) tasks, (.+)\); it ",
        text,
    )
    spent = re.search(r"training tokens: ([\d,]+)", text)
    if not (best and said and spent):
        return [f"{rel}: no zero-variance token-matched statement to re-issue"]
    row = re.search(rf"\| {re.escape(said.group(2))} \| ([\d.]+) \| ([\d.]+) \| (\d+) \|", text)
    if row is None or {best.group(3), best.group(4), row.group(1), row.group(2)} != {"0.000"}:
        return [f"{rel}: dev-select statement not recomputable (no per-task scores)"]
    n = int(said.group(4))
    eff = token_efficiency(
        candidate=said.group(1),
        baseline=said.group(2),
        candidate_scores=[0.0] * n,
        baseline_scores=[0.0] * n,
        candidate_tpt=float(best.group(5)),
        baseline_tpt=float(row.group(3)),
        training_tokens=int(spent.group(1).replace(",", "")),
        margin=float(said.group(3)),
        where=said.group(5),
    )
    old = text[said.start(1) : text.index("\n", said.start(1))]
    new = (
        f"{eff.statement}\n\n(Re-issued, issue 33, by bench/reissue_results.py: both arms scored 0 "
        f"on all {n} dev-select tasks, so the published 'matches ... lower bound +0.000' rested on "
        f'zero variance; it read: "{old}")'
    )
    if write:
        path.write_text(text.replace(old, new), encoding="utf-8")
    return [f"{rel}: dev-select statement -> {eff.statement}"]


WITHDRAWN = (
    "withdrawn (issue 33): a clustered t over {g} families, not recomputable without per-item "
    "outcomes"
)


def _withdraw(node: Any, where: str, out: list[str]) -> None:
    """Every paired_t_clustered result in a swarm file loses its interval and p (the point
    estimate stays); the verdict beside it says it was withdrawn."""
    if isinstance(node, dict):
        for key, val in node.items():
            if isinstance(val, dict) and val.get("method") == "paired_t_clustered":
                out.append(
                    f"  {where}/{key}: {val['diff']:+.3f} [{_n(val.get('lower'))}, "
                    f"{_n(val.get('upper'))}] -> interval withdrawn"
                )
                val.update(lower=None, upper=None, p_value=None)
                val["method"] = WITHDRAWN.format(g=val.get("n_clusters"))
                if isinstance(node.get("verdict"), str) and "withdrawn" not in node["verdict"]:
                    node["verdict"] += " [withdrawn, issue 33: it rested on that interval]"
            else:
                _withdraw(val, f"{where}/{key}", out)
    elif isinstance(node, list):
        for i, val in enumerate(node):
            _withdraw(val, f"{where}[{i}]", out)


def compare_file(path: Path, write: bool = False) -> list[str]:
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
            run["reward_ci"] = [cp.lower, cp.upper]
            run["reward_ci_method"] = "clopper_pearson (issue 33)"
            out.append(
                f"  run {run['label']}: {k}/{n}; old t interval [{old[0]:+.3f}, {old[1]:+.3f}] "
                f"-> exact [{cp.lower:.3f}, {cp.upper:.3f}]"
            )
    _withdraw(data, "", out)
    if write:
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return out


def swarm_study_file(path: Path, write: bool) -> list[str]:
    """swarm_study.json repeats the compare.json answers: the same intervals are withdrawn."""
    data = json.loads(path.read_text(encoding="utf-8"))
    out = [f"{path.relative_to(ROOT.parent.parent)}:"]
    _withdraw(data, "", out)
    if write:
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
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
    for path in sorted(ROOT.glob("*/sft_patch.json")):
        print("\n".join(sft_patch_file(path, args.write)))
    for path in sorted(ROOT.glob("*/comparison.json")):
        print("\n".join(playbook_comparison(path, args.write)))
    for path in sorted(ROOT.glob("*/report.md")):
        print("\n".join(playbook_report_md(path, args.write)))
    for path in sorted(ROOT.glob("*/compare.json")):
        print("\n".join(compare_file(path, args.write)))
    for path in sorted(ROOT.glob("*/swarm_study.json")):
        print("\n".join(swarm_study_file(path, args.write)))
    lacking = sorted(
        str(p.relative_to(ROOT.parent.parent))
        for p in ROOT.glob("*/*.json")
        if p.name in ("compare.json", "swarm_study.json", "imitation.json")
    )
    print(
        "no per-item paired outcomes (paired intervals withdrawn, run intervals from counts; "
        "imitation-*: a regression slope, no paired statistic): " + ", ".join(lacking)
    )
    print(f"wall {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
