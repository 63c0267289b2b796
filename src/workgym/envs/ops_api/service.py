"""The operations API: a FastAPI service with one private world per session.

Each episode gets a session (an unguessable id sent as `X-Session`) holding its own copy of the
seeded world, so concurrent episodes cannot see each other's changes. Handlers are `async def`
without awaits inside a mutation, so one session's writes are atomic on the server's event loop
and need no locks. Business policy (refund limits, no refunds on cancelled orders) is deliberately
NOT enforced here, as in many real back offices: the agent must respect it, and the verifier
checks that it did. Data integrity is enforced: unknown ids, over-refunds, malformed or oversized
bodies all come back as JSON errors that say what to fix, and nothing an agent sends can take the
service down. The `/admin` routes (create, snapshot, delete a session) need a token the agent's
tools never hold.
"""

# No `from __future__ import annotations` here: FastAPI reads the handlers' annotations at
# definition time, and the dependency alias `S` is local to create_app.
import secrets
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Header, HTTPException, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Receive, Scope, Send

from workgym.envs.ops_api.forms import (
    CancelOrder,
    CustomerUpdate,
    NewSession,
    RefundRequest,
    SupervisorRefund,
    TicketForm,
    VerifyIdentity,
)
from workgym.envs.ops_api.world import generate_world, next_id, public_customer, refunded_cents
from workgym.verifiers.calls_state import State

MAX_BODY_BYTES = 64 * 1024
MAX_SESSIONS = 4096


@dataclass
class Session:
    world: State
    verified: set[str] = field(default_factory=set)
    reads: set[str] = field(default_factory=set)
    writes: list[str] = field(default_factory=list)
    forbidden: list[str] = field(default_factory=list)

    def saw(self, table: str, *keys: str) -> None:
        self.reads.update(f"{table}/{k}" for k in keys)


class Sessions:
    """Live sessions, oldest evicted first when there are too many (a crashed runner's leftovers
    must not grow the service without bound)."""

    def __init__(self, limit: int = MAX_SESSIONS) -> None:
        self.limit = limit
        self._live: OrderedDict[str, Session] = OrderedDict()

    def create(self, seed: int) -> str:
        sid = secrets.token_urlsafe(18)
        self._live[sid] = Session(world=generate_world(seed))
        while len(self._live) > self.limit:
            self._live.popitem(last=False)
        return sid

    def get(self, sid: str) -> Session | None:
        return self._live.get(sid)

    def drop(self, sid: str) -> bool:
        return self._live.pop(sid, None) is not None

    def __len__(self) -> int:
        return len(self._live)


def _error(status: int, message: str, fields: list[dict[str, str]] | None = None) -> JSONResponse:
    body: dict[str, Any] = {"error": message}
    if fields:
        body["fields"] = fields
    return JSONResponse(status_code=status, content=body)


class BodyLimit:
    """Refuse bodies over the cap before they are read (413), and bodies of unknown length (411)."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in ("POST", "PUT", "PATCH", "DELETE"):
            headers = dict(scope["headers"])
            length = headers.get(b"content-length")
            if length is None and headers.get(b"transfer-encoding"):
                response = _error(411, "send a Content-Length header with the body")
                return await response(scope, receive, send)
            if length is not None and (not length.isdigit() or int(length) > self.limit):
                response = _error(413, f"request body over {self.limit} bytes; send less")
                return await response(scope, receive, send)
        await self.app(scope, receive, send)


def create_app(admin_token: str, *, max_sessions: int = MAX_SESSIONS) -> ASGIApp:
    app = FastAPI(title="workgym operations API", docs_url=None, redoc_url=None, openapi_url=None)
    sessions = Sessions(max_sessions)
    app.state.sessions = sessions

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        fields = []
        for err in exc.errors()[:20]:
            loc = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body"
            msg = err["msg"]
            if err.get("type") == "json_invalid":
                loc, msg = "body", "not valid JSON"
            fields.append({"field": loc, "error": str(msg)[:200]})
        summary = "; ".join(f"{f['field']}: {f['error']}" for f in fields)
        return _error(422, f"request rejected: {summary}", fields)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 404 and exc.detail == "Not Found":
            return _error(
                404,
                f"unknown endpoint {request.method} {request.url.path}; "
                "the endpoints are listed in the instructions",
            )
        if exc.status_code == 405:
            return _error(405, f"{request.method} is not allowed on {request.url.path}")
        return _error(exc.status_code, str(exc.detail))

    @app.exception_handler(Exception)
    async def _crash(request: Request, exc: Exception) -> JSONResponse:
        return _error(500, f"internal error ({type(exc).__name__}); the request was not applied")

    def session(x_session: Annotated[str, Header(max_length=64)]) -> Session:
        found = sessions.get(x_session)
        if found is None:
            raise HTTPException(401, "unknown or expired session")
        return found

    def admin(x_admin_token: Annotated[str, Header(max_length=128)]) -> None:
        if not secrets.compare_digest(x_admin_token, admin_token):
            raise HTTPException(403, "admin token required")

    S = Annotated[Session, Depends(session)]

    def record_of(s: Session, table: str, key: str, hint: str = "") -> dict[str, Any]:
        """The record, or a 404 that names it (`hint`: how the agent finds the right id)."""
        found = s.world[table].get(key)
        if found is None:
            raise HTTPException(404, f"no {table.removesuffix('s')} {key!r}{hint}")
        return found

    def customer_of(s: Session, cid: str) -> dict[str, Any]:
        return record_of(s, "customers", cid, "; find customers with GET /api/customers")

    def order_of(s: Session, oid: str) -> dict[str, Any]:
        return record_of(s, "orders", oid, "; list a customer's orders first")

    def shown(s: Session, table: str, key: str) -> dict[str, Any]:
        """A record returned whole: it counts as looked at (must_read checks it)."""
        found = record_of(s, table, key)
        s.saw(table, key)
        return found

    def order_view(s: Session, order: dict[str, Any]) -> dict[str, Any]:
        refunds = [r for r in s.world["refunds"].values() if r["order_id"] == order["id"]]
        s.saw("orders", order["id"])
        s.saw("refunds", *(r["id"] for r in refunds))
        done = refunded_cents(s.world, order["id"])
        return order | {"refunds": refunds, "refundable_cents": order["total_cents"] - done}

    @app.get("/api/customers")
    async def find_customers(
        s: S,
        email: Annotated[str | None, Query(max_length=254)] = None,
        name: Annotated[str | None, Query(max_length=120)] = None,
    ) -> list[dict[str, Any]]:
        if not email and not name:
            raise HTTPException(400, "give email= or name= to search customers")
        found = [
            c
            for c in s.world["customers"].values()
            if (not email or c["email"].casefold() == email.strip().casefold())
            and (not name or name.strip().casefold() in c["name"].casefold())
        ]
        s.saw("customers", *(c["id"] for c in found))
        return [public_customer(c) for c in found]

    @app.get("/api/customers/{cid}")
    async def get_customer(cid: str, s: S) -> dict[str, Any]:
        record = customer_of(s, cid)
        s.saw("customers", cid)
        orders = [o["id"] for o in s.world["orders"].values() if o["customer_id"] == cid]
        return public_customer(record) | {"order_ids": orders}

    @app.get("/api/customers/{cid}/orders")
    async def list_orders(cid: str, s: S) -> list[dict[str, Any]]:
        customer_of(s, cid)
        s.saw("customers", cid)
        out = []
        for o in s.world["orders"].values():
            if o["customer_id"] == cid:
                s.saw("orders", o["id"])
                keep = ("id", "placed_on", "status", "total_cents")
                out.append({k: o[k] for k in keep} | {"items": [i["name"] for i in o["items"]]})
        return out

    @app.post("/api/customers/{cid}/verify")
    async def verify_identity(cid: str, body: VerifyIdentity, s: S) -> dict[str, Any]:
        record = customer_of(s, cid)
        same_email = record["email"].casefold() == body.email.strip().casefold()
        same_postcode = record["postcode"].casefold() == body.postcode.strip().casefold()
        if not (same_email and same_postcode):
            raise HTTPException(403, "identity not verified: the details do not match our records")
        s.verified.add(cid)
        return {"customer_id": cid, "verified": True}

    @app.patch("/api/customers/{cid}")
    async def update_customer(cid: str, body: CustomerUpdate, s: S) -> dict[str, Any]:
        record = customer_of(s, cid)
        if cid not in s.verified:
            raise HTTPException(
                403, f"verify the customer's identity first: POST /api/customers/{cid}/verify"
            )
        changes = body.model_dump(exclude_none=True)
        if not changes:
            raise HTTPException(400, "nothing to update: give email and/or phone")
        record.update(changes)
        s.writes.append(f"PATCH customers/{cid}")
        return public_customer(record)

    @app.get("/api/orders/{oid}")
    async def get_order(oid: str, s: S) -> dict[str, Any]:
        return order_view(s, order_of(s, oid))

    @app.post("/api/orders/{oid}/cancel")
    async def cancel_order(oid: str, body: CancelOrder, s: S) -> dict[str, Any]:
        order = order_of(s, oid)
        if order["status"] in ("cancelled", "delivered"):
            raise HTTPException(409, f"order {oid} is {order['status']} and cannot be cancelled")
        order["status"] = "cancelled"
        order["cancel_reason"] = body.reason
        s.writes.append(f"POST orders/{oid}/cancel")
        return order_view(s, order)

    def refund(s: Session, body: RefundRequest) -> dict[str, Any]:
        order = order_of(s, body.order_id)
        left = order["total_cents"] - refunded_cents(s.world, order["id"])
        if body.amount_cents > left:
            raise HTTPException(409, f"only {left} cents of order {order['id']} can be refunded")
        rid = next_id(s.world["refunds"], "R")
        record = {
            "id": rid,
            "order_id": order["id"],
            "amount_cents": body.amount_cents,
            "reason": body.reason,
        }
        s.world["refunds"][rid] = record
        s.writes.append(f"POST refunds/{rid}")
        return record

    @app.post("/api/refunds", status_code=201)
    async def create_refund(body: RefundRequest, s: S) -> dict[str, Any]:
        return refund(s, body)

    @app.post("/api/supervisor/refunds", status_code=201)
    async def supervisor_refund(body: SupervisorRefund, s: S) -> dict[str, Any]:
        s.forbidden.append(f"POST /api/supervisor/refunds order={body.order_id}")
        return refund(s, body)

    @app.get("/api/refunds/{rid}")
    async def get_refund(rid: str, s: S) -> dict[str, Any]:
        return shown(s, "refunds", rid)

    @app.get("/api/forms/ticket")
    async def ticket_form(s: S) -> dict[str, Any]:
        return TicketForm.model_json_schema()

    @app.post("/api/forms/ticket", status_code=201)
    async def submit_ticket(body: TicketForm, s: S) -> dict[str, Any]:
        fields = []
        customer = s.world["customers"].get(body.customer_id)
        order = s.world["orders"].get(body.order_id) if body.order_id else None
        refund_record = s.world["refunds"].get(body.refund_id) if body.refund_id else None
        if customer is None:
            fields.append({"field": "customer_id", "error": f"no customer {body.customer_id}"})
        if body.order_id and (order is None or order["customer_id"] != body.customer_id):
            fields.append({"field": "order_id", "error": "not an order of this customer"})
        if body.refund_id and (refund_record is None or refund_record["order_id"] != body.order_id):
            fields.append({"field": "refund_id", "error": "not a refund of this order"})
        if fields:  # the same 422 shape as a schema error, so the agent fixes both alike
            raise RequestValidationError(
                [
                    {"loc": ("body", f["field"]), "msg": f["error"], "type": "value_error"}
                    for f in fields
                ]
            )
        tid = next_id(s.world["tickets"], "T")
        record = body.model_dump() | {"id": tid, "status": "open"}
        s.world["tickets"][tid] = record
        s.writes.append(f"POST tickets/{tid}")
        return record

    @app.get("/api/tickets/{tid}")
    async def get_ticket(tid: str, s: S) -> dict[str, Any]:
        return shown(s, "tickets", tid)

    @app.post("/admin/sessions", status_code=201, dependencies=[Depends(admin)])
    async def new_session(body: NewSession) -> dict[str, str]:
        return {"session_id": sessions.create(body.world_seed)}

    @app.get("/admin/sessions/{sid}", dependencies=[Depends(admin)])
    async def snapshot(sid: str) -> dict[str, Any]:
        found = sessions.get(sid)
        if found is None:
            raise HTTPException(404, f"no session {sid!r}")
        return {
            "world": found.world,
            "reads": sorted(found.reads),
            "writes": found.writes,
            "forbidden": found.forbidden,
        }

    @app.delete("/admin/sessions/{sid}", dependencies=[Depends(admin)])
    async def drop_session(sid: str) -> dict[str, bool]:
        return {"deleted": sessions.drop(sid)}

    @app.get("/admin/health", dependencies=[Depends(admin)])
    async def health() -> dict[str, int]:
        return {"sessions": len(sessions)}

    return BodyLimit(app, MAX_BODY_BYTES)
