"""One way to build a run's spec (`RunSpec.for_run`), and the executor's job by keyword only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import workgym as wg
from workgym.core.run_limits import RunLimits
from workgym.envs.toy.env import ToyShop
from workgym.run.executors.executor import Job
from workgym.run.policy import Policy
from workgym.run.rundir import RunSpec


def test_for_run_reads_the_environment_and_the_policy(toy: ToyShop) -> None:
    policy = Policy("scripted/oracle", system_prompt="be brief")
    spec = RunSpec.for_run(toy, policy, split="dev", epochs=2, seed=7, n_tasks=5)
    assert (spec.env_id, spec.env_version, spec.env_hash) == (
        toy.id,
        toy.version,
        toy.content_hash(),
    )
    assert spec.env_ref == toy.id  # a built-in environment has no folder
    assert spec.policy == policy.describe() and spec.policy_hash == policy.hash
    assert (spec.split, spec.epochs, spec.seed, spec.n_tasks) == ("dev", 2, 7, 5)
    assert spec.limits == toy.limits.model_dump()
    assert spec.split_spec == toy.taskset.split_spec.model_dump()
    assert spec.placement == {} and spec.forced == [] and spec.sample is None
    assert spec.run_limits is None


def test_for_run_sorts_forced_and_drops_limits_that_are_all_off(toy: ToyShop) -> None:
    policy = Policy("scripted/oracle")
    off = RunSpec.for_run(
        toy, policy, split="dev", epochs=1, seed=0, n_tasks=1, run_limits=RunLimits()
    )
    assert off.run_limits is None  # a run from before run limits resumes with them off
    on = RunSpec.for_run(
        toy,
        policy,
        split="dev",
        epochs=1,
        seed=0,
        n_tasks=1,
        env_ref="envs/shop",
        forced=["b", "a"],
        sample=3,
        run_limits=RunLimits(max_repeats=2),
    )
    assert on.env_ref == "envs/shop" and on.forced == ["a", "b"] and on.sample == 3
    assert on.run_limits == RunLimits(max_repeats=2).model_dump()


def test_eval_writes_the_spec_for_run_builds(tmp_path: Path, toy: ToyShop) -> None:
    out = tmp_path / "r"
    wg.eval(toy, "scripted/oracle", split="dev", limit=3, seed=5, out=out, progress=False)
    written = RunSpec.model_validate(json.loads((out / "run.json").read_text()))
    built = RunSpec.for_run(
        toy, Policy("scripted/oracle"), split="dev", epochs=1, seed=5, n_tasks=3
    )
    assert written.identity() == built.identity()


def test_job_takes_keywords_only(toy: ToyShop) -> None:
    policy = Policy("scripted/oracle")
    job = Job(env=toy, policy=policy, split="dev", run_seed=1, todo=[], concurrency=2)
    assert (job.concurrency, job.max_retries, job.retry_backoff_s) == (2, 2, 0.5)
    with pytest.raises(TypeError):
        Job(toy, policy, "dev", 1, [])  # type: ignore[misc]
