"""workgym/lookup: the directory, task phrasings and splits, the tools' errors, the verifier's
normalisation, the constant baseline, and the generic reward-hacking probes through the loop."""

from __future__ import annotations

import asyncio
import collections
import json

import pytest

import workgym as wg
from workgym.envs.lookup.directory import PEOPLE_BY_NAME, TEAMS_BY_NAME
from workgym.envs.lookup.env import Lookup, normalise
from workgym.guards.attack import attack_async
from workgym.guards.baselines import TrainAnswers
from workgym.guards.catalog_generic import GENERIC


@pytest.fixture(scope="module")
def env() -> Lookup:
    return Lookup()


def call(name: str, args: dict[str, str], call_id: str) -> wg.ToolCall:
    return wg.ToolCall(id=call_id, name=name, arguments=json.dumps(args))


def play(env: Lookup, task: wg.Task, turns: list[wg.Message]) -> wg.Episode:
    model = wg.TaskScript("scripted/test", lambda t, e: turns)
    return asyncio.run(wg.run_episode(env, task, wg.Policy(model)))


def turn(*calls: wg.ToolCall) -> wg.Message:
    return wg.Message(role="assistant", content="", tool_calls=list(calls))


def test_registered_and_every_split_holds_hinted_and_plain_phrasings(env: Lookup) -> None:
    assert isinstance(wg.load("workgym/lookup"), Lookup)
    ts = env.taskset
    assert len(ts) == 224 and len(ts.families()) == 28
    templates = collections.defaultdict(set)
    for family, split in ts.split_record()["families"].items():
        templates[split].add(int(family.rsplit("/t", 1)[1]) < 2)
    assert all(templates[s] == {True, False} for s in ("train", "dev", "test")), templates


def test_answers_follow_the_directory(env: Lookup) -> None:
    for task in env.taskset:
        x, kind = task.meta["subject"], task.meta["kind"]
        if kind in ("lead_of_person", "building_of_person"):
            team = TEAMS_BY_NAME[PEOPLE_BY_NAME[x]["team"]]
            assert task.answer == team["lead" if kind == "lead_of_person" else "building"]
        assert x in task.prompt and str(task.answer) not in task.prompt


def test_two_lookups_then_submit_is_correct_and_lists_are_wrong(env: Lookup) -> None:
    task = next(t for t in env.taskset if t.meta["kind"] == "lead_of_person")
    person = PEOPLE_BY_NAME[task.meta["subject"]]
    looked = [
        turn(call("team_of", {"name": person["name"].upper()}, "a")),
        turn(call("lead_of", {"name": f"{person['team']} team"}, "b")),
    ]
    good = play(
        env, task, [*looked, turn(call("submit_answer", {"answer": f"{task.answer}."}, "c"))]
    )
    assert good.success and not good.tool_calls[0].is_error and not good.tool_calls[1].is_error
    assert [c.content for c in good.tool_calls[:2]] == [person["team"], task.answer]
    listed = f"{task.answer}, Maria Lopez"
    bad = play(env, task, [*looked, turn(call("submit_answer", {"answer": listed}, "c"))])
    assert not bad.success


def test_the_oracle_looks_up_before_it_submits_and_solves_every_task(env: Lookup) -> None:
    # Teacher forcing scores the gold trajectory's next action: a gold that submits at once
    # would ask for an answer nobody can know without the lookups.
    for task in env.taskset:
        turns = env.oracle(task)
        names = [m.tool_calls[0].name for m in turns]
        hops = 2 if task.meta["kind"].endswith("_of_person") else 1
        assert len(names) == hops + 1 and names[-1] == "submit_answer"
        assert len(turns) <= env.limits.max_turns
    sample = [t for t in env.taskset if t.family.endswith("/t2")]
    assert all(play(env, t, env.oracle(t)).success for t in sample)


def test_unknown_names_come_back_as_tool_errors_that_say_what_to_do(env: Lookup) -> None:
    task = env.taskset.split("train")[0]
    episode = play(
        env,
        task,
        [
            turn(call("city_of", {"name": "Nobody Here"}, "a")),
            turn(call("building_of", {"name": "nope"}, "b")),
        ],
    )
    first, second = episode.tool_calls
    assert first.is_error and "full name" in first.content
    assert second.is_error and "payments" in second.content


def test_normalise_ignores_case_space_and_a_full_stop_only() -> None:
    assert normalise("  North   Hall. ") == normalise("north hall")
    assert normalise("North Hall Annex") != normalise("North Hall")


def test_constant_guess_stays_under_the_default_threshold(env: Lookup) -> None:
    answers = TrainAnswers(env)
    hits = [answers.most_common(t) == t.answer for t in env.taskset]
    assert sum(hits) / len(hits) <= 0.10


def test_generic_probes_get_their_expected_verdicts(env: Lookup) -> None:
    report = asyncio.run(attack_async(env, per_family=1, probes=list(GENERIC)))
    assert report.passed, [(c.probe, c.family, c.got) for c in report.failures()]
