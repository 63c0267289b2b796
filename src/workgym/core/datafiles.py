"""Opening the files of a data folder (a run, a playbook, a certificate) without following links.

A run folder is data someone may have sent: tar and git keep symbolic links, so `reviews.jsonl`
can point at a shell rc file and `run.json` at a private key. Checking the folder is not enough;
every file in it is opened here with `O_NOFOLLOW` (a link as the last component is refused by
the kernel, not by a check that can race) and `O_NONBLOCK` (a FIFO cannot hang the reader),
then `fstat` must say it is a regular file. A file written to must also have a single link, so a
hard link cannot carry a write out of the folder either. Folders above the file are the caller's
to confine (the viewer resolves the run folder inside its root first).

Every refusal is `LinkedFile`, a ConfigError whose message names the file and says what to do.
"""

from __future__ import annotations

import fcntl
import os
import stat
from pathlib import Path
from typing import BinaryIO, Literal, TextIO, cast

from workgym.core.errors import ConfigError

Mode = Literal["r", "a", "w"]
_FLAGS = {
    "r": os.O_RDONLY,
    "a": os.O_WRONLY | os.O_APPEND | os.O_CREAT,
    "w": os.O_WRONLY | os.O_TRUNC | os.O_CREAT,
}


class LinkedFile(ConfigError):
    """A data file that is a link, a device, a FIFO or a folder where a regular file belongs."""


def _refuse(path: Path, what: str) -> LinkedFile:
    return LinkedFile(
        f"{path} is {what}, not a regular file: workgym reads and writes only regular files "
        "inside a run folder; replace it with a copy of the file it points to (`cp -L`)"
    )


def check_regular(path: str | Path) -> Path:
    """`path` when it is a regular file and not a link (for readers that open it themselves,
    e.g. DuckDB's read_json); LinkedFile otherwise, FileNotFoundError when absent."""
    p = Path(path)
    st = os.lstat(p)
    if stat.S_ISLNK(st.st_mode):
        raise _refuse(p, "a symbolic link")
    if not stat.S_ISREG(st.st_mode):
        raise _refuse(p, "not a plain file")
    return p


def present(path: str | Path) -> bool:
    """Whether anything is at `path`, a dangling link included: a link is then refused when it is
    opened, never silently treated as absent (which would hide it from the user)."""
    return os.path.lexists(path)


def _open_fd(path: Path, base: str) -> int:
    flags = _FLAGS[base] | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        if os.path.islink(path):
            raise _refuse(path, "a symbolic link") from exc
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _refuse(path, "not a plain file")
        if base != "r" and st.st_nlink > 1:
            raise _refuse(path, f"a file with {st.st_nlink} hard links")
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_bytes(path: str | Path, mode: Mode = "r") -> BinaryIO:
    """Open `path` in binary `mode` ("r", "a" or "w"), refusing links and non-regular files."""
    fd = _open_fd(Path(path), mode)
    return cast(BinaryIO, os.fdopen(fd, mode + "b"))


def open_text(
    path: str | Path, mode: Mode = "r", *, encoding: str = "utf-8", errors: str = "strict"
) -> TextIO:
    """Open `path` in text `mode` ("r", "a" or "w"), refusing links and non-regular files."""
    fd = _open_fd(Path(path), mode)
    return os.fdopen(fd, mode, encoding=encoding, errors=errors)


def read_text(path: str | Path, *, limit: int = -1, errors: str = "strict") -> str:
    """The text of a regular file (at most `limit` characters; all of it when negative)."""
    with open_text(path, errors=errors) as fh:
        return fh.read(limit)


def read_bytes(path: str | Path) -> bytes:
    with open_bytes(path) as fh:
        return fh.read()
