"""Auditing the BFCL suite's scorer: BFCL's own answers must pass, mutated answers must fail,
and every disagreement with BFCL's own checker must have a stated reason.

Used by the tests (on the shipped data) and by bench/certify_bfcl_audit.py (which prints the
numbers quoted in docs/certificate.md). BFCL's checker is imported only when it is importable
(bfcl-eval with its dependencies); the suite itself never needs it.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from workgym.core.tasks import Task
from workgym.envs.suites import bfcl_scoring as scoring
from workgym.envs.suites.bfcl import answer_calls, as_turn, load_category, score_turn

Mutation = Callable[[Task, list[scoring.Call]], list[scoring.Call] | None]


def _first_arg(calls: list[scoring.Call], pred: Callable[[str, Any], bool]) -> tuple[int, str]:
    for i, (_, args) in enumerate(calls):
        for param, value in args.items():
            if pred(param, value):
                return i, param
    return -1, ""


def wrong_function(task: Task, calls: list[scoring.Call]) -> list[scoring.Call] | None:
    """The first call goes to another offered function (or a near-duplicate name)."""
    if not calls:
        return None
    name, args = calls[0]
    others = [n for n in task.meta["names"].values() if n != name]
    return [(others[0] if others else f"{name}_v2", args), *calls[1:]]


def _retyped(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return 1
    return str(value)


def wrong_type(task: Task, calls: list[scoring.Call]) -> list[scoring.Call] | None:
    """One argument of the first call with another JSON type ("5" for 5, 1 for "x", ...)."""
    i, param = _first_arg(calls, lambda p, v: v is not None)
    if i < 0:
        return None
    out = copy.deepcopy(calls)
    out[i][1][param] = _retyped(out[i][1][param])
    return out


def missing_argument(task: Task, calls: list[scoring.Call]) -> list[scoring.Call] | None:
    """A required argument of a call left out."""
    schemas = {task.meta["names"][t["name"]]: t["parameters"] for t in task.meta["tools"]}
    for i, (name, args) in enumerate(calls):
        required = [p for p in schemas.get(name, {}).get("required", []) if p in args]
        if required:
            out = copy.deepcopy(calls)
            del out[i][1][required[0]]
            return out
    return None


def _perturb(pred: Callable[[str, Any], bool], change: Callable[[Any], Any]) -> Mutation:
    def perturb(task: Task, calls: list[scoring.Call]) -> list[scoring.Call] | None:
        i, param = _first_arg(calls, pred)
        if i < 0:
            return None
        out = copy.deepcopy(calls)
        out[i][1][param] = change(out[i][1][param])
        return out

    return perturb


def _is_float(p: str, v: Any) -> bool:
    return isinstance(v, float) and v.is_integer()


def _has_punct(p: str, v: Any) -> bool:
    return isinstance(v, str) and any(ch in v for ch in ",./-_")


# Changes that declared normalisers decide (not errors): where BFCL and workgym may differ.
PERTURBATIONS: dict[str, Mutation] = {
    "upper_case": _perturb(lambda p, v: isinstance(v, str) and v.upper() != v, str.upper),
    "no_punctuation": _perturb(_has_punct, lambda v: "".join(c for c in v if c not in ",./-_")),
    "int_for_float": _perturb(_is_float, int),
}

MUTATIONS: dict[str, Mutation] = {
    "wrong_function": wrong_function,
    "wrong_type": wrong_type,
    "missing_argument": missing_argument,
}


def option_variants(task: Task) -> Iterator[tuple[str, list[scoring.Call]]]:
    """BFCL's answer with one argument set to each of its other acceptable values in turn."""
    base = answer_calls(task)
    for i, expected in enumerate(task.answer["calls"] or []):
        ((_, params),) = expected.items()
        for param, options in params.items():
            for option in options if isinstance(options, list) else [options]:
                variant = copy.deepcopy(base)
                if option == "":
                    variant[i][1].pop(param, None)
                elif isinstance(option, dict | list):
                    continue  # nested acceptable values: covered by the first choice
                else:
                    variant[i][1][param] = option
                yield f"{param}={option!r}", variant


@dataclass
class Audit:
    items: int = 0
    answers_correct: int = 0
    answer_failures: list[tuple[str, str]] = field(default_factory=list)
    options: int = 0
    options_correct: int = 0
    option_failures: list[tuple[str, str, str]] = field(default_factory=list)
    mutations: Counter[str] = field(default_factory=Counter)
    mutations_wrong: Counter[str] = field(default_factory=Counter)
    mutation_passes: list[tuple[str, str]] = field(default_factory=list)


def audit(tasks: list[Task]) -> Audit:
    """Score BFCL's answers, every listed alternative value, and three mutations per item."""
    out = Audit()
    for task in tasks:
        if task.answer["calls"] is None:
            continue
        out.items += 1
        calls = answer_calls(task)
        verdict = score_turn(task, as_turn(task, calls))
        if verdict.success:
            out.answers_correct += 1
        else:
            out.answer_failures.append((task.id, str(verdict.evidence.get("reason"))))
        for label, variant in option_variants(task):
            out.options += 1
            v = score_turn(task, as_turn(task, variant))
            if v.success:
                out.options_correct += 1
            else:
                out.option_failures.append((task.id, label, str(v.evidence.get("reason"))))
        for name, mutate in MUTATIONS.items():
            mutated = mutate(task, calls)
            if mutated is None:
                continue
            out.mutations[name] += 1
            if score_turn(task, as_turn(task, mutated)).success:
                out.mutation_passes.append((task.id, name))
            else:
                out.mutations_wrong[name] += 1
    return out


def bfcl_checker() -> Callable[..., dict[str, Any]] | None:
    """BFCL's own AST checker when bfcl-eval and its dependencies are importable, else None."""
    import importlib

    try:
        language = importlib.import_module("bfcl_eval.constants.enums").Language.PYTHON
        ast_checker = importlib.import_module(
            "bfcl_eval.eval_checker.ast_eval.ast_checker"
        ).ast_checker
    except Exception:  # bfcl-eval imports every provider SDK; any missing one means "not here"
        return None

    def check(functions: Any, output: Any, answer: Any, category: str) -> dict[str, Any]:
        result: dict[str, Any] = ast_checker(
            functions, output, answer, language, category, "gorilla-openfunctions-v2"
        )
        return result

    return check


def originals() -> dict[str, tuple[str, list[dict[str, Any]]]]:
    """bfcl id -> (category, BFCL's function documents), as BFCL's checker wants them."""
    from workgym.envs.suites.bfcl import CATEGORIES

    return {
        item["id"]: (category, item["function"])
        for category in CATEGORIES
        for item, _ in load_category(category)
    }


def crosscheck(
    tasks: list[Task], examples: dict[tuple[str, bool, bool], list[str]] | None = None
) -> Counter[tuple[str, bool, bool]] | None:
    """(output kind, ours, BFCL's) counts over answers, listed values, mutations and
    perturbations; None without BFCL. `examples` collects disagreements with our reason."""
    check = bfcl_checker()
    if check is None:
        return None
    docs = originals()
    counts: Counter[tuple[str, bool, bool]] = Counter()
    for task in tasks:
        if task.answer["calls"] is None:
            continue
        category, functions = docs[task.meta["bfcl_id"]]
        calls = answer_calls(task)
        outputs: list[tuple[str, list[scoring.Call] | None]] = [("answer", calls)]
        outputs += [(name, m(task, calls)) for name, m in {**MUTATIONS, **PERTURBATIONS}.items()]
        outputs += [("option", v) for _, v in option_variants(task)]
        for kind, output in outputs:
            if output is None:
                continue
            ours = score_turn(task, as_turn(task, output)).success
            theirs = bool(
                check(functions, [{n: a} for n, a in output], task.answer["calls"], category)[
                    "valid"
                ]
            )
            counts[(kind, ours, theirs)] += 1
            if examples is not None and ours != theirs:
                why = score_turn(task, as_turn(task, output)).evidence.get("reason", "")
                examples.setdefault((kind, ours, theirs), []).append(f"{task.id}: {why}")
    return counts
