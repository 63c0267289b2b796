"""workgym: reinforcement-learning environments for AI agents, built around one real job."""

from __future__ import annotations

from workgym.core.environment import Environment, Limits
from workgym.core.episode import Episode, TokenUsage
from workgym.core.errors import ConfigError, ModelError, SealedSplitError, ToolError
from workgym.core.loading import load, register, registered
from workgym.core.messages import Message, ToolCall
from workgym.core.rewards import AllOf, Gate, WeightedSum
from workgym.core.tasks import SplitSpec, Task, TaskSet
from workgym.core.tools import Ctx, Tool, ToolSpec, tool
from workgym.core.verdict import Status, Verdict
from workgym.core.version import __version__ as __version__
from workgym.models import Model, Sampling, get_model
from workgym.run.gym import GymEnv
from workgym.run.options import EvalOptions
from workgym.run.policy import Policy, run_episode
from workgym.run.runner import Run, eval, eval_async
from workgym.testing.scripted import ScriptedModel, TaskScript

__all__ = [
    "AllOf",
    "ConfigError",
    "Ctx",
    "Environment",
    "Episode",
    "EvalOptions",
    "Gate",
    "GymEnv",
    "Limits",
    "Message",
    "Model",
    "ModelError",
    "Policy",
    "Run",
    "Sampling",
    "ScriptedModel",
    "SealedSplitError",
    "SplitSpec",
    "Status",
    "Task",
    "TaskScript",
    "TaskSet",
    "TokenUsage",
    "Tool",
    "ToolCall",
    "ToolError",
    "ToolSpec",
    "Verdict",
    "WeightedSum",
    "eval",
    "eval_async",
    "get_model",
    "load",
    "register",
    "registered",
    "run_episode",
    "tool",
]
