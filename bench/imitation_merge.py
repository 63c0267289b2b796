"""Gather per-model `workgym imitation-gap` folders into one, so the report covers every model.

    python bench/imitation_merge.py runs/c1/m/05b runs/c1/m/base ... --out runs/c1/imgap
    workgym imitation-gap ... --model A --checkpoints B ... --out runs/c1/imgap   # no model call

Two models scored side by side must not append to one teacher_forced.jsonl at once, so claim 1's
run (decision 0179) gave each model its own folder. This copies every teacher-forced line (each
(model, task, epoch) once; a second, different copy is an error) and every free-running run
folder into OUT. A run folder that OUT already holds must be byte-identical. Symbolic links are
refused, not followed. A re-run of `imitation-gap` on OUT then finds everything scored and only
writes the report.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import shutil
import sys
from pathlib import Path

SCORES = "teacher_forced.jsonl"


def _refuse_links(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        if path.is_symlink():
            sys.exit(
                f"error: {path} is a symbolic link; copy the real folder, links are not followed"
            )


def merge_scores(sources: list[Path], out: Path) -> int:
    """Append each source's teacher-forced lines not yet in OUT; return how many were added."""
    seen: dict[tuple[str, str, int], str] = {}
    target = out / SCORES
    if target.exists():
        for line in target.read_text().splitlines():
            row = json.loads(line)
            seen[(row["model"], row["task_id"], row.get("epoch", 0))] = line
    added = []
    for source in sources:
        path = source / SCORES
        for line in path.read_text().splitlines() if path.exists() else []:
            try:
                row = json.loads(line)
            except ValueError:
                continue  # a torn last line, as imitation-gap itself drops it
            key = (row["model"], row["task_id"], row.get("epoch", 0))
            if key in seen:
                if json.loads(seen[key]) != row:
                    sys.exit(f"error: {source} scores {key} differently from another folder")
                continue
            seen[key] = line
            added.append(line)
    with target.open("a") as sink:
        sink.writelines(line + "\n" for line in added)
    return len(added)


def merge_free(sources: list[Path], out: Path) -> list[str]:
    """Copy each source's free-running run folders into OUT/free; identical ones are skipped."""
    copied = []
    for source in sources:
        for run in sorted((source / "free").iterdir()) if (source / "free").is_dir() else []:
            _refuse_links(run)
            dest = out / "free" / run.name
            if dest.exists():
                diff = filecmp.dircmp(run, dest)
                if diff.left_only or diff.right_only or diff.diff_files:
                    sys.exit(f"error: {dest} exists and differs from {run}; merge into a new --out")
                continue
            shutil.copytree(run, dest, symlinks=True)
            copied.append(run.name)
    return copied


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="+", type=Path, help="per-model imitation-gap folders")
    parser.add_argument("--out", type=Path, required=True, help="the folder to gather them in")
    args = parser.parse_args()
    for source in args.sources:
        if not source.is_dir():
            sys.exit(f"error: {source} is not a folder; pass imitation-gap --out folders")
    args.out.mkdir(parents=True, exist_ok=True)
    lines = merge_scores(args.sources, args.out)
    runs = merge_free(args.sources, args.out)
    print(json.dumps({"teacher_forced_lines_added": lines, "free_runs_copied": runs}))


if __name__ == "__main__":
    main()
