"""Where a generation is written before it becomes the environment: a staging folder beside
`--out`, renamed into place only when complete.

`generate warehouse --out envs/x` over an existing environment once replaced a 348-task
environment with a 9-task one while an eval was reading it, and a generate killed midway left a
folder that a re-run refused (issue 39, item 5). Now:

- an existing, non-empty `--out` is refused unless `--overwrite`;
- the generation writes into `.x.generating` beside it (same filesystem, so the final step is a
  rename) and the marker `.x.generating.json` records what is being generated;
- a kill leaves `--out` as it was plus that staging folder; the next run of the same command
  recognises it (same options in the marker) and finishes it: a complete one is installed as is,
  an incomplete one is generated again from a clean folder (generation is deterministic, so the
  result is the same bytes as an uninterrupted run); a staging folder of other options is
  discarded;
- the install is two renames (the old environment aside, the new one in) and then the old one is
  deleted; a kill between the renames is repaired by the next run (the old one is put back).
  A reader that has the old environment's files open keeps reading them (POSIX renames).

The marker lives outside the staging folder so the environment's own files are exactly what the
generator wrote (its content hash and leakage checks never see it).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from workgym.core.errors import ConfigError


class Staging:
    """The staging folder of one `--out`, its marker, and the install step."""

    def __init__(self, out: Path, identity: dict[str, Any]) -> None:
        self.out = out
        self.identity = identity
        self.work = out.parent / f".{out.name}.generating"
        self.marker = out.parent / f".{out.name}.generating.json"
        self.aside = out.parent / f".{out.name}.replaced"

    def claim(self, *, overwrite: bool) -> tuple[Path, bool]:
        """The folder to generate into, and whether it already holds a complete generation of
        these options (then only the install is left)."""
        self.out.parent.mkdir(parents=True, exist_ok=True)
        self._repair_install()
        self._refuse_existing(overwrite)
        state = self._read_marker()
        if state is not None and state.get("identity") == self.identity:
            if state.get("complete") and self.work.is_dir():
                return self.work, True
        elif state is None and os.path.lexists(self.work):
            raise ConfigError(
                f"{self.work} exists and was not made by `workgym generate` (no "
                f"{self.marker.name} beside it); move it away and run again"
            )
        if os.path.lexists(self.work):  # an unfinished or foreign generation: start it over
            shutil.rmtree(self.work)
        self._write_marker(complete=False)
        self.work.mkdir(parents=True)
        return self.work, False

    def install(self) -> None:
        """Rename the complete staging folder into `out` (the old environment aside first)."""
        self._write_marker(complete=True)
        if _nonempty_dir(self.out):
            os.rename(self.out, self.aside)
        elif self.out.is_dir():
            self.out.rmdir()
        os.rename(self.work, self.out)
        shutil.rmtree(self.aside, ignore_errors=True)
        self.marker.unlink(missing_ok=True)

    def abandon(self) -> None:
        """Remove the staging folder and its marker (a generation that failed with an error)."""
        shutil.rmtree(self.work, ignore_errors=True)
        self.marker.unlink(missing_ok=True)

    def _repair_install(self) -> None:
        """Finish or undo an install a kill interrupted."""
        if not os.path.lexists(self.aside):
            if self.marker.exists() and not os.path.lexists(self.work):
                self.marker.unlink()  # killed after the install, before the marker went
            return
        if os.path.lexists(self.out):  # the new one is in place: the old one only needs deleting
            shutil.rmtree(self.aside)
        else:  # killed between the two renames: the old environment goes back
            os.rename(self.aside, self.out)

    def _refuse_existing(self, overwrite: bool) -> None:
        if not os.path.lexists(self.out):
            return
        if self.out.is_symlink() or not self.out.is_dir():
            raise ConfigError(f"--out {self.out} exists and is not a folder; pick another --out")
        if overwrite or not _nonempty_dir(self.out):
            return
        what = (
            "an environment"
            if (self.out / "manifest.json").is_file()
            else "files (not an environment)"
        )
        raise ConfigError(
            f"--out {self.out} already holds {what}; pass --overwrite to replace it (the new one "
            "takes its place in one rename once complete), or pick another --out"
        )

    def _read_marker(self) -> dict[str, Any] | None:
        try:
            value = json.loads(self.marker.read_text())
        except (OSError, ValueError):
            return None
        return value if isinstance(value, dict) else None

    def _write_marker(self, *, complete: bool) -> None:
        tmp = self.marker.with_name(self.marker.name + ".tmp")
        tmp.write_text(json.dumps({"identity": self.identity, "complete": complete}) + "\n")
        os.replace(tmp, self.marker)


def _nonempty_dir(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink() and any(path.iterdir())
