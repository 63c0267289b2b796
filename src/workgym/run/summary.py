"""The summary of a run, computed from its episodes.jsonl (never from memory).

Errored episodes count as failures (reward 0) in the mean, and are reported separately: a run
that errs a lot must look worse, not smaller. The confidence interval treats the task as the unit
(epochs of one task are averaged first), because epochs of one task are not independent;
the interval respects the scale: the exact Clopper-Pearson interval when every reward is 0 or 1
with one epoch,
a t interval over task means otherwise (workgym.stats.proportions.reward_interval), and
`ci_method` says which. Neither is clustered.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, Field
from rich.console import Console
from rich.table import Table

from workgym.core.episode import record_agents, record_flags

SINGLE_ROLE = "agent"  # the role of the one agent of a plain (non-team) episode
TOKEN_ESTIMATOR = "server counts per call; by-role split estimated at 4 chars/token"


class Summary(BaseModel):
    run: str = ""
    env_id: str = ""
    model: str = ""
    split: str = ""
    n_tasks: int = 0
    n_episodes: int = 0
    epochs: int = 1
    mean_reward: float = 0.0
    se: float = 0.0
    ci95: tuple[float, float] = (0.0, 0.0)
    ci_method: str = ""  # clopper_pearson (binary rewards, one epoch) or t_over_task_means
    success_rate: float = 0.0
    pass_at_k: float | None = None
    pass_hat_k: float | None = None
    tokens_per_task: float = 0.0
    tokens_by_role: dict[str, float] = Field(default_factory=dict)
    errors: int = 0
    outcomes: dict[str, int] = Field(default_factory=dict)
    truncations: dict[str, int] = Field(default_factory=dict)
    """Which limit cut the truncated episodes (the environment's or the run's)."""
    statuses: dict[str, int] = Field(default_factory=dict)
    flags: dict[str, int] = Field(default_factory=dict)
    flagged_successes: int = 0
    token_estimator: str = TOKEN_ESTIMATOR

    def table(self) -> Table:
        t = Table(title=f"{self.env_id} · {self.model} · {self.split}", show_header=False)
        lo, hi = self.ci95
        t.add_row("episodes", f"{self.n_episodes} ({self.n_tasks} tasks x {self.epochs} epochs)")
        label = {
            "clopper_pearson": "exact (Clopper-Pearson)",
            "t_over_task_means": "t over tasks",
        }.get(self.ci_method, "")
        t.add_row(
            "mean reward", f"{self.mean_reward:.3f}  95% CI [{lo:.3f}, {hi:.3f}] {label}".rstrip()
        )
        t.add_row("success rate", f"{self.success_rate:.3f}")
        if self.pass_hat_k is not None:
            t.add_row(
                f"pass^{self.epochs} / pass@{self.epochs}",
                f"{self.pass_hat_k:.3f} / {self.pass_at_k:.3f}",
            )
        t.add_row("tokens per task", f"{self.tokens_per_task:.0f}")
        raised = self.statuses.get("verifier_error", 0)
        t.add_row(
            "errors",
            str(self.errors) + (f" + {raised} verifier errors (verify raised)" if raised else ""),
        )
        t.add_row("outcomes", _fmt(self.outcomes))
        if self.truncations:
            t.add_row("truncated by", _fmt(self.truncations))
        t.add_row("verdicts", _fmt(self.statuses))
        t.add_row("audit flags", _fmt(self.flags) or "none")
        if self.flagged_successes:
            double = (
                f"expected: {self.model} is a test double that submits the hidden answer "
                "without using the tools, which the audit flags (not cheating); "
                if self.model.startswith("scripted/")
                else ""
            )
            t.add_row(
                "flagged successes",
                f"{self.flagged_successes} of {round(self.success_rate * self.n_episodes)}: "
                f"{double}counted above; `workgym compare` and certificates count them 0 until "
                f"accepted (workgym review {self.run or 'RUN'})",
            )
        return t

    def print(self, console: Console | None = None) -> None:
        (console or Console()).print(self.table())

    def __str__(self) -> str:
        """The table as plain text, so `print(run.summary())` reads like `workgym summary`."""
        import io

        buffer = io.StringIO()
        Console(file=buffer, width=100, color_system=None, soft_wrap=True).print(self.table())
        return buffer.getvalue().rstrip("\n")


def _fmt(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))


def summarize(records: Iterable[dict[str, Any]], *, epochs: int = 1, **header: Any) -> Summary:
    """Summarise raw episode records (dicts as stored in episodes.jsonl)."""
    per_task: dict[str, list[tuple[float, bool]]] = defaultdict(list)
    outcomes: Counter[str] = Counter()
    truncations: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    flags: Counter[str] = Counter()
    roles: Counter[str] = Counter()
    tokens = 0
    flagged_successes = 0
    n = 0
    for r in records:
        n += 1
        verdict = r.get("verdict") or {}
        reward = float(verdict.get("reward", 0.0))
        success = bool(verdict.get("success", False))
        per_task[r["task_id"]].append((reward, success))
        outcomes[r["outcome"]] += 1
        if r.get("truncation"):
            truncations[r["truncation"]] += 1
        statuses[verdict.get("status", "error")] += 1
        ep_flags = set(record_flags(r)) | set(verdict.get("flags") or [])
        flags.update(ep_flags)
        flagged_successes += bool(success and ep_flags)
        usage = r.get("usage") or {}
        tokens += usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
        roles.update(usage.get("by_role") or {})
    if n == 0:
        return Summary(epochs=epochs, **header)
    from workgym.stats import tests as stats  # scipy: imported only when a summary is asked for
    from workgym.stats.proportions import reward_interval

    task_means = [sum(x for x, _ in v) / len(v) for v in per_task.values()]
    m = len(task_means)
    est = reward_interval(task_means)
    mean, se, ci95 = est.mean, est.se, (est.lower, est.upper)
    successes = sum(s for v in per_task.values() for _, s in v)
    summary = Summary(
        n_tasks=m,
        n_episodes=n,
        epochs=epochs,
        mean_reward=mean,
        se=se,
        ci95=ci95,
        ci_method=est.method,
        success_rate=successes / n,
        tokens_per_task=tokens / n,
        tokens_by_role={k: v / n for k, v in sorted(roles.items())},
        errors=outcomes.get("error", 0),
        outcomes=dict(outcomes),
        truncations=dict(truncations),
        statuses=dict(statuses),
        flags=dict(flags),
        flagged_successes=flagged_successes,
        **header,
    )
    if epochs > 1:
        full = [v for v in per_task.values() if len(v) >= epochs]
        if full:
            pk = stats.pass_k_summary(
                [len(v) for v in full], [sum(ok for _, ok in v) for v in full], epochs
            )
            summary.pass_hat_k, summary.pass_at_k = pk.pass_hat_k, pk.pass_at_k
    return summary


def record_tokens(record: dict[str, Any]) -> int:
    usage = record.get("usage") or {}
    return int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0))


def role_tokens(record: dict[str, Any]) -> dict[str, int]:
    """Tokens of one stored episode by agent role (one role, `agent`, for a plain episode)."""
    agents = record_agents(record)
    if not agents:
        return {SINGLE_ROLE: record_tokens(record)}
    out: dict[str, int] = {}
    for a in agents:
        out[a["role"]] = out.get(a["role"], 0) + record_tokens(a)
    return out
