"""workgym: reinforcement-learning environments for AI agents, built around one real job."""

from __future__ import annotations

__version__ = "0.1.0"

from workgym.core.environment import Environment, Limits
from workgym.core.episode import Episode, TokenUsage, run_episode
from workgym.core.loading import load, register, registered
from workgym.core.messages import Message, ToolCall
from workgym.core.tasks import SealedSplitError, SplitSpec, Task, TaskSet
from workgym.core.tools import Ctx, Tool, ToolError, ToolSpec, tool
from workgym.core.verdict import AllOf, Gate, Status, Verdict, WeightedSum
from workgym.models import ConfigError, Model, ModelError, Sampling, get_model
from workgym.run.gym import GymEnv
from workgym.run.policy import Policy
from workgym.run.runner import Run, eval, eval_async
from workgym.testing.scripted import ScriptedModel, TaskScript

__all__ = [
    "AllOf",
    "ConfigError",
    "Ctx",
    "Environment",
    "Episode",
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
