"""The labelling page's server (aiohttp): the sample's pairs, one at a time,
to people who rate them on the judges' own scale; every label written to the
label log before the page is told it was saved.

What a labeller never gets: any judge's score. What the server refuses (400,
403, 404 or 409 with a one-line reason, nothing stored): a rating off the
scale, an unknown item, a name another open page holds, an API call without
the token when one is set, a static path outside the static folder.
"""

from __future__ import annotations

import re
import secrets
import time
from pathlib import Path
from typing import Any

import msgspec
from aiohttp import web

from engine.contracts import Pair
from engine.labelling.log import LabelLog, LabelRecord, now
from engine.labelling.sample import LabelItem

STATIC = Path(__file__).resolve().parent / "static"
NAME = re.compile(r"^[\w .\-]{1,40}$")
HOLD_S = 30.0  # a name stays with its page this long after the page's last request


class Scale(msgspec.Struct, frozen=True):
    name: str
    low: float
    high: float
    integer: bool

    def to_points(self, raw: float) -> float:
        return 100.0 * (raw - self.low) / (self.high - self.low)


class ShownItem(msgspec.Struct, frozen=True):
    item: LabelItem
    document_1: str
    document_2: str
    changed_1: tuple[int, int]  # the characters that differ, for the optional highlight
    changed_2: tuple[int, int]


def changed_span(a: str, b: str) -> tuple[tuple[int, int], tuple[int, int]]:
    """The differing middle of two texts: (start, end) in each, after the
    longest common prefix and suffix."""
    prefix = 0
    while prefix < min(len(a), len(b)) and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(a), len(b)) - prefix and a[len(a) - 1 - suffix] == b[len(b) - 1 - suffix]:
        suffix += 1
    return (prefix, len(a) - suffix), (prefix, len(b) - suffix)


def shown(item: LabelItem, pair: Pair) -> ShownItem:
    first, second = changed_span(pair.original, pair.perturbed)
    return ShownItem(item=item, document_1=pair.original, document_2=pair.perturbed, changed_1=first, changed_2=second)


class LabelBook:
    """The sample, who holds which name, and the label log."""

    def __init__(self, items: list[ShownItem], log: LabelLog, scale: Scale, instructions: str) -> None:
        self.items = items
        self.by_id = {s.item.item_id: s for s in items}
        self.log = log
        self.scale = scale
        self.instructions = instructions
        self._holders: dict[str, tuple[str, float]] = {}  # name -> (session, last seen)
        self._sessions: dict[str, str] = {}  # session -> name

    def claim(self, name: str, held_by: str | None) -> str:
        if not NAME.match(name):
            raise web.HTTPBadRequest(text=f"labeller name {name!r}: 1-40 letters, digits, spaces, '.', '_' or '-'")
        holder = self._holders.get(name)
        if holder is not None and holder[0] != held_by and time.monotonic() - holder[1] < HOLD_S:
            raise web.HTTPConflict(text=f"labeller {name!r} is labelling in another page; choose another name or close that page")
        session = held_by if holder is not None and holder[0] == held_by else secrets.token_urlsafe(16)
        self._holders[name] = (session, time.monotonic())
        self._sessions[session] = name
        return session

    def labeller(self, session: str) -> str:
        name = self._sessions.get(session)
        if name is None or self._holders.get(name, ("", 0.0))[0] != session:
            raise web.HTTPForbidden(text="this page's session is not known (the name was taken over or the server restarted): enter your name again")
        self._holders[name] = (session, time.monotonic())
        return name

    def _taken_by_others(self, name: str) -> set[str]:
        return {r.item_id for r in self.log.labels() if r.labeller != name}

    def queue(self, name: str) -> list[ShownItem]:
        """Every overlap item, then the others nobody else has labelled."""
        taken = self._taken_by_others(name)
        return [s for s in self.items if s.item.overlap or s.item.item_id not in taken]

    def _item_for(self, name: str, item_id: str) -> ShownItem:
        """The item of `name`'s queue with this id (404 when it is not one)."""
        item = self.by_id.get(item_id)
        if item is None or not (item.item.overlap or item_id not in self._taken_by_others(name)):
            raise web.HTTPNotFound(text=f"item {item_id!r} is not in {name}'s sample")
        return item

    def state(self, name: str) -> dict[str, Any]:
        mine = self.log.of(name)
        queue = self.queue(name)
        pending = [s.item.item_id for s in queue if s.item.item_id not in mine]
        return {"labeller": name, "done": len(mine), "total": len(mine) + len(pending),
                "history": list(mine), "next": pending[0] if pending else None}

    def view(self, name: str, item_id: str) -> dict[str, Any]:
        item = self._item_for(name, item_id)
        given = self.log.of(name).get(item_id)
        return {
            "item_id": item_id, "document_1": item.document_1, "document_2": item.document_2,
            "changed_1": item.changed_1, "changed_2": item.changed_2,
            "given": given.raw if given is not None else None,
        }

    def rate(self, name: str, item_id: str, value: Any) -> LabelRecord:
        item = self._item_for(name, item_id)
        scale = self.scale
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise web.HTTPBadRequest(text=f"rating {value!r}: expected a number from {scale.low:g} to {scale.high:g}")
        if not scale.low <= value <= scale.high or (scale.integer and float(value) != int(value)):
            kind = "a whole number" if scale.integer else "a number"
            raise web.HTTPBadRequest(text=f"rating {value!r} is off the scale: expected {kind} from {scale.low:g} to {scale.high:g}")
        key = item.item
        record = LabelRecord(item_id=item_id, doc_id=key.doc_id, needle=key.needle, hay=key.hay, i=key.i, j=key.j,
                             replicate=key.replicate, labeller=name, label=scale.to_points(float(value)), raw=float(value),
                             scale=scale.name, at=now(), inclusion=key.inclusion)
        self.log.append(record)
        return record


def create_app(book: LabelBook, *, token: str | None) -> web.Application:
    @web.middleware
    async def guard(request: web.Request, handler: Any) -> web.StreamResponse:
        if token is not None and request.path.startswith("/api/"):
            given = request.headers.get("X-Label-Token", "")
            if not secrets.compare_digest(given, token):
                raise web.HTTPForbidden(text="this server needs its token: open the address it printed, with ?token=...")
        return await handler(request)

    async def index(request: web.Request) -> web.FileResponse:
        return web.FileResponse(STATIC / "index.html")

    async def body(request: web.Request) -> dict[str, Any]:
        try:
            data = await request.json()
        except ValueError:
            raise web.HTTPBadRequest(text="expected a JSON object") from None
        if not isinstance(data, dict):
            raise web.HTTPBadRequest(text="expected a JSON object")
        return data

    async def claim(request: web.Request) -> web.Response:
        data = await body(request)
        session = book.claim(str(data.get("labeller", "")).strip(), data.get("session"))
        name = book.labeller(session)
        return web.json_response({"session": session, "scale": msgspec.to_builtins(book.scale),
                                  "instructions": book.instructions, **book.state(name)})

    async def state(request: web.Request) -> web.Response:
        return web.json_response(book.state(book.labeller(request.query.get("session", ""))))

    async def item(request: web.Request) -> web.Response:
        name = book.labeller(request.query.get("session", ""))
        return web.json_response(book.view(name, request.match_info["item_id"]))

    async def label(request: web.Request) -> web.Response:
        data = await body(request)
        name = book.labeller(str(data.get("session", "")))
        book.rate(name, str(data.get("item_id", "")), data.get("value"))
        return web.json_response({"saved": True, **book.state(name)})

    app = web.Application(middlewares=[guard])
    app.router.add_get("/", index)
    app.router.add_static("/static/", STATIC, follow_symlinks=False)
    app.router.add_post("/api/claim", claim)
    app.router.add_get("/api/state", state)
    app.router.add_get("/api/item/{item_id}", item)
    app.router.add_post("/api/label", label)
    return app
