"""A certificate as the viewer shows it: the verdict and the conditions behind it, read from
certificate.json, beside the certifier's own certificate.html (served with scripts disabled).

The summary follows the `workgym-certificate/1` schema (workgym.certify.schema) but reads it with
`.get`, so a page still opens on another version; unknown formats get a flat field list.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from workgym.apps.viewer.playbook_view import read_text

_SCALARS = (str, int, float, bool, type(None))


_COST_KEYS = ("tokens_per_task", "mean_reward", "errors", "flagged_successes", "reviewed_successes")


def _flatten(value: Any, prefix: str = "", depth: int = 0) -> list[tuple[str, Any]]:
    """Scalar leaves of a JSON object as (dotted key, value), three levels deep."""
    if isinstance(value, dict) and depth < 3:
        out: list[tuple[str, Any]] = []
        for k, v in value.items():
            out += _flatten(v, f"{prefix}{k}.", depth + 1)
        return out
    key = prefix[:-1]
    if isinstance(value, _SCALARS):
        return [(key, value)]
    if isinstance(value, list) and len(value) < 8 and all(isinstance(x, _SCALARS) for x in value):
        return [(key, value)]
    size = len(value) if isinstance(value, list | dict) else 0
    return [(key, f"[{type(value).__name__} of {size}]")]


def _run_link(path: Any, root: Path, directory: Path) -> str | None:
    """A run directory named in the certificate (relative to the certificate's folder, PATH or
    the current directory), as a path under PATH; None when it is not under PATH."""
    if not isinstance(path, str):
        return None
    for candidate in (directory / path, root / path, Path.cwd() / path):
        try:
            resolved = candidate.resolve()
        except OSError:
            continue
        if resolved.is_relative_to(root) and (resolved / "run.json").is_file():
            rel = resolved.relative_to(root).as_posix()
            return "" if rel == "." else rel
    return None


def _summary(data: dict[str, Any], root: Path, directory: Path) -> dict[str, Any]:
    task = data.get("task") or {}
    gain = task.get("gain") or {}
    runs = {
        r.get("arm"): {"path": r.get("path"), "link": _run_link(r.get("path"), root, directory)}
        for r in task.get("runs") or []
        if isinstance(r, dict)
    }
    suites = []
    for s in data.get("suites") or []:
        ni = s.get("non_inferiority") or {}
        suites.append(
            {
                "suite": (s.get("env") or {}).get("id"),
                "diff": ni.get("diff"),
                "lower": ni.get("lower"),
                "margin": ni.get("margin"),
                "passed": ni.get("passed"),
                "n_items": ni.get("n_items"),
                "underpowered": ni.get("underpowered"),
            }
        )
    cost = task.get("cost") or {}
    return {
        "conditions": data.get("conditions") or [],
        "warnings": data.get("warnings") or [],
        "gain": {
            k: gain.get(k)
            for k in (
                "baseline_mean",
                "candidate_mean",
                "diff",
                "lower",
                "p_value",
                "n_items",
                "n_clusters",
                "method",
                "significant",
                "mde",
                "underpowered",
            )
        },
        "families": gain.get("families") or [],
        "suites": suites,
        "cost": {
            arm: {k: (cost.get(arm) or {}).get(k) for k in _COST_KEYS}
            for arm in ("baseline", "candidate")
        },
        "runs": runs,
        "env": (task.get("env") or {}).get("id"),
    }


def read_certificate(directory: Path, root: Path) -> dict[str, Any]:
    """certificate.json summarised (verdict first), and where certificate.html is."""
    rel = directory.relative_to(root).as_posix()
    try:
        data = json.loads(read_text(directory / "certificate.json"))
    except json.JSONDecodeError as exc:
        return {"path": rel, "error": f"certificate.json is not valid JSON ({exc})"}
    if not isinstance(data, dict):
        return {"path": rel, "error": "certificate.json is not a JSON object"}
    html = directory / "certificate.html"
    return {
        "path": rel,
        "format": data.get("format"),
        "verdict": data.get("verdict"),
        "failed": data.get("failed") or [],
        "summary": _summary(data, root, directory),
        "fields": _flatten({k: v for k, v in data.items() if k not in ("task", "suites")}),
        "html": html.relative_to(root).as_posix() if html.is_file() else None,
    }
