from __future__ import annotations

from workgym.train.playbook.deltas import Delta, DeltaOp, apply_deltas
from workgym.train.playbook.entries import Counters, Entry, EntryStatus
from workgym.train.playbook.playbook import Playbook


def base() -> Playbook:
    return Playbook(
        entries=(
            Entry(
                id="pb-001", section="strategy", text="Read the task.", counters=Counters(helpful=2)
            ),
            Entry(
                id="pb-002",
                section="tools",
                text="Call lookup first.",
                counters=Counters(harmful=1),
            ),
            Entry(id="pb-003", section="format", text="Old.", status=EntryStatus.retired),
        ),
        next_id=4,
    )


def only(pb: Playbook, delta: Delta) -> tuple[Playbook, str | None]:
    result = apply_deltas(pb, [delta])
    return result.playbook, (result.rejected[0].reason if result.rejected else None)


def test_add_gets_a_fresh_id_candidate_status_and_provenance() -> None:
    d = Delta(
        id="d-0001",
        op=DeltaOp.ADD,
        section="checks",
        text="  Verify   units. ",
        evidence=("k/t/0",),
        tasks=("t",),
        reflection="r-0001",
    )
    pb, problem = only(base(), d)
    assert problem is None
    new = pb.get("pb-004")
    assert new.text == "Verify units." and new.status == EntryStatus.candidate
    assert new.provenance.deltas == ("d-0001",) and new.provenance.tasks == ("t",)
    assert new.provenance.reflections == ("r-0001",) and new.provenance.episodes == ("k/t/0",)
    assert pb.next_id == 5 and pb.parent == base().hash


def test_ids_are_never_reused_after_delete() -> None:
    pb, _ = only(base(), Delta(op=DeltaOp.DELETE, target_ids=("pb-002",)))
    pb, _ = only(pb, Delta(op=DeltaOp.ADD, section="tools", text="New."))
    assert [e.id for e in pb.entries] == ["pb-001", "pb-002", "pb-003", "pb-004"]
    assert pb.get("pb-002").status == EntryStatus.retired


def test_update_rewrites_one_entry_and_can_move_it() -> None:
    pb, problem = only(
        base(),
        Delta(
            id="d-9",
            op=DeltaOp.UPDATE,
            target_ids=("pb-001",),
            text="Read the task twice.",
            section="checks",
        ),
    )
    assert problem is None
    e = pb.get("pb-001")
    assert (e.text, e.section, e.status) == (
        "Read the task twice.",
        "checks",
        EntryStatus.candidate,
    )
    assert e.counters.helpful == 2 and "d-9" in e.provenance.deltas


def test_merge_keeps_the_first_target_sums_counters_and_retires_the_rest() -> None:
    pb, problem = only(
        base(),
        Delta(
            op=DeltaOp.MERGE,
            target_ids=("pb-001", "pb-002"),
            text="Read the task, then call lookup.",
        ),
    )
    assert problem is None
    kept, gone = pb.get("pb-001"), pb.get("pb-002")
    assert kept.text == "Read the task, then call lookup."
    assert (kept.counters.helpful, kept.counters.harmful) == (2, 1)
    assert gone.status == EntryStatus.retired and "merged into pb-001" in gone.provenance.notes[0]


def test_tag_counts_without_changing_the_render() -> None:
    pb, problem = only(base(), Delta(op=DeltaOp.TAG, target_ids=("pb-002",), tag="helpful"))
    assert problem is None and pb.get("pb-002").counters.helpful == 1
    assert pb.render() == base().render()


def test_every_invalid_op_is_refused_with_a_reason_and_changes_nothing() -> None:
    cases = {
        "needs a section": Delta(op=DeltaOp.ADD, text="x"),
        "unknown section": Delta(op=DeltaOp.ADD, section="nope", text="x"),
        "ADD takes no target": Delta(
            op=DeltaOp.ADD, section="tools", text="x", target_ids=("pb-001",)
        ),
        "needs text": Delta(op=DeltaOp.ADD, section="tools", text="   "),
        "the limit is 60": Delta(op=DeltaOp.ADD, section="tools", text="word " * 61),
        "exactly 1": Delta(op=DeltaOp.UPDATE, target_ids=("pb-001", "pb-002"), text="x"),
        "no entry pb-099": Delta(op=DeltaOp.UPDATE, target_ids=("pb-099",), text="x"),
        "is retired": Delta(op=DeltaOp.UPDATE, target_ids=("pb-003",), text="x"),
        "at least 2": Delta(op=DeltaOp.MERGE, target_ids=("pb-001",), text="x"),
        "repeated": Delta(op=DeltaOp.MERGE, target_ids=("pb-001", "pb-001"), text="x"),
        "at least 1": Delta(op=DeltaOp.DELETE),
        "TAG needs a tag": Delta(op=DeltaOp.TAG, target_ids=("pb-001",)),
    }
    for expected, delta in cases.items():
        result = apply_deltas(base(), [delta])
        assert not result.applied and result.playbook == base()
        assert len(result.rejected) == 1 and expected in result.rejected[0].reason, expected
        assert result.rejected[0].stage == "schema"


def test_ops_apply_in_order_and_rejections_do_not_stop_the_rest() -> None:
    result = apply_deltas(
        base(),
        [
            Delta(id="a", op=DeltaOp.ADD, section="tools", text="First."),
            Delta(id="b", op=DeltaOp.UPDATE, target_ids=("pb-404",), text="x"),
            Delta(id="c", op=DeltaOp.UPDATE, target_ids=("pb-004",), text="First, rewritten."),
        ],
    )
    assert [d.id for d in result.applied] == ["a", "c"] and [
        r.delta.id for r in result.rejected
    ] == ["b"]
    assert result.playbook.get("pb-004").text == "First, rewritten."
    assert "c" in result.playbook.get("pb-004").provenance.deltas


def test_active_status_when_asked() -> None:
    result = apply_deltas(
        base(), [Delta(op=DeltaOp.ADD, section="tools", text="x")], status=EntryStatus.active
    )
    assert result.playbook.get("pb-004").status == EntryStatus.active
