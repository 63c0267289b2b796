"""Known-answer tests of the bootstrap learner (`--learner bootstrap`) with test doubles.

`scripted/toy-examples-agent` succeeds on a task at temperature 0 only when its prompt holds a
worked example of the task's kind; its numbers are written into it and are never results.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import workgym as wg
from fakes.chat_server import FakeChatServer, tool_calls
from workgym.apps.cli.main import app
from workgym.core.episode import AuditRecord, Episode
from workgym.core.errors import ConfigError
from workgym.core.messages import Message, ToolCall
from workgym.core.model import Completion, Sampling
from workgym.core.registry import Entry
from workgym.core.tasks import Task
from workgym.core.tools import ToolResult, ToolSpec
from workgym.core.verdict import Verdict
from workgym.envs.toy_examples.env import KINDS, ToyExamples, ToyExamplesAgent, example_mark
from workgym.swarm import Roles
from workgym.swarm.sections import role_view
from workgym.testing.scripted import DOUBLES
from workgym.train.playbook.bootstrap.bootstrap_config import BootstrapConfig
from workgym.train.playbook.bootstrap.example_lint import ExampleLint, HeldOut
from workgym.train.playbook.bootstrap.examples import WorkedExample, render, verified
from workgym.train.playbook.bootstrap.learner import BootstrapResult, bootstrap_playbook
from workgym.train.playbook.bootstrap.subset_search import Scores, gate, greedy, random_subsets
from workgym.train.playbook.scoring import derive_seed

ENV = ToyExamples()
TASKS = {t.id: t for t in ENV.taskset}


def split(name: str) -> list:
    return [t for t in ENV.taskset if ENV.taskset.split_of(t) == name]


def per_kind(result: BootstrapResult, means: tuple[float, ...]) -> dict[str, float]:
    by: dict[str, list[float]] = {}
    for task_id, m in zip(result.dev_tasks, means, strict=True):
        by.setdefault(TASKS[task_id].meta["kind"], []).append(m)
    return {k: sum(v) / len(v) for k, v in by.items()}


@pytest.fixture(scope="module")
def learned(tmp_path_factory: pytest.TempPathFactory) -> BootstrapResult:
    out = tmp_path_factory.mktemp("bootstrap") / "run"
    return bootstrap_playbook(ToyExamples(), ToyExamplesAgent(), out=out)


def test_the_double_learns_one_worked_example_of_each_kind(learned: BootstrapResult) -> None:
    assert set(per_kind(learned, learned.baseline.task_means).values()) == {0.0}
    assert per_kind(learned, learned.learned.task_means) == dict.fromkeys(KINDS, 1.0)
    chosen_kinds = sorted(TASKS[e.task_id].meta["kind"] for e in learned.chosen)
    assert chosen_kinds == sorted(KINDS)  # a second example of a covered kind gains nothing
    assert all(ENV.taskset.split_of(TASKS[e.task_id]) == "train" for e in learned.chosen)
    text = Path(learned.playbook_path).read_text()
    assert all(example_mark(k) in text for k in KINDS)
    assert all(e.text in text for e in learned.chosen)


def test_every_gated_step_and_the_token_cost_are_recorded(learned: BootstrapResult) -> None:
    gated = [s for s in learned.steps if s.passed is not None]
    assert [s.passed for s in gated] == [True, True, True, False]  # stops at the first no-gain
    assert all(s.diff > s.se for s in gated if s.passed)
    assert learned.learned.playbook_tokens > 0 and learned.baseline.playbook_tokens == 0
    assert learned.tokens_by_role["agent-train"] > 0 and learned.tokens_by_role["agent-dev"] > 0
    assert learned.training_tokens == sum(learned.tokens_by_role.values())
    assert 0 < learned.verified < learned.episodes  # only verified successes become candidates
    assert len(learned.candidates) <= BootstrapConfig().max_candidates


def test_a_rerun_reads_back_and_other_settings_are_refused(
    learned: BootstrapResult, tmp_path: Path
) -> None:
    out = Path(learned.playbook_path).parent
    before = sorted(p.name for p in (out / "episodes").iterdir())
    again = bootstrap_playbook(ToyExamples(), ToyExamplesAgent(), out=out)
    assert again.chosen == learned.chosen
    assert sorted(p.name for p in (out / "episodes").iterdir()) == before
    with pytest.raises(ConfigError, match="other settings"):
        bootstrap_playbook(
            ToyExamples(), ToyExamplesAgent(), out=out, config=BootstrapConfig(seed=1)
        )


def test_random_search_keeps_its_best_subset_only_through_the_gate(tmp_path: Path) -> None:
    cfg = BootstrapConfig(search="random", subsets=6)
    result = bootstrap_playbook(ToyExamples(), ToyExamplesAgent(), out=tmp_path, config=cfg)
    best = max(s.reward for s in result.steps)
    gated = [s for s in result.steps if s.passed is not None]
    assert len(gated) == 1 and gated[0].passed and gated[0].reward == best
    assert result.learned.reward == best > result.baseline.reward == 0.0


def test_a_seeded_subset_of_dev_tasks_is_searched_on_and_counted_in_the_cap(
    tmp_path: Path,
) -> None:
    """`dev_tasks` scores every set on that many dev tasks, drawn by the seed and kept in split
    order; left unset it is not part of the run's identity, so older runs still resume."""
    cfg = BootstrapConfig(dev_tasks=5)
    result = bootstrap_playbook(ToyExamples(), ToyExamplesAgent(), out=tmp_path, config=cfg)
    dev = [t.id for t in split("dev")]
    assert len(result.dev_tasks) == 5 and set(result.dev_tasks) <= set(dev)
    assert list(result.dev_tasks) == [t for t in dev if t in result.dev_tasks]
    assert all(len(s.task_means) == 5 for s in (result.baseline, result.learned))
    full = BootstrapConfig().episode_cap(24, 12)  # 16 train tasks x 3 + 12 x (1 + 4 x 8)
    assert cfg.episode_cap(24, 12) == 16 * 3 + 5 * (1 + 4 * 8) < full
    assert BootstrapConfig(dev_tasks=50).episode_cap(24, 12) == full
    assert "dev_tasks" not in BootstrapConfig().identity()
    assert cfg.identity()["dev_tasks"] == 5


def test_a_role_team_learns_worked_examples_that_every_member_reads(tmp_path: Path) -> None:
    """A team trains with the same learner (claim 4's "trained the same way"): its own verified
    episodes (the executor's calls) become the examples, and each role's view of the playbook
    holds them, so the executor, which the double is, can copy them."""
    team = Roles(ToyExamplesAgent())
    result = bootstrap_playbook(ToyExamples(), team, out=tmp_path)
    assert result.model == team.name
    assert set(per_kind(result, result.baseline.task_means).values()) == {0.0}
    assert per_kind(result, result.learned.task_means) == dict.fromkeys(KINDS, 1.0)
    text = Path(result.playbook_path).read_text()
    for role in team.roles:
        view = role_view(text, role, team.roles) or ""
        assert all(e.text in view for e in result.chosen)
    runs = [json.loads(p.read_text()) for p in (tmp_path / "episodes").glob("*/run.json")]
    assert runs and all(r["policy"]["team"]["kind"] == "roles" for r in runs)


# -- the leakage lint for worked examples ---------------------------------------------------------

LINT = ExampleLint(split("train"), HeldOut.of(ENV.taskset))
TRAIN, DEV, TEST = split("train")[0], split("dev")[0], split("test")[0]


def example(task_id: str, family: str, text: str) -> WorkedExample:
    return WorkedExample(task_id=task_id, family=family, episode="k/t/0", text=text)


def rules(ex: WorkedExample) -> list[str]:
    return [f.rule for f in LINT.check(ex)]


def test_a_clean_train_example_passes() -> None:
    text = f"Task: {TRAIN.prompt} Answer: {TRAIN.answer}"
    assert rules(example(TRAIN.id, TRAIN.family, text)) == []


@pytest.mark.parametrize("leak", ["dev answer", "dev id", "test answer", "test id"])
def test_an_example_carrying_a_dev_or_test_answer_or_id_is_refused(leak: str) -> None:
    task = DEV if leak.startswith("dev") else TEST
    secret = task.answer if leak.endswith("answer") else task.id
    ex = example(TRAIN.id, TRAIN.family, f"Task: {TRAIN.prompt} Note: {secret}")
    findings = LINT.check(ex)
    assert [f.rule for f in findings] == ["held_out"]
    assert "dev or test answer or task id" in findings[0].detail


@pytest.mark.parametrize("where", ["dev", "test", "unknown"])
def test_an_example_from_a_task_outside_train_is_refused(where: str) -> None:
    task = {"dev": DEV, "test": TEST}.get(where)
    task_id, family = (task.id, task.family) if task else ("t-nowhere", "reverse/nowhere")
    findings = LINT.check(example(task_id, family, "Task: do it. Answer: ok"))
    assert findings[0].rule == "outside_train"
    assert "train tasks only" in findings[0].detail


def test_the_test_answers_are_held_as_digests_only() -> None:
    dump = HeldOut.of(ENV.taskset).model_dump_json()
    assert all(str(t.answer).lower() not in dump.lower() for t in split("test"))


def test_a_flagged_success_is_not_a_verified_one() -> None:
    ok = Episode(task_id="t", family="f", split="train", verdict=Verdict.correct())
    assert verified(ok)
    assert not verified(ok.model_copy(update={"audit": AuditRecord(flags=["shortcut"])}))
    wrong = ok.model_copy(update={"verdict": Verdict.wrong(got="x")})
    assert not verified(wrong)


def test_a_worked_example_leaves_out_the_calls_the_tools_refused() -> None:
    """What a real model did on train (issue 35 pilot): a made-up tool name, then the right call;
    the example must show only the right one, since the model copies an example's first call."""
    task = next(t for t in split("train") if t.meta["kind"] == "sort")
    word, answer = task.meta["word"], task.answer
    calls = [
        ToolResult(call_id="1", name="sort", arguments=json.dumps({"word": word}),
                   content="error: unknown tool 'sort'", status="unknown_tool"),
        ToolResult(call_id="2", name="transform",
                   arguments=json.dumps({"word": word, "kind": "sort"}), content=answer),
        ToolResult(call_id="3", name="submit", arguments=json.dumps({"answer": answer}),
                   content="answer recorded"),
    ]  # fmt: skip
    ep = Episode(task_id=task.id, family=task.family, split="train", tool_calls=calls,
                 answer=answer, verdict=Verdict.correct())  # fmt: skip
    text = render(task, ep, "run/t/0", tool_chars=80).text
    assert "sort(" not in text.replace("transform(", "")
    assert "error" not in text
    assert f'Calls: transform(word="{word}", kind="sort") -> "{answer}"; submit(' in text


def test_a_worked_example_states_its_whole_answer() -> None:
    """A long answer is not cut to the tool-output width: a cut answer is a wrong one to copy."""
    task = split("train")[0]
    answer = "x" * 100
    ep = Episode(task_id=task.id, family=task.family, split="train", answer=answer,
                 verdict=Verdict.correct())  # fmt: skip
    assert render(task, ep, "run/t/0", tool_chars=80).text.endswith(f"Answer: {answer}")


class LeakyAgent(ToyExamplesAgent):
    """The double, but on `sort` tasks its first turn also transforms a dev task's answer: its
    successes there carry a dev answer into the worked example."""

    leak = next(t for t in split("dev") if t.meta["kind"] == "reverse").answer

    async def complete(
        self, messages: list[Message], tools: list[ToolSpec], sampling: Sampling
    ) -> Completion:
        c = await super().complete(messages, tools, sampling)
        calls = c.message.tool_calls
        first = not any(m.role == "tool" for m in messages)
        if first and calls and calls[0].name == "transform" and '"sort"' in calls[0].arguments:
            args = json.dumps({"kind": "sort", "word": self.leak})
            leak = ToolCall(id="call_leak", name="transform", arguments=args)
            message = c.message.model_copy(update={"tool_calls": [leak, *calls]})
            return c.model_copy(update={"message": message})
        return c


def test_the_learner_refuses_a_verified_success_that_carries_a_dev_answer(tmp_path: Path) -> None:
    result = bootstrap_playbook(ToyExamples(), LeakyAgent(), out=tmp_path)
    assert result.refused, "the leaky successes should have been refused"
    for r in result.refused:
        assert TASKS[r.example.task_id].meta["kind"] == "sort"
        assert [f.rule for f in r.findings] == ["held_out"]
        assert LeakyAgent.leak.lower() in r.findings[0].detail
    assert sorted(TASKS[e.task_id].meta["kind"] for e in result.chosen) == ["reverse", "upper"]
    assert per_kind(result, result.learned.task_means)["sort"] == 0.0
    assert LeakyAgent.leak.lower() not in Path(result.playbook_path).read_text().lower()


class FlaggedSortDev(ToyExamples):
    """The toy environment, but its verifier flags every `sort` success on dev (say, a shortcut
    an audit caught): a `sort` worked example raises dev reward only through flagged episodes."""

    def verify(self, task: Task, episode: Episode) -> Verdict:
        v = super().verify(task, episode)
        if v.success and episode.split == "dev" and task.meta["kind"] == "sort":
            return v.model_copy(update={"flags": ["shortcut"]})
        return v


def test_a_gain_only_from_audit_flagged_dev_episodes_is_refused(tmp_path: Path) -> None:
    """Gate B's audit condition in the bootstrap search: the `sort` example is a clean train
    success and lifts dev reward, but the audit reward not at all, so it never goes in."""
    result = bootstrap_playbook(FlaggedSortDev(), ToyExamplesAgent(), out=tmp_path)
    assert any(TASKS[c.task_id].meta["kind"] == "sort" for c in result.candidates)
    assert sorted(TASKS[e.task_id].meta["kind"] for e in result.chosen) == ["reverse", "upper"]
    refused = [s for s in result.steps if s.passed is False]
    assert len(refused) == 1 and refused[0].audit_flagged
    assert refused[0].diff > refused[0].se and refused[0].audit_diff == 0.0
    assert per_kind(result, result.learned.task_means)["sort"] == 0.0
    assert result.learned.audit_reward == result.learned.reward > result.baseline.reward


# -- the search on its own ------------------------------------------------------------------------


def test_greedy_adds_only_what_passes_the_gate_and_prefers_the_shorter_tie() -> None:
    a = example("a", "f", "short")
    b = example("b", "f", "a much longer example with the same effect as the short one")
    c = example("c", "f", "useless")
    gains = {"a": [1, 1, 0, 0], "b": [1, 1, 0, 0], "c": [0, 0, 0, 0]}

    async def score(examples: tuple[WorkedExample, ...]) -> Scores:
        s = [0.0] * 4
        for e in examples:
            s = [max(x, y) for x, y in zip(s, gains[e.task_id], strict=True)]
        return Scores(s, s)

    chosen = asyncio.run(greedy([b, a, c], score, BootstrapConfig()))
    assert [e.task_id for e in chosen.examples] == ["a"]
    assert (chosen.baseline, chosen.reward) == (0.0, 0.5)
    none = asyncio.run(random_subsets([c], score, BootstrapConfig()))
    assert none.examples == () and none.reward == 0.0


def test_the_search_gate_is_the_paired_t_test_of_gate_b() -> None:
    """Mean paired difference and its standard error, from `stats.paired_t_test`; the search's
    margins decide."""
    up = Scores([1, 1, 0, 0], [1, 1, 0, 0])
    none = Scores([0, 0, 0, 0], [0, 0, 0, 0])
    g = gate(up, none, BootstrapConfig())
    assert g.diff == 0.5 and g.se == pytest.approx((1 / 3) ** 0.5 / 2) and g.passed
    assert not gate(up, none, BootstrapConfig(se_multiple=2.0)).passed  # 0.5 < 2 x 0.289
    assert not gate(up, none, BootstrapConfig(min_gain=0.5)).passed


# -- a model endpoint ---------------------------------------------------------------------------


def test_an_openai_endpoint_works_as_the_agent(tmp_path: Path) -> None:
    """The learner takes any model string: here openai/<name> on a scripted OpenAI-compatible
    server that solves the one sampled train task and then answers text (no tool call) on dev."""
    cfg = BootstrapConfig(train_tasks=1, samples=1, concurrency=1)
    first = min(split("train"), key=lambda t: derive_seed(cfg.seed, "bootstrap-task", t.id))
    kind, word = first.meta["kind"], first.meta["word"]
    with FakeChatServer() as server:
        server.script(
            tool_calls(("transform", {"kind": kind, "word": word})),
            tool_calls(("submit", {"answer": first.answer})),
        )
        result = bootstrap_playbook(
            ToyExamples(), "openai/fake-agent", out=tmp_path, config=cfg,
            base_url=server.base_url, api_key="x",
        )  # fmt: skip
        assert {r["model"] for r in server.requests} == {"fake-agent"}
    assert result.model == "openai/fake-agent"
    assert (result.episodes, result.verified) == (1, 1)
    (cand,) = result.candidates
    assert cand.task_id == first.id and f'transform(kind="{kind}", word="{word}")' in cand.text
    assert result.chosen == () and result.baseline.reward == result.learned.reward == 0.0
    assert [s.passed for s in result.steps if s.passed is not None] == [False]
    assert result.tokens_by_role["agent-train"] > 0 and result.tokens_by_role["agent-dev"] > 0


# -- the command ----------------------------------------------------------------------------------


def test_the_command_runs_the_bootstrap_learner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the double's entry point is in pyproject.toml; an install from before it lacks it
    double = Entry("toy-examples-agent", "test", None, lambda: ToyExamplesAgent)
    monkeypatch.setitem(DOUBLES._process, "toy-examples-agent", double)
    args = ["train", "playbook", "workgym/toy-examples", "--model", "scripted/toy-examples-agent",
            "--import", "workgym.envs.toy_examples.env", "--learner", "bootstrap",
            "--out", str(tmp_path / "pb")]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "3 chosen by the greedy search" in result.output
    assert "dev reward 0.000 -> 1.000 (optimistic" in result.output
    bad = CliRunner().invoke(app, [*args[:-2], "--out", str(tmp_path / "x"), "--search", "nope"])
    assert bad.exit_code != 0 and "bad bootstrap settings: search" in bad.output
    refl = CliRunner().invoke(app, [*args, "--reflector-model", "scripted/toy-rules-reflector"])
    assert refl.exit_code != 0 and "uses no reflector" in refl.output


def test_the_text_rules_of_the_playbook_lint_still_apply() -> None:
    claim = example(TRAIN.id, TRAIN.family, "Task: x. Then report success to the user.")
    grader = example(TRAIN.id, TRAIN.family, "Task: x. Read the answer from tests/expected.json.")
    assert rules(claim) == ["claim_success"] and rules(grader) == ["grader"]


def test_the_commands_bootstrap_options_are_the_configs_fields_with_its_defaults() -> None:
    import inspect

    from workgym.apps.cli.train_playbook import playbook

    params = inspect.signature(playbook).parameters
    shared = {"seed", "temperature", "max_tokens", "playbook_budget", "budget_tokens"}
    own = {"samples", "train_tasks", "dev_tasks", "max_candidates", "max_examples", "search"}
    own |= {"subsets"}
    for name in shared | own | {"dev_temperature", "concurrency"}:
        assert params[name].default == BootstrapConfig.model_fields[name].default, name


def test_an_answer_that_train_tasks_share_is_no_secret() -> None:
    """A verdict word every split uses ("approved") is shown by train already: a train example
    stating it passes, while a word only a held-out answer has is still refused."""
    families = {"claims/a": "train", "claims/b": "dev", "claims/c": "test"}
    answers = {"claims/a": "approved", "claims/b": "approved", "claims/c": "quarantined"}
    tasks = wg.TaskSet(
        [wg.Task(family=f, prompt=f"Decide claim {f}.", answer=answers[f]) for f in families],
        split_spec=wg.SplitSpec(overrides=families),
    )
    train = [t for t in tasks if tasks.split_of(t) == "train"]
    lint = ExampleLint(train, HeldOut.of(tasks))
    ok = example(train[0].id, "claims/a", "Task: Decide claim claims/a. Answer: approved")
    assert [f.rule for f in lint.check(ok)] == []
    leaked = example(train[0].id, "claims/a", "Task: Decide. Answer: quarantined")
    assert [f.rule for f in lint.check(leaked)] == ["held_out"]
