"""Module basenames say what a file holds, once (decision 0026).

Two modules with one basename (`base.py` x4, `cli.py` x9 before) make a reader open both to
find out which is which. The one allowed repetition is an environment package's own layout:
`env.py`, `tasks.py` and `tools.py` (and `core/tasks.py`, `core/tools.py`, the contracts they
implement).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "src" / "workgym"
ENV_LAYOUT = {"env.py", "tasks.py", "tools.py"}


def test_module_basenames_are_unique() -> None:
    found: dict[str, list[str]] = defaultdict(list)
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT)
        if path.name == "__init__.py":
            continue
        if path.name in ENV_LAYOUT and rel.parts[0] in ("envs", "core"):
            continue
        found[path.name].append(str(rel))
    repeated = {name: paths for name, paths in found.items() if len(paths) > 1}
    assert not repeated, f"rename one of each by what it holds: {repeated}"
