"""The end of a run: pick the best checkpoint, write the playbook and the report.

Every file written here is derived from the log (and rewritten identically when a finished run is
re-run), so the log stays the single source of truth.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from workgym.train.playbook.ledger import Ledger
from workgym.train.playbook.playbook import Playbook, save_playbook
from workgym.train.playbook.report import TokenEfficiency, plot_learning_curve, token_efficiency

if TYPE_CHECKING:
    from workgym.train.playbook.state import TrainingState

PLAYBOOK_FILE = "playbook.md"
DEV_NOTE = (
    "on dev-select, which also picked the checkpoint (optimistic); the held-out statement comes "
    "from the test split: bench/playbook_real.py or `workgym certify`"
)


class TrainResult(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    out: Path
    playbook_path: Path
    playbook: Playbook  # the best checkpoint
    final: Playbook  # where the loop ended
    best_iteration: int
    stop_reason: str
    iterations: int
    accepted: list[str]
    rejected: list[str]
    ledger: Ledger
    efficiency: TokenEfficiency | None
    report: dict[str, Any]


def _best(checkpoints: list[dict[str, Any]]) -> dict[str, Any]:
    best = checkpoints[0]
    for c in checkpoints[1:]:
        if (c["reward"], -c["tokens_per_task"]) > (best["reward"], -best["tokens_per_task"]):
            best = c
    return best


def finish_run(t: TrainingState) -> TrainResult:
    events = t.log.events()
    checkpoints = [e for e in events if e["kind"] == "checkpoint"]
    baselines = [e for e in events if e["kind"] == "baseline"]
    iterations = [e for e in events if e["kind"] == "iteration"]
    stop = next(e for e in reversed(events) if e["kind"] == "stop")
    best = _best(checkpoints)
    by_hash = {v.hash: v.playbook for v in t.history}
    best_pb = by_hash[best["hash"]]
    out = t.out
    path = save_playbook(best_pb, out / PLAYBOOK_FILE, t.history)
    (out / "current.md").write_text(t.pb.render(), encoding="utf-8")
    ckdir = out / "checkpoints"
    ckdir.mkdir(exist_ok=True)
    for c in checkpoints:
        (ckdir / f"it{c['iteration']:04d}-{c['hash'][:12]}.md").write_text(
            by_hash[c["hash"]].render(), encoding="utf-8"
        )
    accepted = [d for e in iterations for d in e["accepted"]]
    rejected = [d for e in iterations for d in e["rejected"]]
    best_base = _best(baselines)
    efficiency = None
    if len(best["task_means"]) >= 2 and best["key"] != best_base["key"]:
        families = [task.family for task in t.dev_select]
        efficiency = token_efficiency(
            candidate=f"playbook {best['hash'][:12]} (iteration {best['iteration']})",
            baseline=best_base["name"],
            candidate_scores=best["task_means"],
            baseline_scores=best_base["task_means"],
            candidate_tpt=best["tokens_per_task"],
            baseline_tpt=best_base["tokens_per_task"],
            training_tokens=t.ledger.training_tokens,
            margin=t.cfg.ni_margin,
            where=DEV_NOTE,
            clusters=families,
        )
    plot = plot_learning_curve(checkpoints, baselines, out / "learning_curve.png")
    report: dict[str, Any] = {
        "env_id": t.env.id,
        "model": t.model.name,
        "reflector": t.reflector.name,
        "stop_reason": stop["reason"],
        "iterations": len(iterations),
        "accepted": accepted,
        "rejected": rejected,
        "best": {
            k: best[k]
            for k in (
                "iteration",
                "hash",
                "reward",
                "se",
                "tokens_per_task",
                "tokens_split",
                "audit_reward",
            )
        },
        "baselines": [
            {k: b[k] for k in ("name", "model", "reward", "se", "tokens_per_task", "tokens_split")}
            for b in baselines
        ],
        "checkpoints": [
            {
                k: c[k]
                for k in ("iteration", "hash", "reward", "se", "tokens_per_task", "playbook_tokens")
            }
            for c in checkpoints
        ],
        "ledger": {
            "by_role": t.ledger.by_role(),
            "training_tokens": t.ledger.training_tokens,
            "budget": t.ledger.budget,
            "by_iteration": {str(k): v for k, v in t.ledger.by_iteration().items()},
        },
        "efficiency": efficiency.model_dump(mode="json") if efficiency else None,
        "playbook": path.name,
        "learning_curve": plot.name,
    }
    (out / "report.json").write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    (out / "ledger.json").write_text(t.ledger.model_dump_json(indent=2) + "\n")
    (out / "report.md").write_text(render_report(report, best_pb.render()), encoding="utf-8")
    return TrainResult(
        out=out,
        playbook_path=path,
        playbook=best_pb,
        final=t.pb,
        best_iteration=int(best["iteration"]),
        stop_reason=str(stop["reason"]),
        iterations=len(iterations),
        accepted=accepted,
        rejected=rejected,
        ledger=t.ledger,
        efficiency=efficiency,
        report=report,
    )


def render_report(report: dict[str, Any], playbook_text: str) -> str:
    best = report["best"]
    lines = [
        f"# Playbook training: {report['env_id']} with {report['model']}",
        "",
        f"- reflector: {report['reflector']}",
        f"- stopped: {report['stop_reason']} after {report['iterations']} iterations",
        f"- deltas accepted: {len(report['accepted'])}, rejected: {len(report['rejected'])}",
        f"- best checkpoint: iteration {best['iteration']} ({best['hash'][:12]}), dev-select "
        f"reward {best['reward']:.3f} (SE {best['se']:.3f}), {best['tokens_per_task']:.0f} "
        "tokens per task",
        f"- training tokens: {report['ledger']['training_tokens']:,} "
        f"(budget {report['ledger']['budget'] or 'none'})",
        "",
        "## Untrained baselines (dev-select)",
        "",
        "| agent | reward | SE | tokens/task |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {b['name']} | {b['reward']:.3f} | {b['se']:.3f} | {b['tokens_per_task']:.0f} |"
        for b in report["baselines"]
    ]
    lines += ["", "## Token efficiency", ""]
    eff = report["efficiency"]
    lines.append(
        eff["statement"]
        if eff
        else "nothing to compare: the best checkpoint is the untrained agent itself "
        "(or dev-select has fewer than 2 tasks)"
    )
    lines += [
        "",
        "## Tokens per task, split (estimated by role)",
        "",
        "| agent | playbook | other prompt | completion | tool output |",
        "|---|---|---|---|---|",
    ]
    for name, split in [("best checkpoint", best["tokens_split"])] + [
        (b["name"], b["tokens_split"]) for b in report["baselines"]
    ]:
        lines.append(
            f"| {name} | {split['playbook']:.0f} | {split['prompt_other']:.0f} | "
            f"{split['completion']:.0f} | {split['tool_output']:.0f} |"
        )
    lines += ["", "## Ledger (tokens by role)", ""]
    lines += [f"- {role}: {n:,}" for role, n in report["ledger"]["by_role"].items()]
    lines += [
        "",
        "## The playbook",
        "",
        "```markdown",
        playbook_text.rstrip() or "(empty)",
        "```",
        "",
        f"Learning curve: {Path(report['learning_curve']).name}",
        "",
    ]
    return "\n".join(lines)
