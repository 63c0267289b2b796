"""What the members of a role swarm did in a run: did the plan spell out the executor's first
call, and what did the checker reply?

    python bench/swarm_plans.py runs/claim4-toy-examples/held_out/swarm+pb [more run dirs]

Per run: episodes; those whose plan spells the executor's first tool call (its name and every
argument value appear in the planner's reply), with the successes in each group; and the
checker's replies: approvals, objections as `workgym.swarm.roles.objection` reads them now, and
how many open with "REVISION" (read as approvals before decision 0186). Descriptive only: the
groups are not randomised, so a success rate per group is no causal effect.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from workgym.run.rundir import EPISODES
from workgym.swarm.roles import objection


def _spelled(plan: str, call: dict[str, Any]) -> bool:
    try:
        args = json.loads(call.get("arguments") or "{}")
    except json.JSONDecodeError:
        return False
    values = [str(v) for v in args.values()] if isinstance(args, dict) else []
    return call["name"] in plan and all(v in plan for v in values)


def summarise(run: Path) -> dict[str, Any]:
    spelled = [0, 0]  # episodes, successes
    other = [0, 0]
    replies = {"approve": 0, "objection": 0, "opens_with_revision": 0}
    for line in (run / EPISODES).open(encoding="utf-8"):
        ep = json.loads(line)
        agents = {a["role"]: a for a in ep["team"]["agents"]}
        plan = str(agents.get("planner", {}).get("answer") or "")
        turns = [m for m in ep["messages"] if m["role"] == "assistant"]
        calls = [c for m in turns for c in m["tool_calls"] or []]
        group = spelled if calls and _spelled(plan, calls[0]) else other
        group[0] += 1
        group[1] += bool((ep.get("verdict") or {}).get("success"))
        checker = agents.get("checker")
        for msg in checker["transcript"] if checker else []:
            if msg["role"] != "assistant":
                continue
            text = msg.get("content") or ""
            replies["objection" if objection(text) else "approve"] += 1
            replies["opens_with_revision"] += text.lstrip(" *#").upper().startswith("REVISION")
    return {
        "run": str(run),
        "plan_spells_first_call": {"episodes": spelled[0], "successes": spelled[1]},
        "otherwise": {"episodes": other[0], "successes": other[1]},
        "checker_replies": replies,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("runs", nargs="+", type=Path, help="run directories of a role swarm")
    for run in p.parse_args(argv).runs:
        if not (run / EPISODES).is_file():
            raise SystemExit(f"{run} holds no {EPISODES}: give a run directory of a role swarm")
        s = summarise(run)
        sp, ot, r = s["plan_spells_first_call"], s["otherwise"], s["checker_replies"]
        print(
            f"{run}: plan spells the first call in {sp['episodes']} episodes "
            f"({sp['successes']} solved), otherwise {ot['episodes']} ({ot['successes']} solved); "
            f"checker: {r['approve']} approvals, {r['objection']} objections, "
            f"{r['opens_with_revision']} replies open with REVISION"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
