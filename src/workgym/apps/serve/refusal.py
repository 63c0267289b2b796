"""What the environment server answers when it refuses a request.

Its own module because both the session hub and the attempt log refuse requests (an unknown
session, a body over the limit, a task played past its attempt cap), and neither should import
the other to say so.
"""

from __future__ import annotations


class ServeError(Exception):
    """A request the server refuses; `status` is the HTTP status, the message says what to do."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
