"""`workgym certify --plan`: what this certificate's design can detect, before the look.

It reads only what is public before a test episode runs: the test split's families and sizes,
the epochs, the suites' sizes and margins, and the baseline's success rate (from its dev-split
runs when given, else a rate the user states). It simulates the certificate's own gates
(workgym.stats.power) and prints the smallest gain the gain gate finds with the chosen power,
the largest regression each suite can rule out, and the items (or families) a target effect needs
and, with the items fixed, the epochs it needs.

`refusal` is the part `certify` applies to every run: a design that cannot pass its own gate on
any data (a family gate that cannot reach alpha, suites too small to show non-inferiority even
when every pair ties) is refused before the look is recorded, so the refusal costs no look.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from workgym.core.errors import ConfigError
from workgym.stats import power as sim
from workgym.stats.families import families_needed, smallest_p
from workgym.stats.proportions import items_to_show, tie_bound

EPOCHS_CAP = 64  # the epochs search stops here


@dataclass(frozen=True)
class SuitePlan:
    suite: str
    n_items: int
    margin: float
    tie_lower: float  # the bound when every pair ties: the best this suite can show
    showable: float | None  # margin shown with the power when nothing changed (simulated)


@dataclass(frozen=True)
class Plan:
    env_id: str
    n_items: int
    n_families: int
    epochs: int
    alpha: float
    power: float
    estimand: sim.Estimand
    reason: str
    smallest_p: float
    rates_from: str
    mean_rate: float | None
    detectable_gain: float | None
    target: float | None
    needed: int | None
    epochs_needed: int | None  # epochs K for the target with these items; None: more than the cap
    suites: tuple[SuitePlan, ...]
    sims: int
    seed: int

    @property
    def gain_passable(self) -> bool:
        return self.smallest_p <= self.alpha

    @property
    def suites_passable(self) -> bool:
        return not self.suites or any(s.tie_lower > -s.margin for s in self.suites)


def resolve_estimand(choice: str, n_families: int, alpha: float) -> tuple[sim.Estimand, str]:
    """The declared estimand, or a ConfigError when the split cannot support it."""
    if choice == "auto":
        return sim.default_estimand(n_families, alpha)
    if choice == "items":
        return "items", "declared: these held-out items"
    if choice == "families":
        if n_families < 2 or smallest_p(n_families) > alpha:
            raise ConfigError(
                f"--estimand families needs at least {families_needed(alpha)} test families at "
                f"alpha {alpha:g} (the smallest p over {n_families} is "
                f"{smallest_p(n_families):.3g}); declare --estimand items or use a split with "
                "more held-out families"
            )
        return "families", "declared: new families of this job"
    raise ConfigError(f"--estimand {choice!r}: choose auto, items or families")


def dev_rates(runs: list[Path], env_hash: str) -> tuple[float, ...]:
    """Per-item mean rewards of the baseline's dev-split runs (epochs averaged)."""
    rates: list[float] = []
    for run in runs:
        spec_path, eps = run / "run.json", run / "episodes.jsonl"
        if not spec_path.is_file() or not eps.is_file():
            raise ConfigError(f"--dev-run {run}: not a run directory (no run.json/episodes.jsonl)")
        spec = json.loads(spec_path.read_text(encoding="utf-8"))
        if spec.get("split") != "dev":
            raise ConfigError(
                f"--dev-run {run} ran split {spec.get('split')!r}; the plan reads dev-split runs "
                "of the baseline (never the test split)"
            )
        if spec.get("env_hash") != env_hash:
            raise ConfigError(f"--dev-run {run} was made on another version of the environment")
        per: dict[str, list[float]] = {}
        for line in eps.read_text(encoding="utf-8").splitlines():
            if line.strip():
                r = json.loads(line)
                reward = float((r.get("verdict") or {}).get("reward", 0.0))
                per.setdefault(str(r["task_id"]), []).append(min(1.0, max(0.0, reward)))
        rates += [sum(v) / len(v) for v in per.values()]
    if not rates:
        raise ConfigError("the --dev-run directories hold no episodes yet")
    return tuple(rates)


def make_plan(
    *,
    env_id: str,
    family_sizes: list[int],
    epochs: int,
    alpha: float,
    estimand: sim.Estimand,
    reason: str,
    suites: dict[str, tuple[int, float]],
    rates: tuple[float, ...] | None,
    rates_from: str,
    power: float = 0.8,
    target: float | None = None,
    sims: int = 400,
    seed: int = 0,
) -> Plan:
    """Simulate the design (rates given) or give its rate-free bounds only (rates None)."""
    if target is not None:
        room = 1.0 - (sum(rates) / len(rates) if rates else 0.0)
        if not 0.0 < target <= room:
            raise ConfigError(
                f"--target {target:g} is not a gain a success rate can make from a baseline of "
                f"{1.0 - room:.3g}; give a gain in (0, {room:.3g}]"
            )
    g = len(family_sizes)
    smallest = smallest_p(g) if estimand == "families" else 0.5 ** sum(family_sizes)
    design = sim.Design(tuple(family_sizes), epochs, rates, estimand, alpha) if rates else None
    mde = sim.detectable_gain(design, power, sims, seed) if design else None
    need = sim.needed(design, target, power, sims, seed) if design and target else None
    need_k = (
        sim.epochs_needed(design, target, power, sims, seed, EPOCHS_CAP)
        if design and target
        else None
    )
    suite_plans = []
    for name, (n, margin) in suites.items():
        showable = None
        if rates:
            sd = sim.Design((n,), epochs, rates, "items", alpha)
            showable = sim.showable_margin(sd, power, sims, seed)
        tie = tie_bound(n, alpha, binary=epochs == 1)
        suite_plans.append(SuitePlan(name, n, margin, tie, showable))
    return Plan(
        env_id=env_id,
        n_items=sum(family_sizes),
        n_families=g,
        epochs=epochs,
        alpha=alpha,
        power=power,
        estimand=estimand,
        reason=reason,
        smallest_p=smallest,
        rates_from=rates_from,
        mean_rate=None if not rates else sum(rates) / len(rates),
        detectable_gain=mde,
        target=target,
        needed=need,
        epochs_needed=need_k,
        suites=tuple(suite_plans),
        sims=sims,
        seed=seed,
    )


def refusal(plan: Plan) -> str | None:
    """One line when the design cannot pass its own gate on any data, else None."""
    if not plan.gain_passable:
        return (
            f"this design cannot pass its gain gate: the {plan.estimand}-level test's smallest "
            f"p is {plan.smallest_p:.3g} > alpha {plan.alpha:g} ({plan.n_items} items, "
            f"{plan.n_families} families); use more items (--limit) or --force-design"
        )
    if not plan.suites_passable:
        worst = ", ".join(
            f"{s.suite} {s.n_items} items (best bound {s.tie_lower:+.3f} vs -{s.margin:g})"
            for s in plan.suites
        )
        need = max(items_to_show(s.margin, plan.alpha, plan.epochs == 1) for s in plan.suites)
        return (
            f"this design cannot show non-regression: even if every pair ties, no suite's bound "
            f"clears its margin ({worst}); give a suite at least {need} items (--suite-limit) or "
            "pass --force-design"
        )
    return None


def lines(plan: Plan) -> list[str]:
    """The plan as the command prints it."""
    out = [
        f"design: {plan.env_id}, {plan.n_items} test items in {plan.n_families} families, "
        f"K={plan.epochs}, alpha {plan.alpha:g}, power {plan.power:g}",
        f"estimand: {plan.estimand} ({plan.reason}); smallest attainable p {plan.smallest_p:.3g}",
    ]
    if plan.mean_rate is None:
        out.append("baseline rate: none given (--dev-run RUN or --baseline-rate R) — no power")
    else:
        out.append(f"baseline rate {plan.mean_rate:.3f} from {plan.rates_from}")
        mde = plan.detectable_gain
        out.append(
            "smallest detectable gain: "
            + ("none — the gate cannot reach power on any gain" if mde is None else f"{mde:.3f}")
            + f" (Monte Carlo: {plan.sims} simulated certificates, seed {plan.seed})"
        )
        if plan.target is not None:
            unit = "families" if plan.estimand == "families" else "items"
            out.append(
                f"for a gain of {plan.target:g}: "
                + (f"about {plan.needed} {unit}" if plan.needed else "more than 4096 " + unit)
            )
            out.append(
                f"for a gain of {plan.target:g} with these {plan.n_items} items: "
                + (
                    f"{plan.epochs_needed} epochs (--epochs {plan.epochs_needed})"
                    if plan.epochs_needed
                    else f"more than {EPOCHS_CAP} epochs (more items are needed)"
                )
            )
    for s in plan.suites:
        show = "" if s.showable is None else f"; rules out regressions above {s.showable:.3f}"
        out.append(
            f"suite {s.suite}: {s.n_items} items, margin {s.margin:g}, best possible bound "
            f"{s.tie_lower:+.3f} (every pair tied){show}"
        )
    verdict = refusal(plan)
    out.append("can pass its own gate: " + ("yes" if verdict is None else "NO — " + verdict))
    return out
