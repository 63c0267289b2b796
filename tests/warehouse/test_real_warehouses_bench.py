"""bench/real_warehouses.py on a tiny slice: the Debian release history built from a made-up
dpkg status file and one changelog (the full builds read the machine's own files and are run by
hand; docs/warehouse-samples.md round 6)."""

from __future__ import annotations

import gzip
from pathlib import Path

import duckdb
import pytest

from fakes.toy_rules_agent import load_bench

bench = load_bench("real_warehouses.py")

CHANGELOG = """\
hello (2.10-3) unstable; urgency=medium

  * Fix the build with a newer compiler. Closes: #1001, #1002
  * Team upload.

 -- Ann Maint <ann@example.org>  Mon, 02 Jan 2023 13:06:21 +0100

hello (2.10-2) unstable; urgency=low

  * New upstream release,
    with a continued line.

 -- Bob Dev <BOB@example.org>  Sat, 31 Dec 2022 16:40:30 +0000
"""

STATUS = """\
Package: hello
Status: install ok installed
Priority: optional
Section: devel
Installed-Size: 280
Maintainer: Ann Maint <ann@example.org>
Architecture: amd64
Version: 2.10-3
Depends: libc6 (>= 2.34), foo | bar

Package: gone
Status: deinstall ok config-files
Version: 1.0
"""


def test_changelog_entries_have_items_closed_bugs_and_utc_times() -> None:
    entries = list(bench.parse_changelog(CHANGELOG))
    assert [(e.version, e.urgency, len(e.items)) for e in entries] == [
        ("2.10-3", "medium", 2),
        ("2.10-2", "low", 1),
    ]
    assert entries[0].released_at == "2023-01-02 12:06:21"  # +0100 read as UTC
    assert entries[1].items == ["New upstream release, with a continued line."]
    assert entries[1].author_email == "bob@example.org"
    assert bench._closed_bugs(entries[0].items[0]) == [1001, 1002]


def test_debian_history_builds_header_and_line_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    status = tmp_path / "status"
    status.write_text(STATUS)
    doc = tmp_path / "doc" / "hello"
    doc.mkdir(parents=True)
    (doc / "changelog.Debian.gz").write_bytes(gzip.compress(CHANGELOG.encode()))
    monkeypatch.setattr(bench, "DPKG_STATUS", status)
    monkeypatch.setattr(bench, "DOC_ROOT", tmp_path / "doc")
    built = bench.build(["debian_history"], tmp_path / "out", None)
    assert str(status) in built["debian_history"].files  # every input is hashed
    with duckdb.connect(str(tmp_path / "out" / "debian_history.duckdb"), read_only=True) as con:
        assert con.execute("SELECT package, installed_size_kib FROM package").fetchall() == [
            ("hello", 280)
        ]  # the de-installed package is not there
        assert con.execute(
            "SELECT target_package, group_no, alternative_no FROM package_relation ORDER BY 2, 3"
        ).fetchall() == [("libc6", 1, 1), ("foo", 2, 1), ("bar", 2, 2)]
        assert con.execute(
            "SELECT e.version, count(*) FROM changelog_entry e JOIN changelog_change c"
            " USING (entry_id) GROUP BY 1 ORDER BY 1"
        ).fetchall() == [("2.10-2", 1), ("2.10-3", 2)]
        assert con.execute("SELECT bug_number FROM bug_closure ORDER BY 1").fetchall() == [
            (1001,),
            (1002,),
        ]
        assert con.execute("SELECT count(*) FROM person").fetchone() == (2,)
