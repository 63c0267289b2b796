"""`workgym certify`, step by step: admission, the look, the runs, the certificate.

Order matters. Admission, the suites (their extras) and the models' endpoints are checked
before the test split is opened, so a refused environment or a dead endpoint costs no look. The
look is recorded before any test episode runs, so an attempt abandoned halfway still counts. The
frozen inputs are fixed before the first episode, and the certificate is built only from what
the run directories hold.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workgym.certify import arms, looks
from workgym.certify import plan as plan_mod
from workgym.certify.certificate import Side, build, check_admission, env_record, policy_record
from workgym.certify.certificate import write as write_certificate
from workgym.certify.curve import read_curve
from workgym.certify.schema import Certificate, Frozen, LooksRecord, PolicyRecord
from workgym.core.environment import Environment
from workgym.core.errors import ConfigError
from workgym.core.loading import load
from workgym.core.missing_extra import require
from workgym.core.version import __version__
from workgym.run.policy import Policy, recorded_placement
from workgym.run.preflight import models_reachable
from workgym.run.rundir import RunSpec, read_spec
from workgym.stats.power import Estimand

DEFAULT_SUITES = ("suites/reasoning", "suites/bfcl", "suites/ifeval")
TEST = "test"


@dataclass
class Request:
    """Everything `workgym certify` was asked; policies only for the ENV form."""

    env: str | None = None
    from_runs: list[Path] = field(default_factory=list)
    baseline: Policy | None = None
    candidate: Policy | None = None
    suites: list[str] = field(default_factory=lambda: list(DEFAULT_SUITES))
    epochs: int = 1
    seed: int = 0
    alpha: float = 0.05
    margin: float = 0.05
    margins: dict[str, float] = field(default_factory=dict)
    limit: int | None = None
    suite_limit: int | None = None
    concurrency: int = 8
    out: Path | None = None
    force: bool = False
    admission_dir: Path | None = None
    looks_log: Path | None = None
    base_url: str | None = None
    api_key: str | None = None
    progress: bool = True
    n_resamples: int = 100_000
    curve: Path | None = None  # a training --out folder or its curve file (certify.curve)
    estimand: str = "auto"  # auto, items or families (certify.plan.resolve_estimand)
    force_design: bool = False  # run a design that cannot pass its own gate anyway
    dev_runs: list[Path] = field(default_factory=list)  # the baseline's dev runs, for --plan
    baseline_rate: float | None = None  # stated baseline success rate, for --plan
    power: float = 0.8
    target: float | None = None  # the gain --plan sizes the design for
    plan_sims: int = 400


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


def _items(env: Environment, limit: int | None) -> list[tuple[str, str]]:
    tasks = env.taskset.split(TEST)
    if limit is not None:
        tasks = tasks[:limit]
    if len(tasks) < 2:
        raise ConfigError(
            f"{env.id} has {len(tasks)} items in its test split; a certificate needs held-out "
            "items (check the split fractions of the environment)"
        )
    return [(t.id, t.family) for t in tasks]


@dataclass
class _Arms:
    """The two policies: given (ENV form) or rebuilt from run.json on demand (--from-runs)."""

    baseline: PolicyRecord
    candidate: PolicyRecord
    given: tuple[Policy, Policy] | None
    specs: tuple[RunSpec, RunSpec] | None
    base_url: str | None
    api_key: str | None

    def policies(self) -> tuple[Policy, Policy]:
        if self.given is not None:
            return self.given
        assert self.specs is not None
        kw = {"base_url": self.base_url, "api_key": self.api_key}
        return arms.policy_from_spec(self.specs[0], **kw), arms.policy_from_spec(
            self.specs[1], **kw
        )


def same_numerics(baseline: dict[str, Any], candidate: dict[str, Any]) -> None:
    """Refuse two local-model arms whose weights ran on other devices or dtypes.

    A bfloat16 arm against a float32 one measures rounding as well as the change under test;
    both arms of a certificate play with the same `--device` and `--dtype` or not at all.
    """
    b, c = recorded_placement(baseline), recorded_placement(candidate)
    if b is not None and c is not None and b != c:
        raise ConfigError(
            f"the baseline's weights are on {b} but the candidate's on {c}: a certificate "
            "compares arms with the same numerics; run both with the same --device and --dtype"
        )


def _complete(run: Path, n: int, epochs: int) -> bool:
    from workgym.certify.comparison import episodes_digest

    return (run / "episodes.jsonl").exists() and episodes_digest(run)[1] >= n * epochs


async def certify_async(req: Request) -> tuple[Certificate, Path, Path]:
    """Run what is missing and write certificate.json + certificate.html; return their paths."""
    require("plots", "the certificate's report", "matplotlib")  # before any run, not after
    if req.from_runs:
        env, ref, task_runs, suite_runs, pair = _from_runs(req)
        epochs, seed, n_items = task_runs[2].epochs, task_runs[2].seed, task_runs[2].n_tasks
        items = _items(env, n_items)
        limit_used: int | None = n_items if n_items < len(env.taskset.split(TEST)) else None
    else:
        if not req.env or req.baseline is None or req.candidate is None:
            raise ConfigError(
                "give ENV with --baseline-model and --candidate-model, or --from-runs BASE CAND"
            )
        env, ref = load(req.env), req.env
        pair = _Arms(
            policy_record(req.baseline.describe(), req.baseline.hash),
            policy_record(req.candidate.describe(), req.candidate.hash),
            (req.baseline, req.candidate),
            None,
            req.base_url,
            req.api_key,
        )
        same_numerics(req.baseline.describe(), req.candidate.describe())
        epochs, seed = req.epochs, req.seed
        items = _items(env, req.limit)
        limit_used = req.limit
        task_runs = None
        suite_runs = {}
    out = req.out or Path("certificates") / _slug(env.id)
    # read before the look is recorded: a wrong --curve costs no look at the test split
    curve = read_curve(req.curve, out) if req.curve is not None else None
    admission, forced = check_admission(env, force=req.force, directory=req.admission_dir)
    # preflight, before the look: a missing extra, a typo'd suite or a dead endpoint costs none
    suite_ids = list(dict.fromkeys([*suite_runs, *req.suites]))
    suite_envs = {s: _load_suite(s) for s in suite_ids}
    suite_items = {
        s: _items(e, suite_runs[s][2] if s in suite_runs else req.suite_limit)
        for s, e in suite_envs.items()
    }
    # the design, before the look: an estimand the split cannot support, or a design that cannot
    # pass its own gate, is refused here and costs none
    estimand, design = _design(req, env.id, items, suite_items, epochs, rates=None)
    if (why := plan_mod.refusal(design)) is not None and not req.force_design:
        raise ConfigError(why)
    if pair.given is not None:
        await models_reachable(*pair.given)
    task_env = env_record(env, ref, TEST, items)
    if task_runs is not None:
        b_run, c_run = task_runs[0], task_runs[1]
    else:
        b_run, c_run = out / "runs" / "task" / "baseline", out / "runs" / "task" / "candidate"
    sides = [Side(task_env, b_run, c_run, items)]
    side_envs = [env]
    for suite_id in suite_ids:
        suite_env, s_items = suite_envs[suite_id], suite_items[suite_id]
        if suite_id in suite_runs:
            sb, sc, _ = suite_runs[suite_id]
        else:
            sb = out / "runs" / _slug(suite_id) / "baseline"
            sc = out / "runs" / _slug(suite_id) / "candidate"
        sides.append(Side(env_record(suite_env, suite_id, TEST, s_items), sb, sc, s_items))
        side_envs.append(suite_env)
    frozen = Frozen(
        created_at=looks.now(),
        workgym_version=__version__,
        alpha=req.alpha,
        epochs=epochs,
        seed=seed,
        task_margin=req.margin,
        margins={s: req.margins.get(s, req.margin) for s in suite_ids},
        limit=limit_used,
        n_resamples=req.n_resamples,
        baseline=pair.baseline,
        candidate=pair.candidate,
        admission=admission,
        looks=LooksRecord(log="", attempt=0, previous_attempts=0),  # set at the look, below
        rules=_rules(),
        curve=curve,
        estimand=estimand,
    )
    # runs that are complete before the look are a re-read when their gate was read before
    played = all(_complete(s.baseline_run, len(s.items), epochs) for s in sides) and all(
        _complete(s.candidate_run, len(s.items), epochs) for s in sides
    )
    log = looks.log_for(env, req.admission_dir)
    look = looks.Look(
        at=looks.now(),
        kind="certify",
        env_id=env.id,
        env_hash=task_env.hash,
        split=TEST,
        split_hash=task_env.split_hash,
        baseline=pair.baseline.hash,
        candidate=pair.candidate.hash,
        out=str(out),
        gate=_gate(frozen),
        runs=_runs_digest(sides) if played else "",
    )
    seen = looks.record_look(
        log,
        look,
        merge=[req.looks_log] if req.looks_log is not None else [],
        certificates=[out / "certificate.json"],
    )
    for side_env, side in zip(side_envs, sides, strict=True):
        await _ensure(
            side_env, side.baseline_run, side.candidate_run, pair, len(side.items),
            epochs, seed, forced, req,
        )  # fmt: skip
    looks.bind_runs(log, seen, look, _runs_digest(sides))
    frozen = frozen.model_copy(update={"looks": seen, "created_at": looks.now()})
    out.mkdir(parents=True, exist_ok=True)
    cert = build(frozen, sides[0], sides[1:], out)
    json_path, html_path = write_certificate(cert, out)
    return cert, json_path, html_path


def _gate(frozen: Frozen) -> str:
    """Digest of every frozen setting the verdict depends on besides the episodes: the same
    runs read again under the same gate are a re-read, under another gate a new look."""
    import hashlib
    import json

    body = frozen.model_dump(
        mode="json", exclude={"created_at", "workgym_version", "looks", "admission", "curve"}
    )
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def _runs_digest(sides: list[Side]) -> str:
    """Digest of the episodes of every run the certificate reads, in order."""
    import hashlib

    from workgym.certify.comparison import episodes_digest

    h = hashlib.sha256()
    for side in sides:
        for run in (side.baseline_run, side.candidate_run):
            h.update(episodes_digest(run)[0].encode())
    return h.hexdigest()


def _design(
    req: Request,
    env_id: str,
    items: list[tuple[str, str]],
    suite_items: dict[str, list[tuple[str, str]]],
    epochs: int,
    rates: tuple[float, ...] | None,
    rates_from: str = "",
) -> tuple[Estimand, plan_mod.Plan]:
    sizes: dict[str, int] = {}
    for _, family in items:
        sizes[family] = sizes.get(family, 0) + 1
    estimand, reason = plan_mod.resolve_estimand(req.estimand, len(sizes), req.alpha)
    design = plan_mod.make_plan(
        env_id=env_id,
        family_sizes=list(sizes.values()),
        epochs=epochs,
        alpha=req.alpha,
        estimand=estimand,
        reason=reason,
        suites={s: (len(i), req.margins.get(s, req.margin)) for s, i in suite_items.items()},
        rates=rates,
        rates_from=rates_from,
        power=req.power,
        target=req.target,
        sims=req.plan_sims,
        seed=req.seed,
    )
    return estimand, design


def plan(req: Request) -> plan_mod.Plan:
    """`certify --plan`: the design's numbers; opens no test episode and records no look."""
    if not req.env:
        raise ConfigError("--plan needs ENV (the environment whose test split is planned)")
    env = load(req.env)
    items = _items(env, req.limit)
    suite_items = {s: _items(_load_suite(s), req.suite_limit) for s in req.suites}
    rates: tuple[float, ...]
    if req.dev_runs:
        rates = plan_mod.dev_rates(req.dev_runs, env.content_hash())
        source = f"{len(rates)} dev items of {len(req.dev_runs)} baseline run(s)"
    elif req.baseline_rate is not None:
        if not 0.0 <= req.baseline_rate < 1.0:
            raise ConfigError(f"--baseline-rate {req.baseline_rate}: give a rate in [0, 1)")
        rates, source = (req.baseline_rate,), "the stated --baseline-rate"
    else:
        raise ConfigError(
            "--plan needs the baseline's success rate: --dev-run RUN (its dev-split runs) or "
            "--baseline-rate R"
        )
    return _design(req, env.id, items, suite_items, req.epochs, rates, source)[1]


def _rules() -> list[str]:
    from workgym.certify.certificate import RULES

    return list(RULES)


async def _ensure(
    env: Environment,
    b_run: Path,
    c_run: Path,
    pair: _Arms,
    n: int,
    epochs: int,
    seed: int,
    forced: list[str],
    req: Request,
) -> None:
    """Run both arms on `env` unless both run directories are already complete."""
    if _complete(b_run, n, epochs) and _complete(c_run, n, epochs):
        return
    baseline, candidate = pair.policies()
    await arms.run_pair(
        arms.Pair(env, TEST, b_run, c_run),
        baseline,
        candidate,
        epochs=epochs,
        seed=seed,
        limit=n,
        concurrency=req.concurrency,
        forced=forced,
        progress=req.progress,
    )


def _load_suite(suite_id: str) -> Environment:
    from workgym.core.choices import choose
    from workgym.core.loading import registered

    known = registered()
    if suite_id not in known and not Path(suite_id).exists():
        choose("suite", suite_id, [k for k in known if k.startswith("suites/")], "--suites")
    return load(suite_id)


def _from_runs(
    req: Request,
) -> tuple[
    Environment,
    str,
    tuple[Path, Path, RunSpec],
    dict[str, tuple[Path, Path, int]],
    _Arms,
]:
    runs = list(req.from_runs)
    if len(runs) < 2 or len(runs) % 2:
        raise ConfigError(
            "--from-runs takes pairs: BASE_RUN CAND_RUN for the task, then one pair per suite"
        )
    specs = [read_spec(r) for r in runs]
    b_spec, c_spec = specs[0], specs[1]
    for spec, run in zip(specs, runs, strict=True):
        if spec.split != TEST:
            raise ConfigError(
                f"{run} ran split {spec.split!r}; a certificate compares runs on the test split"
            )
    for i in range(0, len(specs), 2):
        b, c = specs[i], specs[i + 1]
        if b.env_hash != c.env_hash or b.seed != c.seed or b.epochs != c.epochs:
            raise ConfigError(
                f"{runs[i]} and {runs[i + 1]} are not a pair: environment, seed and epochs must "
                "be the same in both arms"
            )
        if b.n_tasks != c.n_tasks:
            raise ConfigError(f"{runs[i]} and {runs[i + 1]} cover different numbers of tasks")
        if (b.policy_hash, c.policy_hash) != (b_spec.policy_hash, c_spec.policy_hash):
            raise ConfigError(f"{runs[i]} / {runs[i + 1]} were made by other policies")
    same_numerics(b_spec.policy, c_spec.policy)
    env = load(b_spec.env_ref)
    if env.content_hash() != b_spec.env_hash:
        raise ConfigError(
            f"{b_spec.env_ref} changed since {runs[0]} ran (hash differs); certify the runs "
            "against the environment they were made with"
        )
    suites: dict[str, tuple[Path, Path, int]] = {}
    for i in range(2, len(runs), 2):
        suites[specs[i].env_ref] = (runs[i], runs[i + 1], specs[i].n_tasks)
    pair = _Arms(
        policy_record(b_spec.policy, b_spec.policy_hash),
        policy_record(c_spec.policy, c_spec.policy_hash),
        None,
        (b_spec, c_spec),
        req.base_url,
        req.api_key,
    )
    return env, b_spec.env_ref, (runs[0], runs[1], b_spec), suites, pair
