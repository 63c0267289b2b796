from __future__ import annotations

from pathlib import Path

import pytest

import workgym as wg
from workgym.core.errors import ConfigError
from workgym.train.playbook.entries import Counters, Entry, EntryStatus, Provenance, entry_id
from workgym.train.playbook.playbook import (
    CITE_LINE,
    Playbook,
    PlaybookVersion,
    history_path,
    load_playbook,
    parse_markdown,
    save_playbook,
)


def book(*items: tuple[str, str], **kw: object) -> Playbook:
    entries = tuple(
        Entry(id=entry_id(i), section=sec, text=text) for i, (sec, text) in enumerate(items, 1)
    )
    return Playbook(entries=entries, next_id=len(items) + 1, **kw)  # type: ignore[arg-type]


def test_entry_tokens_counters_and_provenance() -> None:
    e = Entry(id="pb-001", section="strategy", text="Check the units before answering.")
    assert e.line() == "- [pb-001] Check the units before answering."
    assert e.tokens == (len(e.line()) + 3) // 4 and e.model_dump()["tokens"] == e.tokens
    c = Counters(helpful=2, harmful=1) + Counters(harmful=1, neutral=3, cited=4)
    assert (c.helpful, c.harmful, c.neutral, c.cited, c.uses, c.usefulness) == (2, 2, 3, 4, 7, 0)
    p = Provenance(tasks=("a",), deltas=("d-0001",)) + Provenance(tasks=("a", "b"), notes=("x",))
    assert p.tasks == ("a", "b") and p.deltas == ("d-0001",) and p.notes == ("x",)


def test_render_is_deterministic_ordered_by_section_and_skips_retired() -> None:
    pb = book(("format", "Upper-case codes."), ("strategy", "Look before you answer."))
    text = pb.render()
    assert text == (
        f"{CITE_LINE}\n\n### strategy\n- [pb-002] Look before you answer.\n\n"
        "### format\n- [pb-001] Upper-case codes.\n"
    )
    assert pb.render() == text and Playbook().render() == ""
    retired = pb.retire(["pb-002"], "test")
    assert "pb-002" not in retired.render() and retired.get("pb-002").status == EntryStatus.retired
    assert retired.tokens < pb.tokens


def test_hash_covers_content_not_parent_and_versions_chain() -> None:
    pb = book(("strategy", "Look before you answer."))
    assert pb.hash == pb.model_copy(update={"parent": "elsewhere"}).hash
    counted = pb.add_counters({"pb-001": Counters(helpful=1)})
    assert counted.hash != pb.hash and counted.parent == pb.hash
    assert counted.render_hash == pb.render_hash  # counters do not change what the agent sees
    assert pb.evolve(pb.entries) is pb  # no empty versions
    with pytest.raises(Exception, match="frozen"):
        pb.token_budget = 5  # type: ignore[misc]


def test_promote_turns_candidates_active_and_records_the_gate() -> None:
    pb = Playbook(
        entries=(Entry(id="pb-001", section="tools", text="x", status=EntryStatus.candidate),),
        next_id=2,
    )
    up = pb.promote(gate="it1 d-0001: rose")
    assert up.get("pb-001").status == EntryStatus.active
    assert up.get("pb-001").provenance.gates == ("it1 d-0001: rose",)


def test_parse_markdown_round_trips_and_reads_hand_written_seeds() -> None:
    pb = book(("format", "Upper-case codes."), ("strategy", "Look before you answer."))
    back = parse_markdown(pb.render())
    assert back.render() == pb.render() and back.next_id == 3
    seed = parse_markdown(
        "## Strategy\n- Read the task twice.\n  and then once more.\n- [pb-007] Keep ids.\n"
        "### new-section\n* Something else.\n"
    )
    assert [e.id for e in seed.entries] == ["pb-008", "pb-007", "pb-009"]
    assert seed.get("pb-008").text == "Read the task twice. and then once more."
    assert "new-section" in seed.sections and seed.next_id == 10
    with pytest.raises(ConfigError, match="before any section"):
        parse_markdown("- orphan")
    with pytest.raises(ConfigError, match="twice"):
        parse_markdown("### a\n- [pb-001] x\n- [pb-001] y")
    with pytest.raises(ConfigError, match="not an entry"):
        parse_markdown("### a\nloose words")


def test_save_and_load_keep_the_history_beside_the_rendered_file(tmp_path: Path) -> None:
    v1 = book(("strategy", "Look before you answer."))
    v2 = v1.add_counters({"pb-001": Counters(helpful=3)})
    hist = [
        PlaybookVersion(hash=v.hash, parent=v.parent, iteration=i, reason="r", playbook=v)
        for i, v in enumerate([v1, v2])
    ]
    path = save_playbook(v2, tmp_path / "playbook.md", hist)
    assert path.read_text() == v2.render()
    assert history_path(path) == tmp_path / "playbook.history.jsonl"
    assert len(history_path(path).read_text().splitlines()) == 2
    loaded = load_playbook(path)
    assert loaded == v2 and loaded.get("pb-001").counters.helpful == 3
    path.write_text(path.read_text() + "- Edited by hand.\n")  # no saved version renders this
    edited = load_playbook(path)
    assert edited.get("pb-002").text == "Edited by hand."
    with pytest.raises(ConfigError, match="no playbook file"):
        load_playbook(tmp_path / "missing.md")


def test_the_saved_file_gives_eval_the_system_prompt_training_tested(
    tmp_path: Path, toy: wg.Environment
) -> None:
    pb = book(("strategy", "Look before you answer."))
    path = save_playbook(pb, tmp_path / "playbook.md")
    trained = wg.Policy("scripted/null", playbook=pb.render())
    from_file = wg.Policy("scripted/null", playbook=path.read_text())
    assert from_file.system_text(toy) == trained.system_text(toy)
    assert from_file.hash == trained.hash
