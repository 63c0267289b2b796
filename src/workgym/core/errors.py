"""The error types every layer raises and catches, defined once at the bottom of the stack.

They sit in the core, not with the providers or the CLI, so that a module can catch a
`ConfigError` without importing the layer that happened to raise it first.
"""

from __future__ import annotations


class ConfigError(Exception):
    """Bad user input: the message says what to do instead."""


class ModelError(Exception):
    """A call failed for reasons outside the agent's control (network, rate limit, server).

    `retryable` errors are retried by the runner symmetrically across arms; the others (a wrong
    key, an unknown model) stop the run with a message saying what to fix.
    """

    def __init__(self, message: str, *, retryable: bool = True) -> None:
        super().__init__(message)
        self.retryable = retryable


class SealedSplitError(Exception):
    """Training code asked for the test split."""


class ToolError(Exception):
    """Raise or return this from a tool to tell the agent what went wrong, in its own words."""
