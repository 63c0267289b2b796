from __future__ import annotations

from workgym.core.tasks import Task
from workgym.train.playbook.curator import Curator
from workgym.train.playbook.deltas import Delta, DeltaOp
from workgym.train.playbook.entries import Entry
from workgym.train.playbook.leak_lint import LeakLint
from workgym.train.playbook.lessons import Lesson, Reflection, TagVote
from workgym.train.playbook.playbook import Playbook

RULE = "Write every part code in upper case before you submit it."
REFS = {"E1": ("run/t1/0", "t1"), "E2": ("run/t1/3", "t1"), "E3": ("run/t2/1", "t2")}
LINT = LeakLint([Task(id="t1", family="f1", prompt="Find 'bolt'.", answer="QX-4821")])


def curator(**kw: object) -> Curator:
    return Curator(lint=LINT, **kw)  # type: ignore[arg-type]


def pb(*texts: str, budget: int = 3000) -> Playbook:
    return Playbook(
        entries=tuple(
            Entry(id=f"pb-00{i}", section="format", text=t) for i, t in enumerate(texts, 1)
        ),
        next_id=len(texts) + 1,
        token_budget=budget,
    )


def add(text: str, section: str = "format", evidence: tuple[str, ...] = ("E1",)) -> Lesson:
    return Lesson(op=DeltaOp.ADD, section=section, text=text, evidence=evidence)


def curate(lessons: list[Lesson], book: Playbook | None = None, **kw: object):  # type: ignore[no-untyped-def]
    gate_rejected = kw.pop("gate_rejected", ())
    return curator(**kw).curate(
        Reflection(lessons=tuple(lessons)),
        book or pb(),
        refs=REFS,
        next_delta=7,
        reflection_id="r-0002",
        gate_rejected=gate_rejected,  # type: ignore[arg-type]
    )


def reasons(cur) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    return [(r.stage, r.reason) for r in cur.rejected]


def test_a_good_lesson_becomes_a_numbered_delta_with_its_evidence() -> None:
    cur = curate([add(RULE, evidence=("E1", "E3", "E9"))])
    (d,) = cur.deltas
    assert (d.id, d.op, d.section, d.text) == ("d-0007", DeltaOp.ADD, "format", RULE)
    assert d.evidence == ("run/t1/0", "run/t2/1") and d.tasks == ("t1", "t2")
    assert d.reflection == "r-0002" and cur.next_delta == 8 and cur.rejected == ()


def test_schema_evidence_and_lint_are_enforced() -> None:
    cur = curate(
        [
            add(RULE, evidence=()),
            add(RULE, evidence=("E42",)),
            add("word " * 61),
            add(RULE, section="nowhere"),
            add("The answer for bolt is QX-4821."),
            add("The grader wants upper case."),
            Lesson(op=DeltaOp.UPDATE, target_ids=("pb-001",), text="", evidence=("E1",)),
        ]
    )
    stages = [s for s, _ in reasons(cur)]
    assert cur.deltas == () and stages == [
        "evidence",
        "evidence",
        "schema",
        "schema",
        "lint",
        "lint",
        "schema",
    ]
    assert "answer" in reasons(cur)[4][1] and "grader" in reasons(cur)[5][1]


def test_near_duplicate_add_becomes_update_or_merge() -> None:
    book = pb(RULE)
    reworded = RULE.replace("before you submit it", "before you submit it, always")
    (d,) = curate([add(reworded)], book).deltas
    assert (
        d.op == DeltaOp.UPDATE and d.target_ids == ("pb-001",) and "near-duplicate" in d.rationale
    )
    book2 = pb(RULE, RULE + " Always.")
    (m,) = curate([add(RULE + " Always!")], book2).deltas
    assert m.op == DeltaOp.MERGE and m.target_ids == ("pb-001", "pb-002")
    cur = curate([add(RULE.upper())], book)
    assert cur.deltas == () and reasons(cur) == [("dedup", "repeats pb-001 word for word")]
    assert curate([add("Check the part name spelling first.")], book).deltas[0].op == DeltaOp.ADD


def test_duplicates_within_a_batch_and_memory_of_rejections() -> None:
    cur = curate([add(RULE), add(RULE + ".")])
    assert len(cur.deltas) == 1 and reasons(cur) == [("dedup", "repeats d-0007 of this batch")]
    old = Delta(id="d-0002", op=DeltaOp.ADD, section="format", text=RULE)
    cur = curate([add(RULE)], gate_rejected=[old])
    assert cur.deltas == () and reasons(cur) == [
        ("memory", "the gates already rejected this as d-0002")
    ]
    gone = Delta(id="d-0003", op=DeltaOp.DELETE, target_ids=("pb-001",))
    cur = curate(
        [Lesson(op=DeltaOp.DELETE, target_ids=("pb-001",), evidence=("E1",))],
        pb(RULE),
        gate_rejected=[gone],
    )
    assert reasons(cur)[0][0] == "memory"


def test_at_most_max_deltas_and_the_budget() -> None:
    lessons = [
        add(f"Distinct rule number {w} about {w} things.") for w in ["one", "two", "three", "four"]
    ]
    cur = curate(lessons, max_deltas=2)
    assert len(cur.deltas) == 2 and [s for s, _ in reasons(cur)] == ["limit", "limit"]
    tight = pb(RULE, budget=45)  # room for the first entry only
    cur = curate([add("Check the part name spelling first, twice over.")], tight)
    assert cur.deltas == () and reasons(cur)[0][0] == "budget"


def test_unknown_targets_are_caught_before_gating_and_tags_pass_through() -> None:
    refl = Reflection(
        lessons=(
            Lesson(op=DeltaOp.UPDATE, target_ids=("pb-009",), text="x y", evidence=("E1",)),
            Lesson(op=DeltaOp.TAG, target_ids=("pb-001",), tag="harmful", evidence=("E1",)),
        ),
        tags=(TagVote(id="pb-001", tag="helpful"), TagVote(id="pb-404", tag="helpful")),
    )
    cur = curator().curate(refl, pb(RULE), refs=REFS, next_delta=1, reflection_id="r-1")
    assert cur.deltas == () and reasons(cur) == [("schema", "no entry pb-009")]
    assert [(d.op, d.target_ids, d.tag) for d in cur.tags] == [
        (DeltaOp.TAG, ("pb-001",), "helpful"),
        (DeltaOp.TAG, ("pb-001",), "harmful"),
    ]


def test_an_update_of_ids_that_name_no_entry_is_read_as_an_add() -> None:
    """The 1.5B reflector's reply on an empty playbook (claim 3 on toy-rules): the right lesson,
    written as an UPDATE of three ids made up from part codes. It is the ADD it means; an UPDATE
    that names a real entry, or one without a section, is judged by the schema as before."""
    made_up = Lesson(
        op=DeltaOp.UPDATE,
        target_ids=("rx-7910", "gm-9403", "pb-4888"),
        section="format",
        text=RULE,
        rationale="the best attempt capitalized the code",
        evidence=("E1", "E2"),
    )
    cur = curate([made_up], Playbook())
    (d,) = cur.deltas
    assert (d.op, d.target_ids, d.section, d.text) == (DeltaOp.ADD, (), "format", RULE)
    assert d.rationale.startswith("(an UPDATE of ids that name no entry, read as an ADD)")
    real = Lesson(
        op=DeltaOp.UPDATE,
        target_ids=("pb-001", "pb-404"),
        section="format",
        text=RULE,
        evidence=("E1",),
    )
    cur = curate([real], pb("Check the code."))
    assert cur.deltas == () and reasons(cur) == [
        ("schema", "UPDATE takes exactly 1 target id(s), got 2")
    ]
