"""workgym: reinforcement-learning environments for AI agents, built around one real job."""

from __future__ import annotations

__version__ = "0.1.0"

from workgym.environment import Environment, Limits, load, register, registered
from workgym.episode import Episode, TokenUsage, run_episode
from workgym.gym import GymEnv
from workgym.messages import Message, ToolCall
from workgym.models import ConfigError, Model, ModelError, Sampling, get_model
from workgym.models.scripted import ScriptedModel, TaskScript
from workgym.policy import Policy
from workgym.runner import Run, eval, eval_async
from workgym.tasks import SealedSplitError, SplitSpec, Task, TaskSet
from workgym.tools import Ctx, Tool, ToolError, ToolSpec, tool
from workgym.verdict import AllOf, Gate, Status, Verdict, WeightedSum

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
