"""The agent's tools for the operations API: thin async wrappers over real HTTP calls.

Each tool is one request on the episode's session; whatever the server says — data, or an error
that names the field to fix — is what the agent sees. The ticket form's fields pass through as an
object so that the *server* validates the form, as a real one would. `api_request` is raw access
for anything the typed tools do not cover; it can reach only paths under /api/.
"""

from __future__ import annotations

import json
import posixpath
import re
from typing import Any, Literal
from urllib.parse import parse_qsl, urlsplit

from workgym.core.errors import ToolError
from workgym.core.messages import ToolCall
from workgym.core.tools import Ctx, tool
from workgym.envs.ops_api.session import OpsSession

Outcome = Literal["done", "escalated", "refused", "clarify", "no_action"]


def _session(ctx: Ctx) -> OpsSession:
    state = ctx.state
    if not isinstance(state, OpsSession):
        raise ToolError("no API session for this episode")
    return state


def _segment(value: str, what: str) -> str:
    if not value or any(c in value for c in "/?#%\\") or value in (".", ".."):
        raise ToolError(f"{what} {value!r} is not a valid id")
    return value


@tool
async def find_customer(ctx: Ctx, email: str | None = None, name: str | None = None) -> Any:
    """Search customers by exact email or by (part of) their name. Returns id, name, email, phone.

    Args:
        email: The customer's email address (matched exactly, ignoring case).
        name: A name or part of one (matched ignoring case).
    """
    params = {k: v for k, v in (("email", email), ("name", name)) if v is not None}
    return await _session(ctx).request("GET", "/api/customers", params=params)


@tool
async def get_customer(ctx: Ctx, customer_id: str) -> Any:
    """One customer's contact details and order ids.

    Args:
        customer_id: The customer id, e.g. C004.
    """
    cid = _segment(customer_id, "customer_id")
    return await _session(ctx).request("GET", f"/api/customers/{cid}")


@tool
async def list_orders(ctx: Ctx, customer_id: str) -> Any:
    """A customer's orders: id, date placed, status, total and item names.

    Args:
        customer_id: The customer id, e.g. C004.
    """
    cid = _segment(customer_id, "customer_id")
    return await _session(ctx).request("GET", f"/api/customers/{cid}/orders")


@tool
async def get_order(ctx: Ctx, order_id: str) -> Any:
    """One order in full: items with prices, status, refunds so far and what is still refundable.

    Args:
        order_id: The order id, e.g. O1012.
    """
    oid = _segment(order_id, "order_id")
    return await _session(ctx).request("GET", f"/api/orders/{oid}")


@tool
async def verify_identity(ctx: Ctx, customer_id: str, email: str, postcode: str) -> Any:
    """Check a customer's identity with the email and postcode they gave. Required before any
    change to their account.

    Args:
        customer_id: The customer id.
        email: The email address the customer gave.
        postcode: The postcode the customer gave.
    """
    cid = _segment(customer_id, "customer_id")
    body = {"email": email, "postcode": postcode}
    return await _session(ctx).request("POST", f"/api/customers/{cid}/verify", body=body)


@tool
async def update_customer(
    ctx: Ctx, customer_id: str, email: str | None = None, phone: str | None = None
) -> Any:
    """Change a customer's email and/or phone (their identity must be verified first).

    Args:
        customer_id: The customer id.
        email: The new email address, if it changes.
        phone: The new phone number, if it changes.
    """
    cid = _segment(customer_id, "customer_id")
    body = {k: v for k, v in (("email", email), ("phone", phone)) if v is not None}
    return await _session(ctx).request("PATCH", f"/api/customers/{cid}", body=body)


@tool
async def cancel_order(ctx: Ctx, order_id: str, reason: str = "") -> Any:
    """Cancel an order.

    Args:
        order_id: The order id.
        reason: Why it is cancelled (optional note kept on the order).
    """
    oid = _segment(order_id, "order_id")
    return await _session(ctx).request("POST", f"/api/orders/{oid}/cancel", body={"reason": reason})


@tool
async def issue_refund(ctx: Ctx, order_id: str, amount_cents: int, reason: str = "") -> Any:
    """Refund money on an order. Returns the new refund with its id.

    Args:
        order_id: The order id.
        amount_cents: The amount in cents (a whole number, e.g. 3499 for 34.99).
        reason: Why the money is refunded (optional note).
    """
    body = {"order_id": order_id, "amount_cents": amount_cents, "reason": reason}
    return await _session(ctx).request("POST", "/api/refunds", body=body)


@tool
async def ticket_form(ctx: Ctx) -> Any:
    """The support-ticket form: its fields, which are required, and the allowed values."""
    return await _session(ctx).request("GET", "/api/forms/ticket")


@tool
async def submit_ticket_form(ctx: Ctx, form: dict[str, Any]) -> Any:
    """Submit the support-ticket form. The server validates it and answers with the new ticket,
    or with the fields to fix.

    Args:
        form: The form fields as an object (see ticket_form for the fields).
    """
    return await _session(ctx).request("POST", "/api/forms/ticket", body=form)


@tool
async def api_request(
    ctx: Ctx,
    method: Literal["GET", "POST", "PATCH", "DELETE"],
    path: str,
    body: dict[str, Any] | None = None,
) -> Any:
    """Raw access to the operations API, for endpoints the other tools do not cover.

    Args:
        method: The HTTP method.
        path: A path under /api/, optionally with a query string, e.g. /api/refunds/R3.
        body: The JSON body for POST and PATCH.
    """
    parts = urlsplit(path)
    if parts.scheme or parts.netloc or "%" in path or "\\" in path:
        raise ToolError("path must be a plain path under /api/, e.g. /api/orders/O1012")
    clean = posixpath.normpath(parts.path)
    if not clean.startswith("/api/"):
        raise ToolError(f"path {path!r} is outside /api/; only /api/ endpoints are reachable")
    params = dict(parse_qsl(parts.query)) or None
    return await _session(ctx).request(method, clean, body=body, params=params)


@tool(final=True)
def finish(outcome: Outcome) -> str:
    """End the task with its outcome. Write your reply to the customer as your message text.

    Args:
        outcome: done (the request is carried out), escalated (handed to a supervisor through
            an escalation ticket), refused (policy forbids it), clarify (the request is ambiguous;
            you need more information), no_action (nothing needs to change).
    """
    return "recorded"


LOOKUPS = (find_customer, get_customer, list_orders, get_order, ticket_form, verify_identity)
WRITES = (update_customer, cancel_order, issue_refund, submit_ticket_form)
TOOLS = [*LOOKUPS, *WRITES, api_request, finish]
WRITE_NAMES = frozenset(t.name for t in WRITES)

_ROUTES = (
    ("POST", re.compile(r"^/api/refunds$"), issue_refund.name),
    ("POST", re.compile(r"^/api/orders/[^/]+/cancel$"), cancel_order.name),
    ("PATCH", re.compile(r"^/api/customers/[^/]+$"), update_customer.name),
    ("POST", re.compile(r"^/api/forms/ticket$"), submit_ticket_form.name),
    ("POST", re.compile(r"^/api/customers/[^/]+/verify$"), verify_identity.name),
)


def canonical_call(call: ToolCall) -> str:
    """The typed tool a raw `api_request` stands for (verifiers judge what a call does)."""
    if call.name != api_request.name:
        return call.name
    try:
        args = json.loads(call.arguments or "{}")
    except ValueError:
        return call.name
    if not isinstance(args, dict):
        return call.name
    method, path = str(args.get("method", "")), str(args.get("path", ""))
    clean = posixpath.normpath(urlsplit(path).path) if path else ""
    if method == "GET":
        return find_customer.name if clean == "/api/customers" else get_order.name
    for verb, pattern, name in _ROUTES:
        if method == verb and pattern.match(clean):
            return name
    return f"{api_request.name}:{method} {clean}"
