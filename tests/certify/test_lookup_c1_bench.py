"""`bench/lookup-c1`, the held-out variant of lookup that claim 1 is scored on (decision 0179)."""

from __future__ import annotations

from collections import Counter

from fakes.toy_rules_agent import load_bench
from workgym.envs.lookup.env import Lookup


def test_five_whole_dev_families_none_of_them_trained_on_and_test_untouched() -> None:
    variant = load_bench("lookup_c1.py").LookupC1()
    splits = {s: list(variant.taskset.split(s)) for s in ("train", "dev", "test")}
    dev = Counter(t.family for t in splits["dev"])
    # The families decision 0179 names, drawn with seed 0 before anything was scored.
    assert sorted(dev) == [
        "building_of_person/t1", "manager/t1", "manager/t2", "team/t0", "team/t1"
    ]  # fmt: skip
    assert set(dev.values()) == {8}
    assert not {t.family for t in splits["train"]} & set(dev)
    lookup = Lookup().taskset
    assert [t.id for t in splits["test"]] == [t.id for t in lookup.split("test")]
    assert len(splits["train"]) + len(splits["dev"]) == len(lookup.split("train")) + len(
        lookup.split("dev")
    )
