"""The looks log: every time anyone opens an environment's test split (a certificate, or an
`eval`/`baselines` run on it).

A test split is a held-out sample only for as long as nobody tunes against it. Each certificate
attempt is a look; ten attempts with a 5% test each have a ~40% chance that one passes by luck.
So every look is appended to a log and the certificate states which attempt it is.

Where the log lives (decision 0075): with the environment, so that it travels with it and a new
machine, a new `--out` or a new home directory cannot reset the count. For a saved environment
folder that is `looks.jsonl` inside the folder; for a registered environment it is `looks.jsonl`
next to the admission record (`--admission-dir`, default `runs/check`).

Why a hash chain: each line carries its position (`seq`) and the sha256 of the line before it
(`prev`), so an edited or removed line breaks the chain, and each certificate records its look's
position and hash (`LooksRecord.seq`/`head`), so a log cut short at its end is caught against the
certificates made from it. The log is data, never code: it is read as JSON lines only, through
no symbolic link, and a line that is not ours is refused with one line, before any look is spent.

Logs kept before this format (`~/.workgym/looks.jsonl`, `$WORKGYM_HOME`, any `--looks-log`, a
today's-format file where the log now lives) are merged in on read, the environment's own lines
only, each remembered by the hash of its original line so merging twice adds nothing; the old
files are left as they were.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from workgym.certify.schema import LooksRecord
from workgym.core.errors import ConfigError

if TYPE_CHECKING:
    from workgym.core.environment import Environment

LOOKS_FILE = "looks.jsonl"
FORMAT = "workgym-looks/2"
GENESIS = "0" * 64  # `prev` of the first line
RETIRED = "looks.v1"  # a today's-format log found where the chained log lives is renamed to this

LookKind = Literal["certify", "recompute", "eval", "baselines"]
"""`certify` attempts are counted in the certificate; `eval` and `baselines` are other runs on
the test split, logged next to them so that anyone can see how often the split was seen.
(`recompute` was never written; it stays readable in logs of the first format.)"""

EntryKind = Literal["certify", "recompute", "eval", "baselines", "runs"]
"""`runs` is not a look: it binds the episodes a certificate read to the `certify` look they were
played under (`of`), so a later certificate from the same runs is recognised as a re-read."""


class Look(BaseModel):
    """A look to record, and a line of the first (unchained) format of the log."""

    model_config = ConfigDict(extra="forbid")

    at: str
    kind: LookKind
    env_id: str
    env_hash: str
    split: str
    split_hash: str
    baseline: str
    candidate: str
    out: str
    gate: str = ""  # certify: digest of the frozen gate settings (workflow)
    runs: str = ""  # certify: digest of the episodes, when they exist before the look


class Entry(BaseModel):
    """One line of the chained log."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["workgym-looks/2"]
    seq: int
    prev: str
    at: str
    kind: EntryKind
    env_id: str
    env_hash: str
    split: str
    split_hash: str
    baseline: str = ""
    candidate: str = ""
    out: str = ""
    attempt: int = 0  # certify: its attempt number on this environment and split
    gate: str = ""
    runs: str = ""
    of: str = ""  # runs: the hash of the certify line these runs were played under
    source: str = ""  # a merged line: the hash of the line it was copied from

    def line(self) -> bytes:
        return json.dumps(self.model_dump(), sort_keys=True, separators=(",", ":")).encode()


def line_hash(line: bytes) -> str:
    return hashlib.sha256(line).hexdigest()


@dataclass
class Chain:
    """The log as read: its lines in order and each line's hash."""

    path: Path
    entries: list[Entry] = field(default_factory=list)
    hashes: list[str] = field(default_factory=list)

    @property
    def head(self) -> str:
        return self.hashes[-1] if self.hashes else GENESIS

    def known(self) -> set[str]:
        """Hashes this log holds, its own and those of the lines it merged in."""
        return {*self.hashes, *(e.source for e in self.entries if e.source)}

    def attempts(self, env_hash: str, split_hash: str) -> int:
        return sum(
            1
            for e in self.entries
            if e.kind == "certify" and e.env_hash == env_hash and e.split_hash == split_hash
        )

    def reread(self, look: Look) -> tuple[Entry, str] | None:
        """The certify line whose gate and episodes `look` has again, with its hash."""
        if look.kind != "certify" or not look.gate or not look.runs:
            return None
        bound = {e.of for e in self.entries if e.kind == "runs" and e.runs == look.runs}
        for entry, digest in zip(self.entries, self.hashes, strict=True):
            same = (
                entry.kind == "certify"
                and entry.env_hash == look.env_hash
                and entry.split_hash == look.split_hash
                and entry.gate == look.gate
            )
            ids = {digest, entry.source} - {""}
            if same and (entry.runs == look.runs or ids & bound):
                return entry, digest
        return None


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def default_log() -> Path:
    """Where the first format kept every look (and where served attempts still live):
    ``$WORKGYM_HOME/looks.jsonl``, ``~/.workgym`` when unset. Read only, to merge."""
    home = os.environ.get("WORKGYM_HOME")
    return (Path(home) if home else Path.home() / ".workgym") / LOOKS_FILE


def log_for(env: Environment, admission_dir: Path | None = None) -> Path:
    """The environment's looks log: inside its saved folder, else beside its admission record."""
    from workgym.guards.admission import DEFAULT_DIR

    if env.root is not None:
        return env.root / LOOKS_FILE
    return (admission_dir if admission_dir is not None else DEFAULT_DIR) / LOOKS_FILE


# -- reading ------------------------------------------------------------------------------------


def _plain(path: Path) -> None:
    if path.is_symlink():
        raise ConfigError(
            f"{path} is a symbolic link; a looks log is read only as a plain file: replace the "
            "link with the file it points to"
        )


def _read_bytes(path: Path) -> bytes:
    _plain(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return b""
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


def _lines(path: Path, data: bytes) -> Iterator[tuple[int, bytes]]:
    if data and not data.endswith(b"\n"):
        last = data.count(b"\n") + 1
        raise ConfigError(
            f"{path}:{last} is an unfinished line (a write was cut off): the looks log must end "
            "with a whole line; restore it from a backup"
        )
    for lineno, line in enumerate(data.split(b"\n")[:-1], 1):
        if line.strip():
            yield lineno, line


def _not_ours(path: Path, lineno: int, why: str) -> ConfigError:
    return ConfigError(
        f"{path}:{lineno} is not a workgym looks-log line ({why}); a looks log holds JSON lines "
        f"of format {FORMAT} (or the first format): restore it from a backup, or move the file "
        "aside if it is not a looks log"
    )


def _parse(path: Path, lineno: int, line: bytes) -> Entry | Look:
    try:
        raw: Any = json.loads(line)
    except (ValueError, UnicodeDecodeError) as exc:
        raise _not_ours(path, lineno, f"not JSON: {exc}") from exc
    if not isinstance(raw, dict):
        raise _not_ours(path, lineno, "not a JSON object")
    try:
        if "format" in raw:
            return Entry.model_validate(raw)
        return Look.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "line"
        raise _not_ours(path, lineno, f"{where}: {first['msg']}") from exc


def _chain(path: Path, data: bytes) -> Chain:
    """The chained log in `data`; any break of the chain is one line naming the line."""
    chain = Chain(path)
    for lineno, line in _lines(path, data):
        entry = _parse(path, lineno, line)
        if not isinstance(entry, Entry):
            raise _not_ours(path, lineno, f"a first-format line inside a {FORMAT} log")
        if entry.seq != len(chain.entries) + 1 or entry.prev != chain.head:
            where = "its start" if not chain.entries else f"line {lineno}"
            raise ConfigError(
                f"{path} was cut short or edited at {where}: entry {entry.seq} does not follow "
                f"entry {len(chain.entries)} in the hash chain; restore the log from a backup "
                "(or the copy that came with the environment)"
            )
        chain.entries.append(entry)
        chain.hashes.append(line_hash(line))
    return chain


def read_chain(log: Path) -> Chain:
    return _chain(log, _read_bytes(log))


def read_looks(log: Path) -> list[Entry]:
    """Every line of a chained log (empty when there is none)."""
    return read_chain(log).entries


@dataclass
class _Source:
    """A log to merge: its lines that are looks, each with the hash that identifies it."""

    path: Path
    lines: list[tuple[str, Entry | Look]]


def _read_source(path: Path) -> _Source:
    data = _read_bytes(path)
    lines: list[tuple[str, Entry | Look]] = []
    repeats: dict[bytes, int] = {}
    for lineno, line in _lines(path, data):
        item = _parse(path, lineno, line)
        # two looks in the same second can be the same bytes: the n-th copy is its own look
        n = repeats[line] = repeats.get(line, -1) + 1
        ident = line_hash(line if n == 0 else line + f"#{n}".encode())
        if isinstance(item, Entry) and item.source:
            ident = item.source
        lines.append((ident, item))
    return _Source(path, lines)


def _is_first_format(path: Path) -> bool:
    """Whether the file where the chained log lives still holds a log of the first format."""
    for lineno, line in _lines(path, _read_bytes(path)):
        return isinstance(_parse(path, lineno, line), Look)
    return False


def _retire(log: Path) -> None:
    """Move a first-format log out of the chained log's place (kept, merged from there)."""
    for i in range(1, 1000):
        target = log.with_name(f"{RETIRED}{'' if i == 1 else f'-{i}'}.jsonl")
        if not target.exists():
            os.replace(log, target)
            return
    raise ConfigError(f"{log.parent} holds 999 retired looks logs; merge them by hand")


def sources(log: Path, extra: Iterable[Path] = ()) -> list[Path]:
    """The older logs merged into `log`: the home log, those passed, and retired ones beside it."""
    found = [default_log(), *extra, *sorted(log.parent.glob(f"{RETIRED}*.jsonl"))]
    out: list[Path] = []
    for path in found:
        if (path.is_file() or path.is_symlink()) and not _same(path, log) and path not in out:
            out.append(path)
    return out


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


# -- certificates: a log cut short --------------------------------------------------------------


def _certificate_look(path: Path) -> tuple[str, str, int, int] | None:
    """(env hash, head, seq, attempt) of a certificate file's look, when it records a head."""
    if path.is_symlink() or not path.is_file():
        return None
    try:
        raw: Any = json.loads(path.read_bytes())
        looks, env = raw["frozen"]["looks"], raw["task"]["env"]
        head, seq = looks.get("head"), looks.get("seq")
        if isinstance(head, str) and isinstance(seq, int):
            return str(env["hash"]), head, seq, int(looks["attempt"])
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        pass  # not a certificate of this format: nothing to check against
    return None


def check_not_cut(chain: Chain, env_hash: str, certificates: Iterable[Path]) -> None:
    """Raise when a certificate of this environment records a look the log does not hold.

    Checked: the certificates passed (the folder being written) and those in the folders the
    log's own lines name."""
    named = [Path(e.out) / "certificate.json" for e in chain.entries if e.kind == "certify"]
    known = chain.known()
    seen: set[Path] = set()
    for path in [*certificates, *named]:
        if path in seen:
            continue
        seen.add(path)
        found = _certificate_look(path)
        if found is None or found[0] != env_hash or found[1] in known:
            continue
        _, head, seq, attempt = found
        raise ConfigError(
            f"the looks log {chain.path} was cut short: {path} records attempt {attempt} (log "
            f"line {seq}, hash {head[:12]}) and the log, with {len(chain.entries)} lines, does "
            "not hold it; put the full log back, or pass a copy that holds it with --looks-log"
        )


def missing_from_log(record: LooksRecord) -> str | None:
    """Why the log a certificate names does not vouch for its look, or None when it does (or
    when the certificate predates the chain, or its log is not on this machine)."""
    log = Path(record.log)
    if record.head is None or not log.is_file():
        return None
    try:
        chain = read_chain(log)
    except ConfigError as exc:
        return str(exc)
    if record.head in chain.known():
        return None
    return (
        f"the looks log {log} does not hold this certificate's look (attempt {record.attempt}, "
        f"line {record.seq}, hash {record.head[:12]}): it was cut short or replaced"
    )


# -- writing ------------------------------------------------------------------------------------


@contextmanager
def _locked(log: Path) -> Iterator[int]:
    """The log opened for appending (created when missing), locked against other writers."""
    _plain(log)
    log.parent.mkdir(parents=True, exist_ok=True)
    existed = log.exists()
    fd = os.open(log, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield fd
    except BaseException:
        if not existed and os.fstat(fd).st_size == 0:
            log.unlink(missing_ok=True)  # a refused first look leaves no empty log behind
        raise
    finally:
        os.close(fd)


def _read_fd(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _append(fd: int, chain: Chain, entry: Entry) -> str:
    line = entry.line()
    os.write(fd, line + b"\n")
    os.fsync(fd)
    digest = line_hash(line)
    chain.entries.append(entry)
    chain.hashes.append(digest)
    return digest


def _next(chain: Chain, **fields: Any) -> Entry:
    return Entry(format=FORMAT, seq=len(chain.entries) + 1, prev=chain.head, **fields)


def _merge(fd: int, chain: Chain, env_hash: str, merged: Sequence[_Source]) -> int:
    """Append the lines of `merged` about `env_hash` that the log does not hold yet."""
    known = chain.known()
    added = 0
    for source in merged:
        for ident, item in source.lines:
            if item.env_hash != env_hash or ident in known:
                continue
            fields = item.model_dump(exclude={"format", "seq", "prev", "attempt", "source"})
            attempt = 0
            if item.kind == "certify":
                attempt = chain.attempts(item.env_hash, item.split_hash) + 1
            _append(fd, chain, _next(chain, **fields, attempt=attempt, source=ident))
            known.add(ident)
            added += 1
    return added


def record_look(
    log: Path,
    look: Look,
    *,
    merge: Sequence[Path] = (),
    certificates: Sequence[Path] = (),
) -> LooksRecord:
    """Append one look (after merging older logs) and return what the certificate records.

    A `certify` look with the gate and episodes of an earlier one is a re-read, not a look: the
    earlier line's attempt is returned and nothing is appended. Everything that can refuse
    (a log not ours, a broken chain, a log cut short) refuses before anything is appended."""
    if log.exists() and not log.is_symlink() and _is_first_format(log):
        _retire(log)
    merged = [_read_source(p) for p in sources(log, merge)]
    with _locked(log) as fd:
        chain = _chain(log, _read_fd(fd))
        _merge(fd, chain, look.env_hash, merged)
        check_not_cut(chain, look.env_hash, certificates)
        previous = chain.attempts(look.env_hash, look.split_hash)
        again = chain.reread(look)
        if again is not None:
            entry, digest = again
            return LooksRecord(
                log=str(log),
                attempt=entry.attempt,
                previous_attempts=entry.attempt - 1,
                head=digest,
                seq=entry.seq,
            )
        attempt = previous + 1 if look.kind == "certify" else 0
        entry = _next(chain, **look.model_dump(), attempt=attempt)
        digest = _append(fd, chain, entry)
    return LooksRecord(
        log=str(log),
        attempt=attempt or previous,
        previous_attempts=previous,
        head=digest,
        seq=entry.seq,
    )


def bind_runs(log: Path, record: LooksRecord, look: Look, runs: str) -> None:
    """After a certify look whose episodes were played under it, bind them to it (not a look)."""
    if look.runs or record.head is None:
        return
    with _locked(log) as fd:
        chain = _chain(log, _read_fd(fd))
        if any(e.kind == "runs" and e.of == record.head and e.runs == runs for e in chain.entries):
            return
        fields = look.model_dump(include={"env_id", "env_hash", "split", "split_hash", "out"})
        _append(fd, chain, _next(chain, at=now(), kind="runs", of=record.head, runs=runs, **fields))


def record_run_look(
    env: Environment,
    ref: str,
    kind: LookKind,
    model: str,
    out: str,
    admission_dir: Path | None = None,
) -> Path:
    """Log an `eval`/`baselines` run that plays the test split (or `all`, which contains it);
    return the log it went to."""
    from workgym.certify.certificate import env_record

    items = [(t.id, t.family) for t in env.taskset.split("test")]
    record = env_record(env, ref, "test", items)
    look = Look(
        at=now(),
        kind=kind,
        env_id=env.id,
        env_hash=record.hash,
        split="test",
        split_hash=record.split_hash,
        baseline="",
        candidate=model,
        out=out,
    )
    log = log_for(env, admission_dir)
    record_look(log, look)
    return log
