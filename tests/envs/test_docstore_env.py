"""workgym/docstore: the generated corpus, FTS5 search, the oracle, and the investigation probes
of GUARDS.md played through the real episode loop."""

from __future__ import annotations

import asyncio
import collections
import json
from pathlib import Path
from typing import Any

import pytest

import workgym as wg
from workgym.envs.docstore import DocStore
from workgym.envs.docstore.causes import PLANTABLE, downstream
from workgym.envs.docstore.corpus import build_case
from workgym.envs.docstore.env import task_case
from workgym.envs.docstore.index import SearchIndex
from workgym.guards.attack import attack_async
from workgym.guards.catalog_generic import GENERIC


@pytest.fixture(scope="module")
def env() -> DocStore:
    return DocStore()


def play(env: DocStore, task: wg.Task, turns: list[wg.Message]) -> wg.Episode:
    model = wg.TaskScript("scripted/test", lambda t, e: turns)
    return asyncio.run(wg.run_episode(env, task, wg.Policy(model)))


def by_kind(env: DocStore) -> dict[str, wg.Task]:
    return {t.meta["kind"]: t for t in env.taskset}


def test_tasks_and_splits(env: DocStore) -> None:
    ts = env.taskset
    assert len(ts) == 72 and len(ts.families()) == 24
    kinds = collections.defaultdict(set)
    for family, split in ts.split_record()["families"].items():
        kinds[split].add(family.split("/")[0])
    assert len(kinds["train"]) == 8 and len(kinds["dev"]) == 5 and len(kinds["test"]) == 5
    for task in ts:
        planted = task.answer
        assert len(planted) == (2 if task.meta["kind"] == "two_causes" else 1)
        for cause in planted:  # nothing the agent sees names the cause
            assert cause["cause_type"] not in task.prompt


def test_corpus_is_deterministic_and_plants_a_findable_trace() -> None:
    for i, cause in enumerate(PLANTABLE):
        case = build_case(1000 + i, [cause])
        again = build_case(1000 + i, [cause])
        assert [d.model_dump() for d in case.docs] == [d.model_dump() for d in again.docs]
        planted = case.causes[0]
        docs = {d.doc_id: d for d in case.docs}
        assert all(e in docs for e in planted.evidence)
        assert planted.component not in case.symptoms  # the symptom shows elsewhere
        assert case.symptoms[0] in downstream(planted.component or "")
        changes = [d for d in case.docs if d.kind == "change"]
        assert len(changes) >= 6  # look-alike changes in every corpus
        for doc in case.docs:  # ids are opaque: they never name a cause or a component
            assert cause not in doc.doc_id.lower() and "-" in doc.doc_id


def test_search_finds_evidence_and_survives_hostile_queries(env: DocStore) -> None:
    task = by_kind(env)["expired_certificate"]
    case = task_case(task)
    index = SearchIndex(case.docs)
    hits = index.search("x509 certificate has expired", 10)
    assert {h["doc_id"] for h in hits} & set(task.answer[0]["evidence"])
    for query in [
        '"',
        "NEAR(a b",
        "* OR -",
        "'; DROP TABLE docs; --",
        "title:x",
        "{}()[]",
        "ünïcödé",
    ]:
        assert isinstance(index.search(query, 5), list)
    assert index.search("", 5) == [] and index.search("!!!", 5) == []
    index.close()


def test_tool_errors_go_back_to_the_agent(env: DocStore) -> None:
    task = env.taskset.split("dev")[0]

    def c(name: str, i: int, **args: Any) -> wg.Message:
        call = wg.ToolCall(id=f"c{i}", name=name, arguments=json.dumps(args))
        return wg.Message(role="assistant", tool_calls=[call])

    ep = play(
        env,
        task,
        [
            c("search_documents", 0, query="deploy", limit=0),
            c("search_documents", 1, query="x" * 600),
            c("search_documents", 2, query="zzzqqq"),
            c("read_document", 3, doc_id="NOPE-0000"),
            c("search_documents", 4, query="deploy", limit="5"),
            c(
                "submit_conclusion",
                5,
                causes=[{"cause_type": "gremlins", "evidence": []}],
                summary="",
            ),
            c(
                "submit_conclusion",
                6,
                causes=[{"cause_type": "noise", "direction": "sideways"}],
                summary="",
            ),
        ],
    )
    texts = [r.content for r in ep.tool_calls]
    assert "limit must be between 1 and 20" in texts[0]
    assert "keep it under 500" in texts[1]
    assert "no document matches" in texts[2]
    assert "no document 'NOPE-0000'" in texts[3]
    assert ep.tool_calls[4].status == "invalid_arguments"
    assert "not a cause type" in texts[5] and "deploy_regression" in texts[5]
    assert "direction must be" in texts[6]
    assert not ep.submitted and ep.verdict is not None and ep.verdict.status == wg.Status.no_answer


def test_the_oracle_solves_every_task_and_disk_rescoring_agrees(
    env: DocStore, tmp_path: Path
) -> None:
    run = wg.eval(
        env, "scripted/oracle", split="all", out=tmp_path / "o", progress=False, concurrency=8
    )
    episodes = list(run.episodes())
    assert len(episodes) == 72 and all(e.success for e in episodes)
    for ep in episodes[:10]:  # scoring reads only the record, so a re-score is identical
        assert env.score(env.taskset[ep.task_id], ep) == ep.verdict


def _planted(env: DocStore, task: wg.Task) -> list[dict[str, Any]]:
    return env.planted_causes(task)


def _most_common_type(env: DocStore) -> str:
    counts = collections.Counter(
        c["cause_type"] for t in env.taskset.split("train") for c in env.planted_causes(t)
    )
    return counts.most_common(1)[0][0]


def _attacks(env: DocStore, task: wg.Task) -> dict[str, list[wg.Message]]:
    """The investigation probes of GUARDS.md for one task; each must fail."""
    gold = _planted(env, task)
    first = gold[0]
    common = _most_common_type(env)
    other_type = next(c for c in PLANTABLE if c != first["cause_type"])
    out = {
        "enumerate-causes": env.submit_causes(
            task, gold + [first | {"cause_type": c} for c in PLANTABLE if c != first["cause_type"]]
        ),
        "hedge-two-causes": env.submit_causes(
            task, [first | {"cause_type": f"{first['cause_type']} or {other_type}"}, *gold[1:]]
        ),
        "wrong-cause-type": env.submit_causes(
            task, [first | {"cause_type": other_type}, *gold[1:]]
        ),
        "unobserved-evidence": env.submit_causes(task, gold, observe=False),
    }
    if common != first["cause_type"]:
        out["most-common-cause"] = env.submit_causes(
            task, [first | {"cause_type": common}, *gold[1:]]
        )
    if first["component"] is not None:
        symptom = env.symptom_components(task)[0]
        out["downstream-symptom"] = env.submit_causes(
            task, [first | {"component": symptom}, *gold[1:]]
        )
    return out


def test_investigation_probes_fail_and_aliases_pass(env: DocStore) -> None:
    played = collections.Counter()
    for task in {t.family: t for t in env.taskset}.values():
        for name, turns in _attacks(env, task).items():
            ep = play(env, task, turns)
            assert ep.verdict is not None and not ep.success, (name, task.family, ep.verdict)
            if name == "unobserved-evidence":
                assert "evidence_unobserved" in ep.verdict.flags
            played[name] += 1
        aliases = env.cause_vocabulary()
        gold = _planted(env, task)
        renamed = [c | {"cause_type": aliases[c["cause_type"]][0]} for c in gold]
        ep = play(env, task, env.submit_causes(task, renamed))
        assert ep.success, ("cause-alias", task.family, ep.verdict)  # FN guard
        played["cause-alias"] += 1
    assert set(played) >= {
        "enumerate-causes",
        "hedge-two-causes",
        "wrong-cause-type",
        "unobserved-evidence",
        "most-common-cause",
        "downstream-symptom",
        "cause-alias",
    }


def test_generic_answer_probes_of_guards_pass(env: DocStore) -> None:
    report = asyncio.run(attack_async(env, per_family=1, probes=list(GENERIC)))
    assert {"conclusion", "final_answer"} <= set(report.tags)
    assert report.passed, [(c.probe, c.family, c.got) for c in report.failures()]


def test_saved_directory_loads_back(env: DocStore, tmp_path: Path) -> None:
    saved = wg.load(env.save(tmp_path / "docs"))
    assert isinstance(saved, DocStore) and saved.content_hash() == env.content_hash()
