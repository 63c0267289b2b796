"""bench/real_warehouses.py on a tiny slice: the Debian release history built from a made-up
dpkg status file and one changelog (the full builds read the machine's own files and are run by
hand; docs/warehouse-samples.md round 6)."""

from __future__ import annotations

import gzip
import json
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


defects_bench = load_bench("warehouse_defects.py")


def _task(family: str, prompt: str, sql: str) -> str:
    meta = {"family": family, "reference_sql": sql}
    return json.dumps({"prompt": prompt + " Answer with submit_answer ...", "meta": meta})


def test_defect_counts_over_a_tiny_environment(tmp_path: Path) -> None:
    with duckdb.connect(str(tmp_path / "snapshot.duckdb")) as con:
        con.execute("CREATE TABLE reg AS SELECT * FROM (VALUES ('A', 1), ('A', 2)) t(auth, code)")
        con.execute(
            "CREATE TABLE rel AS SELECT * FROM (VALUES (1, '1.0'), (1, '2.0')) t(code, version)"
        )
        con.execute("CREATE TABLE unused (x INTEGER)")
    card = {
        "tables": [{"name": "reg", "keys": [{"columns": ["auth", "code"], "source": "declared"}]}]
    }
    (tmp_path / "schema_card.json").write_text(json.dumps(card))
    tasks = [
        _task("F2", "Top versions of rel records?", "SELECT version FROM rel GROUP BY version"),
        _task(
            "F3",
            "Count rel records where its code refers to a reg record.",
            "SELECT COUNT(*) FROM rel AS t JOIN reg AS r ON t.code = r.code",
        ),
        _task(
            "F6",
            "Which reg have no rel? They match when rel.code equals reg.code.",
            "SELECT r.code FROM reg AS r WHERE NOT EXISTS(SELECT 1 FROM rel AS t"
            " WHERE t.code = r.code) AND r.auth = 'A' ORDER BY r.code",
        ),
    ]
    (tmp_path / "tasks.jsonl").write_text("\n".join(tasks) + "\n")
    families, defects, tables = defects_bench.count_defects(tmp_path)
    assert families == {"F2": 1, "F3": 1, "F6": 1}
    assert defects["record_talk"] == 2 and defects["refers_to"] == 1
    assert defects["table_column_in_text"] == 1  # "rel.code equals reg.code"
    assert defects["f2_groups_by_code_or_version"] == 1
    assert defects["half_composite_join"] == 1  # reg's declared key is (auth, code)
    assert defects["f6_near_total"] == 0  # 1 of the 2 reg rows has no rel
    assert tables["unused"] == 0 and tables["rel"] == 3
