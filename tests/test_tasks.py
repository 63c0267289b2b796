from __future__ import annotations

import pytest

from workgym.core.errors import SealedSplitError
from workgym.core.tasks import SplitSpec, Task, TaskSet


def make(n_families: int = 40, per: int = 3) -> TaskSet:
    return TaskSet(
        [
            Task(family=f"f{f}", prompt=f"q{f}-{i}", answer=i)
            for f in range(n_families)
            for i in range(per)
        ]
    )


def test_task_id_is_content_hash_and_stable() -> None:
    a = Task(family="f", prompt="What is 2+2?", answer=4)
    b = Task(family="f", prompt="What is 2+2?", answer=5)
    assert a.id == b.id  # the answer is not part of the identity of the question
    assert a.id != Task(family="g", prompt="What is 2+2?").id
    assert len(a.id) == 16


def test_split_is_by_family_and_reproducible() -> None:
    ts = make()
    splits = {s: ts.split(s) for s in ("train", "dev", "test")}
    assert sum(len(v) for v in splits.values()) == len(ts)
    for s, tasks in splits.items():
        other = {t.family for o, ts_ in splits.items() if o != s for t in ts_}
        assert not {t.family for t in tasks} & other
    again = make()
    assert [t.id for t in again.split("test")] == [t.id for t in splits["test"]]


def test_split_fractions_roughly_hold_on_many_families() -> None:
    spec = SplitSpec()
    counts = {"train": 0, "dev": 0, "test": 0}
    for f in range(5000):
        counts[spec.assign(f"family-{f}")] += 1
    assert abs(counts["train"] / 5000 - 0.6) < 0.03
    assert abs(counts["test"] / 5000 - 0.2) < 0.03


def test_salt_changes_assignment_and_is_recorded() -> None:
    a, b = SplitSpec(salt="a"), SplitSpec(salt="b")
    fams = [f"f{i}" for i in range(200)]
    assert [a.assign(f) for f in fams] != [b.assign(f) for f in fams]
    record = make().split_record()
    assert record["spec"]["salt"] == "workgym"
    assert record["spec"]["algorithm"] == "sha256(salt|family)/v1"


def test_bad_split_spec_is_refused() -> None:
    with pytest.raises(ValueError, match="sum to 1"):
        SplitSpec(train=0.5, dev=0.5, test=0.5)
    with pytest.raises(ValueError, match="upgrade workgym"):
        SplitSpec(algorithm="md5/v0")


def test_training_view_has_no_test_items_and_refuses_test() -> None:
    ts = make()
    view = ts.training_view()
    test_ids = {t.id for t in ts.split("test")}
    assert test_ids and not test_ids & {t.id for t in view}
    with pytest.raises(SealedSplitError):
        view.split("test")
    with pytest.raises(SealedSplitError):
        view.split("all")
    assert len(view.split("train")) == len(ts.split("train"))


def test_jsonl_roundtrip_and_errors(tmp_path) -> None:
    ts = make(5, 2)
    ts.to_jsonl(tmp_path / "t.jsonl")
    back = TaskSet.from_jsonl(tmp_path / "t.jsonl")
    assert back.content_hash() == ts.content_hash()
    (tmp_path / "bad.jsonl").write_text('{"family": "f", "prompt": "x"}\n{oops\n')
    with pytest.raises(ValueError, match=r"bad\.jsonl:2"):
        TaskSet.from_jsonl(tmp_path / "bad.jsonl")
    with pytest.raises(ValueError, match="duplicate task id"):
        TaskSet([Task(id="x", family="f", prompt="a"), Task(id="x", family="g", prompt="b")])
    with pytest.raises(ValueError, match="unknown split"):
        ts.split("validation")


def test_split_advice_never_asks_for_a_negative_number_of_families() -> None:
    """Plenty of families but every one pinned away from train: the advice is to pin, not to
    'add about -N families' (what it said before 0198's toy-examples variant hit it)."""
    from workgym.core.tasks import split_advice

    tasks = [Task(family=f"f{i}", prompt=f"q{i}", answer=i) for i in range(60)]
    pinned = {f"f{i}": "dev" for i in range(60)}
    spec = SplitSpec(overrides=pinned)  # type: ignore[arg-type]
    advice = split_advice(TaskSet(tasks, spec), ["train", "test"])
    assert "add about" not in advice and "pin a family" in advice
