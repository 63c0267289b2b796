from __future__ import annotations

from workgym.train.playbook.entries import Counters, Entry, EntryStatus
from workgym.train.playbook.groups import Group
from workgym.train.playbook.playbook import Playbook
from workgym.train.playbook.pruning import compact, credit, prune


def group(task: str, *rewards: float) -> Group:
    refs = tuple(f"{task}/{i}" for i in range(len(rewards)))
    return Group(task, rewards, tuple(r == 1.0 for r in rewards), refs)


def test_credit_follows_the_group_advantage_of_citing_episodes() -> None:
    groups = [group("mix", 1, 0, 1, 0), group("pass", 1, 1), group("fail", 0, 0)]
    cited = {
        "mix/0": ["pb-001"],
        "mix/1": ["pb-002", "pb-404"],
        "mix/2": ["pb-001", "pb-001"],
        "pass/0": ["pb-003"],
        "fail/1": ["pb-001"],
    }
    got = credit(groups, cited, live={"pb-001", "pb-002", "pb-003"})
    assert got == {
        "pb-001": Counters(helpful=2, neutral=1, cited=3),
        "pb-002": Counters(harmful=1, cited=1),
        "pb-003": Counters(helpful=1, cited=1),
    }
    assert credit(groups, {}, live={"pb-001"}) == {}  # nothing cited, nothing credited


def entries(*specs: tuple[str, str, Counters]) -> Playbook:
    return Playbook(
        entries=tuple(Entry(id=i, section="strategy", text=t, counters=c) for i, t, c in specs),
        next_id=len(specs) + 1,
    )


def test_prune_retires_clearly_harmful_entries_only() -> None:
    pb = entries(
        ("pb-001", "a", Counters(helpful=1, harmful=4)),
        ("pb-002", "b", Counters(helpful=0, harmful=2)),  # too few uses
        ("pb-003", "c", Counters(helpful=3, harmful=5)),  # margin 2 < 3
    )
    new, notes = prune(pb, margin=3, min_uses=5)
    assert new.get("pb-001").status == EntryStatus.retired and notes == [
        "pruned pb-001: harmful 4 vs helpful 1"
    ]
    assert all(new.get(i).status == EntryStatus.active for i in ("pb-002", "pb-003"))
    assert prune(entries(("pb-001", "a", Counters())), margin=1, min_uses=1) == (
        entries(("pb-001", "a", Counters())),
        [],
    )


def test_compact_merges_near_duplicates_before_retiring() -> None:
    rule = "Write every part code in upper case before you submit it to the catalogue."
    pb = entries(
        ("pb-001", rule, Counters(helpful=1)),
        ("pb-002", rule.replace("it to", "it into"), Counters(helpful=5)),
        ("pb-003", "Check the spelling of part names against the lookup output.", Counters()),
    )
    tight = pb.model_copy(update={"token_budget": pb.tokens - 5})
    new, notes = compact(tight, merge_similarity=0.75)
    assert notes == ["merged pb-001 into pb-002 (similarity 0.89)"]  # pb-002 is more useful
    assert new.get("pb-001").status == EntryStatus.retired and not new.over_budget
    assert new.get("pb-002").counters.helpful == 6


def test_compact_retires_the_least_useful_when_nothing_is_similar() -> None:
    pb = entries(
        ("pb-001", "Read the task twice before acting on it.", Counters(helpful=2)),
        ("pb-002", "Prefer the lookup tool over guessing codes.", Counters(harmful=1)),
        ("pb-003", "Submit exactly once at the very end.", Counters(helpful=1)),
    )
    new, notes = compact(
        pb.model_copy(update={"token_budget": pb.tokens - 5}), merge_similarity=0.9
    )
    assert notes == ["retired pb-002 (least useful) to fit the token budget"]
    assert [e.id for e in new.live] == ["pb-001", "pb-003"]
    assert compact(pb, merge_similarity=0.9) == (pb, [])  # within budget: untouched
