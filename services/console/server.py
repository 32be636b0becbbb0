"""The console's HTTP endpoints (aiohttp), on top of a :class:`Backend` (the service: the bus and the
view). The contract other programs may rely on:

- ``GET /api/state``: JSON with at least ``phase``, ``board`` (nine characters, as in ``referee.state``)
  and ``task``; also vision's reading (``vision``), the simulated table (``world``) and ``sim``.
- ``GET /api/health``: every process heard (alive, restarts, heartbeat age) and every topic's rate.
- ``GET /api/timeline``, ``GET /api/stats`` (frames sent, shown, dropped, fps, latency per browser).
- ``GET /camera.jpg``: the newest frame with vision's overlay (503 before the first frame).
- ``GET /ws``: a WebSocket that pushes ``{"type": "game"|"vision"|"world"|"health"|"timeline"|"stats",
  "data": …}`` as text and frames as binary messages (4 bytes big-endian sequence number, then the
  JPEG); the page answers ``{"type": "shown", "seq": N}`` once it has shown a frame, and only then is
  the next frame sent (the newest one: older frames are dropped, never queued).
- ``POST /api/operator`` ``{"action": "task", "task": 2, "squares": [1,5,9,3], "colours": "bbww"}``,
  ``{"action": "task", "task": 4, "first": 5}``, ``{"action": "stop"}``, ``{"action": "level",
  "level": "hard"}``; the referee's answer: 200 ``{"ok": true, "game_id": …}``, or 409 with its reason.
- ``GET /gomoku``: five in a row against the engine (:mod:`services.console.gomoku`); ``GET
  /api/gomoku/state``, ``POST /api/gomoku/new`` ``{"size": 15, "rule": "freestyle"|"standard", "level":
  "easy"|"medium"|"hard", "side": "X"|"O"}`` (all optional) and ``POST /api/gomoku/move`` ``{"x": 7, "y":
  7}`` answer the game (:meth:`~services.console.gomoku.GomokuGame.view`) once the engine has replied; the
  engine thinks in a worker thread, one move at a time (409 meanwhile), so the loop stays live.
- ``POST /api/sim/place`` ``{"square": 5}``, ``/api/sim/move`` ``{"from_square": 1, "to_square": 2}``,
  ``/api/sim/remove`` ``{"square": 3}``, ``/api/sim/button`` ``{}``, ``/api/sim/human`` ``{"policy":
  "random", "misbehave": []}``, ``/api/sim/speed`` ``{"speed": 2.0}``.

Every refusal is a 4xx with ``{"ok": false, "error": reason}`` and changes nothing: 400 bad input, 401 no
or a wrong token, 403 a cross-site request, 409 it does not fit the present state (or the referee
refused), 415 not JSON; 504 when the referee or the simulated world did not answer.

Safety: a token (when configured) must come with every request, as ``Authorization: Bearer T``,
``?token=T`` (the page's first load; a cookie is then set for its own files) or that cookie. Without a
token, only requests addressed to a loopback name (or the configured host) are taken, so that another
site cannot make its own name point here. A POST must be JSON (a cross-site form cannot send it without
the browser asking first), and a POST or a WebSocket must, when the browser says where it comes from
(``Origin``), come from this very host. Static files are served only from
:data:`STATIC_DIR`, never through a symbolic link.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Final, Protocol
from urllib.parse import urlsplit

from aiohttp import WSMsgType, web

from messages import GameState, HumanSetup, OperatorCommand, OperatorReply, WorldAction, WorldState

from . import core
from .gomoku import GomokuGame, MoveRequest, NewRequest

STATIC_DIR: Final = Path(__file__).resolve().parent / "static"
COOKIE: Final = "sanzi_console_token"
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
#: the largest request body taken (every request is a few numbers).
MAX_BODY: Final = 4096
#: the gomoku game of an application made by :func:`make_app`.
GOMOKU: Final = web.AppKey("gomoku", GomokuGame)


class Backend(Protocol):
    """What the endpoints need from the running console (:class:`services.console.service.ConsoleService`)."""

    core: core.ConsoleCore

    def next_id(self, what: str) -> str: ...
    async def operator(self, command: OperatorCommand) -> OperatorReply | None: ...
    async def world_action(self, action: WorldAction) -> bool: ...
    async def press(self) -> None: ...
    async def human(self, setup: HumanSetup) -> None: ...
    async def camera_jpeg(self) -> bytes | None: ...
    async def websocket(self, request: web.Request) -> web.WebSocketResponse: ...
    def stats(self) -> dict[str, Any]: ...


def refuse(status: int, reason: str) -> web.Response:
    return web.json_response({"ok": False, "error": reason}, status=status)


def _supplied_token(request: web.Request) -> tuple[str, bool]:
    """The token a request carries and whether it came in the query (then a cookie is set)."""
    auth = request.headers.get("Authorization", "")
    if auth.startswith("Bearer "):
        return auth[len("Bearer ") :].strip(), False
    if "token" in request.query:
        return request.query["token"], True
    return request.cookies.get(COOKIE, ""), False


def token_middleware(token: str) -> Any:
    """Every request must carry ``token`` (when it is not "")."""

    @web.middleware
    async def check(request: web.Request, handler: Handler) -> Any:
        from_query = False
        if token:
            supplied, from_query = _supplied_token(request)
            if not hmac.compare_digest(supplied.encode(), token.encode()):
                return refuse(401, "this console needs its token: open it with ?token=… (see console.token)")
        response = await handler(request)
        if from_query and not response.prepared:
            response.set_cookie(COOKIE, token, httponly=True, samesite="Strict")
        return response

    return check


#: the names under which a console without a token may be reached (a page of another site that makes its
#: own name resolve to 127.0.0.1, "DNS rebinding", would otherwise be same-origin with it).
LOOPBACK_NAMES: Final = frozenset({"127.0.0.1", "localhost", "::1"})


def host_middleware(allowed: frozenset[str]) -> Any:
    """Only requests addressed to one of ``allowed`` host names (empty: any; a token guards instead)."""

    @web.middleware
    async def check(request: web.Request, handler: Handler) -> Any:
        if allowed:
            name = urlsplit("//" + request.host).hostname or ""
            if name not in allowed:
                return refuse(403, f"this console answers to {', '.join(sorted(allowed))}, not {name!r}")
        return await handler(request)

    return check


@web.middleware
async def same_origin(request: web.Request, handler: Handler) -> Any:
    """A POST or a WebSocket must, when the browser names its origin, come from this host (a page of
    another site must not drive the robot nor watch its camera); a POST must be JSON."""
    if request.method == "POST" or request.path == "/ws":
        origin = request.headers.get("Origin")
        if origin and urlsplit(origin).netloc != request.host:
            return refuse(403, f"a request from another site ({origin}) is not taken")
    if request.method == "POST" and request.content_type != "application/json":
        return refuse(
            415, f"the body must be JSON (Content-Type: application/json), not {request.content_type!r}"
        )
    return await handler(request)


async def _body(request: web.Request, kind: type[Any]) -> Any:
    return core.decode_body(await request.read(), kind)


def make_app(backend: Backend, *, token: str = "", hosts: frozenset[str] = frozenset()) -> web.Application:
    """The console's web application over ``backend``; ``hosts``: the host names it answers to (empty:
    any)."""
    middlewares = [host_middleware(hosts), token_middleware(token), same_origin]
    app = web.Application(middlewares=middlewares, client_max_size=MAX_BODY)
    game = app[GOMOKU] = GomokuGame()
    # the engine's turns in flight: held here so that a page that goes away mid-thought neither cancels
    # the worker thread nor leaves the game thinking forever
    turns: set[asyncio.Task[None]] = set()

    def handles(fn: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> Any:
        """Turn the core's refusals into 4xx answers."""

        async def wrapped(request: web.Request) -> web.StreamResponse:
            try:
                return await fn(request)
            except core.BadRequest as exc:
                return refuse(400, str(exc))
            except core.Conflict as exc:
                return refuse(409, str(exc))
            except web.HTTPRequestEntityTooLarge:
                return refuse(413, f"the body is larger than {MAX_BODY} bytes")

        return wrapped

    async def index(request: web.Request) -> web.StreamResponse:
        return web.FileResponse(STATIC_DIR / "index.html", headers={"Cache-Control": "no-cache"})

    async def api_state(request: web.Request) -> web.StreamResponse:
        return web.json_response(backend.core.api_state())

    async def api_health(request: web.Request) -> web.StreamResponse:
        return web.json_response(backend.core.health_view(time.monotonic_ns()))

    async def api_timeline(request: web.Request) -> web.StreamResponse:
        return web.json_response(backend.core.timeline_view())

    async def api_stats(request: web.Request) -> web.StreamResponse:
        return web.json_response(backend.stats())

    async def camera(request: web.Request) -> web.StreamResponse:
        data = await backend.camera_jpeg()
        if data is None:
            return refuse(503, "no camera frame yet")
        return web.Response(body=data, content_type="image/jpeg", headers={"Cache-Control": "no-store"})

    async def operator(request: web.Request) -> web.StreamResponse:
        req = await _body(request, core.OperatorRequest)
        command = core.parse_operator(req, backend.next_id("op"))
        reply = await backend.operator(command)
        if reply is None:
            return refuse(504, "no answer from the referee (is it running?)")
        if not reply.ok:
            return refuse(409, f"the referee refused: {reply.error}")
        return web.json_response({"ok": True, "game_id": reply.game_id, "command_id": command.command_id})

    def simulator() -> tuple[WorldState | None, GameState | None]:
        if not backend.core.sim:
            raise core.Conflict("this stack runs on hardware: there is no simulated table to act on")
        return backend.core.world, backend.core.state

    async def act(action: WorldAction) -> web.StreamResponse:
        if not await backend.world_action(action):
            return refuse(504, "the simulated world did not take the action (is simworld running?)")
        return web.json_response({"ok": True, "action_id": action.action_id})

    async def place(request: web.Request) -> web.StreamResponse:
        req = await _body(request, core.PlaceRequest)
        world, state = simulator()
        return await act(core.parse_place(req, backend.next_id("place"), world, state))

    async def move(request: web.Request) -> web.StreamResponse:
        req = await _body(request, core.MoveRequest)
        world, _ = simulator()
        return await act(core.parse_move(req, backend.next_id("move"), world))

    async def remove(request: web.Request) -> web.StreamResponse:
        req = await _body(request, core.RemoveRequest)
        world, _ = simulator()
        return await act(core.parse_remove(req, backend.next_id("remove"), world))

    async def button(request: web.Request) -> web.StreamResponse:
        body = await request.read()
        if body.strip() not in (b"", b"{}"):
            raise core.BadRequest("the button takes no arguments: send {}")
        simulator()
        await backend.press()
        return web.json_response({"ok": True})

    async def speed(request: web.Request) -> web.StreamResponse:
        req = await _body(request, core.SpeedRequest)
        simulator()
        return await act(core.parse_speed(req, backend.next_id("speed")))

    async def human(request: web.Request) -> web.StreamResponse:
        req = await _body(request, core.HumanRequest)
        simulator()
        setup = core.parse_human(req)
        await backend.human(setup)
        return web.json_response({"ok": True, "policy": setup.policy})

    async def ws(request: web.Request) -> web.StreamResponse:
        return await backend.websocket(request)

    async def gomoku_page(request: web.Request) -> web.StreamResponse:
        return web.FileResponse(STATIC_DIR / "gomoku.html", headers={"Cache-Control": "no-cache"})

    async def gomoku_state(request: web.Request) -> web.StreamResponse:
        return web.json_response(game.view())

    async def engine_turn() -> None:
        """The engine's reply, if it is to move, computed in a worker thread (never on the loop)."""
        if not game.begin_thinking():
            return

        async def think() -> None:
            decision = None
            try:
                decision = await asyncio.to_thread(game.think)
            finally:
                game.finish(decision)

        task = asyncio.create_task(think())
        turns.add(task)
        task.add_done_callback(turns.discard)
        await asyncio.shield(task)

    async def gomoku_new(request: web.Request) -> web.StreamResponse:
        game.new(await _body(request, NewRequest))
        await engine_turn()
        return web.json_response(game.view())

    async def gomoku_move(request: web.Request) -> web.StreamResponse:
        game.play(await _body(request, MoveRequest))
        await engine_turn()
        return web.json_response(game.view())

    app.router.add_get("/", index)
    app.router.add_get("/api/state", api_state)
    app.router.add_get("/api/health", api_health)
    app.router.add_get("/api/timeline", api_timeline)
    app.router.add_get("/api/stats", api_stats)
    app.router.add_get("/camera.jpg", camera)
    app.router.add_get("/ws", ws)
    app.router.add_post("/api/operator", handles(operator))
    app.router.add_post("/api/sim/place", handles(place))
    app.router.add_post("/api/sim/move", handles(move))
    app.router.add_post("/api/sim/remove", handles(remove))
    app.router.add_post("/api/sim/button", handles(button))
    app.router.add_post("/api/sim/human", handles(human))
    app.router.add_post("/api/sim/speed", handles(speed))
    app.router.add_get("/gomoku", gomoku_page)
    app.router.add_get("/api/gomoku/state", gomoku_state)
    app.router.add_post("/api/gomoku/new", handles(gomoku_new))
    app.router.add_post("/api/gomoku/move", handles(gomoku_move))
    app.router.add_static("/static/", STATIC_DIR, follow_symlinks=False, append_version=False)
    return app


def shown_ack(text: str) -> int | None:
    """The sequence number of a browser's ``{"type": "shown", "seq": N}``, or None for anything else."""
    try:
        msg = json.loads(text)
    except ValueError:
        return None
    if isinstance(msg, dict) and msg.get("type") == "shown" and isinstance(msg.get("seq"), int):
        return int(msg["seq"])
    return None


__all__ = ["COOKIE", "GOMOKU", "STATIC_DIR", "Backend", "WSMsgType", "make_app", "refuse", "shown_ack"]
