"""The typed request bodies of the operations API, the ticket form among them.

These models are the server's contract: every body is validated here, strictly (a string is not
a number, unknown fields are refused, lengths are capped), and a rejection goes back to the agent
as a list of field errors it can act on. The tools deliberately pass form fields through loosely
typed, so validation happens where it does in a real service — on the server.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

TICKET_CATEGORIES = ("refund", "escalation", "delivery", "account", "other")
PRIORITIES = ("low", "normal", "high")
MAX_TEXT = 2000


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class TicketForm(_Body):
    """The support-ticket form. Link the order and, for refund tickets, the refund."""

    customer_id: str = Field(pattern=r"^C\d{3}$", description="customer id, e.g. C004")
    order_id: str | None = Field(default=None, pattern=r"^O\d{4}$", description="e.g. O1012")
    category: Literal["refund", "escalation", "delivery", "account", "other"]
    priority: Literal["low", "normal", "high"]
    subject: str = Field(min_length=3, max_length=120)
    description: str = Field(default="", max_length=MAX_TEXT)
    refund_id: str | None = Field(default=None, pattern=r"^R\d+$", description="e.g. R4")


class VerifyIdentity(_Body):
    email: str = Field(max_length=254)
    postcode: str = Field(max_length=16)


class CustomerUpdate(_Body):
    email: str | None = Field(default=None, max_length=254, pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
    phone: str | None = Field(default=None, max_length=32, pattern=r"^\+?[0-9 ]{7,20}$")


class CancelOrder(_Body):
    reason: str = Field(default="", max_length=500)


class RefundRequest(_Body):
    order_id: str = Field(max_length=16)
    amount_cents: int = Field(gt=0, le=10_000_000)
    reason: str = Field(default="", max_length=500)


class SupervisorRefund(RefundRequest):
    approver: str = Field(max_length=64)


class NewSession(_Body):
    world_seed: int = Field(ge=0)
