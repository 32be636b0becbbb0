"""The console's pure core: what the page shows, built from bus messages, and the checks of what the page
asks for. No sockets, no clock of its own (times are passed in), so it is tested without a bus.

- :class:`ConsoleCore` follows ``referee.state`` (newest revision), ``vision.board``, ``sim.world``,
  heartbeats and every topic's rate, and keeps a timeline of the game's events.
- :func:`parse_operator` and the ``parse_*`` functions turn a request's JSON into a typed bus message or
  raise :class:`BadRequest` with the reason (the server answers 400 and changes nothing).
- :class:`FramePairer` pairs each camera frame with vision's reading of that very frame.
- :class:`ClientFlow` is one browser's frame flow: one frame in flight, only the newest waiting.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import msgspec

import messages
from messages import (
    BoardObservation,
    CameraFrame,
    GameState,
    Heartbeat,
    HumanSetup,
    OperatorCommand,
    OperatorReply,
    WorldAction,
    WorldState,
)
from services.common.rate import RateMeter

#: the board's squares, as on the bus.
SQUARES: Final = range(1, 10)
EMPTY: Final = "."
#: the window over which the health panel measures topic rates.
RATE_WINDOW_S: Final = 5.0
#: when vision has said nothing for this long, frames are shown without an overlay.
VISION_SILENT_NS: Final = 500_000_000
#: how many recent raw frames wait for vision's reading.
FRAMES_KEPT: Final = 8
#: frames whose capture-to-shown latency is kept for the statistics.
LATENCY_SAMPLES: Final = 600


class BadRequest(ValueError):
    """A request the console refuses before anything is sent: the message says what is wrong."""


class Conflict(ValueError):
    """A well-formed request that does not fit the present state (a square that is not empty, a
    simulator action on hardware): nothing is sent."""


# ------------------------------------------------------------------------------------------ requests


class OperatorRequest(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """``POST /api/operator``: what ``sanzi task``/``stop``/``level`` take."""

    action: Literal["task", "stop", "level"]
    task: int | None = None
    squares: list[int] = []
    first: int | None = None
    level: str | None = None
    colours: str = ""


class PlaceRequest(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """``POST /api/sim/place``: a ``colour`` piece (default: the person's) from the supply to ``square``."""

    square: int
    colour: Literal["black", "white"] | None = None


class MoveRequest(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """``POST /api/sim/move``: the piece on ``from_square`` to ``to_square`` (task 6's cheat)."""

    from_square: int
    to_square: int


class RemoveRequest(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """``POST /api/sim/remove``: the piece on ``square`` off the board."""

    square: int


class SpeedRequest(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """``POST /api/sim/speed``: the simulator's speed factor from now on."""

    speed: float


class HumanRequest(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """``POST /api/sim/human``: the simulated person's policy and misbehaviours."""

    policy: str
    misbehave: list[str] = []


def decode_body(body: bytes, kind: type[Any]) -> Any:
    """``body`` (JSON) as ``kind``. :raises BadRequest: naming the field that is wrong."""
    try:
        return msgspec.json.decode(body or b"{}", type=kind)
    except msgspec.ValidationError as exc:
        raise BadRequest(str(exc)) from None
    except msgspec.DecodeError as exc:
        raise BadRequest(f"not JSON: {exc}") from None


def _square(value: int, what: str) -> int:
    if value not in SQUARES:
        raise BadRequest(f"{what} must be a square 1..9, not {value}")
    return value


def parse_operator(req: OperatorRequest, command_id: str) -> OperatorCommand:
    """The operator command for ``req``. The console checks shapes (numbers in range, no repeats, a level
    the engine knows); the referee checks the rest (the right count for the task, no task while one runs)
    and its refusal is shown with its reason. :raises BadRequest:"""
    import engine

    if req.action == "task":
        if req.task is None or not 1 <= req.task <= 6:
            raise BadRequest(f"a task is a number 1..6, not {req.task}")
        squares = [_square(s, "each target square") for s in req.squares]
        if len(set(squares)) != len(squares):
            raise BadRequest(f"target squares repeat: {squares}")
        if req.first is not None:
            _square(req.first, "the first square")
        if req.colours and set(req.colours) - {"b", "w"}:
            raise BadRequest(f"colours are letters b and w, one per square, not {req.colours!r}")
        return OperatorCommand(
            command_id=command_id,
            action="task",
            task=req.task,
            squares=squares,
            first=req.first,
            colours=req.colours,
        )
    if req.action == "level":
        if req.level not in engine.LEVELS:
            raise BadRequest(f"level must be one of {', '.join(engine.LEVELS)}, not {req.level!r}")
        return OperatorCommand(command_id=command_id, action="level", level=req.level)
    return OperatorCommand(command_id=command_id, action="stop")


def parse_place(
    req: PlaceRequest, action_id: str, world: WorldState | None, state: GameState | None
) -> WorldAction:
    """The world action that puts a piece on ``req.square``. :raises BadRequest: :raises Conflict:"""
    square = _square(req.square, "square")
    board = _world_board(world)
    if board[square - 1] != EMPTY:
        raise Conflict(f"square {square} is not empty")
    colour = req.colour or (state.person_colour if state is not None and state.person_colour else "black")
    return WorldAction(action_id=action_id, kind="place", colour=colour, to_square=square)


def parse_move(req: MoveRequest, action_id: str, world: WorldState | None) -> WorldAction:
    """The world action that moves a piece. :raises BadRequest: :raises Conflict:"""
    src, dst = _square(req.from_square, "from_square"), _square(req.to_square, "to_square")
    if src == dst:
        raise BadRequest("from_square and to_square are the same square")
    board = _world_board(world)
    if board[src - 1] == EMPTY:
        raise Conflict(f"square {src} is empty: there is no piece to move")
    if board[dst - 1] != EMPTY:
        raise Conflict(f"square {dst} is not empty")
    return WorldAction(action_id=action_id, kind="move", from_square=src, to_square=dst)


def parse_remove(req: RemoveRequest, action_id: str, world: WorldState | None) -> WorldAction:
    """The world action that takes a piece off the board. :raises BadRequest: :raises Conflict:"""
    square = _square(req.square, "square")
    if _world_board(world)[square - 1] == EMPTY:
        raise Conflict(f"square {square} is empty: there is no piece to remove")
    return WorldAction(action_id=action_id, kind="remove", from_square=square)


def parse_speed(req: SpeedRequest, action_id: str) -> WorldAction:
    """The world action that sets the simulator's speed. :raises BadRequest:"""
    from services.simworld.config import MAX_SPEED, MIN_SPEED

    if not MIN_SPEED <= req.speed <= MAX_SPEED:
        raise BadRequest(f"speed must be a factor from {MIN_SPEED:g} to {MAX_SPEED:g}, not {req.speed:g}")
    return WorldAction(action_id=action_id, kind="speed", speed=req.speed)


def parse_human(req: HumanRequest) -> HumanSetup:
    """The simulated person's new behaviour, checked as the simulated person would check it.
    :raises BadRequest:"""
    from services.simhuman.person import MisbehaviourError, parse_misbehaviours
    from services.simhuman.policy import PolicyError, make_policy

    try:
        make_policy(req.policy)
        parse_misbehaviours(req.misbehave)
    except (PolicyError, MisbehaviourError) as exc:
        raise BadRequest(str(exc)) from None
    return HumanSetup(policy=req.policy, misbehave=list(req.misbehave))


def _world_board(world: WorldState | None) -> str:
    if world is None:
        raise Conflict("the simulated world has not been heard yet (is simworld running?)")
    return world.board


# ------------------------------------------------------------------------------------------ the timeline


@dataclass(frozen=True)
class Event:
    """One line of the timeline: when (wall-clock seconds), what kind, and the words."""

    t: float
    kind: str
    text: str


def game_events(old: GameState | None, new: GameState) -> list[tuple[str, str]]:
    """What happened between two states of the game, as (kind, text) pairs, oldest first.

    >>> game_events(None, GameState(revision=1, game_id="g1", task=5, phase="waiting-for-person"))
    [('game', 'game g1: task 5'), ('phase', 'waiting-for-person')]
    """
    out: list[tuple[str, str]] = []
    same_game = old is not None and old.game_id == new.game_id
    if new.game_id and not same_game:
        out.append(("game", f"game {new.game_id}: task {new.task}"))
    if old is None or old.phase != new.phase:
        out.append(("phase", new.phase + (f" ({new.activity})" if new.activity else "")))
    before = old.moves if same_game and old is not None else []
    for i, square in enumerate(new.moves[len(before) :], start=len(before) + 1):
        out.append(("move", f"move {i}: square {square}"))
    if new.illegal and (not same_game or old is None or old.illegal != new.illegal):
        out.append(("illegal", f"illegal: {new.illegal}" + (f" — {new.message}" if new.message else "")))
    restored = old.cheats_restored if same_game and old is not None else 0
    if new.cheats_restored > restored:
        out.append(("cheat", f"cheat undone: a moved piece put back ({new.cheats_restored} so far)"))
    if new.result and (not same_game or old is None or old.result != new.result):
        out.append(("result", f"result: {new.result}"))
    down = set(old.peers_down) if old is not None else set()
    for peer in sorted(set(new.peers_down) - down):
        out.append(("peer", f"{peer} is down: the game waits"))
    for peer in sorted(down - set(new.peers_down)):
        out.append(("peer", f"{peer} is back"))
    if new.fault and (old is None or old.fault != new.fault):
        out.append(("fault", f"fault: {new.fault}"))
    return out


# ------------------------------------------------------------------------------------------ the view


@dataclass
class ProcessSeen:
    """A process as its heartbeats tell it."""

    beat: Heartbeat
    heard_ns: int
    restarts: int = 0


class ConsoleCore:
    """Everything the page shows, from the bus messages given to :meth:`take`."""

    def __init__(self, *, peer_timeout_s: float, timeline_length: int = 200, sim: bool = True) -> None:
        self.peer_timeout_ns = int(peer_timeout_s * 1e9)
        self.sim = sim
        self.state: GameState | None = None
        self._state_pid = 0
        self.vision: BoardObservation | None = None
        self.stable: BoardObservation | None = None
        self.world: WorldState | None = None
        self.processes: dict[str, ProcessSeen] = {}
        self.meters: dict[str, RateMeter] = {}
        self.timeline: deque[Event] = deque(maxlen=timeline_length)
        #: the simulated person's policy as last set on ``sim.human`` ("" before anyone set it).
        self.human_policy = ""
        #: the last operator reply of each command id the console sent.
        self.replies: dict[str, OperatorReply] = {}

    def take(self, topic: str, header: messages.Header, message: Any, now_ns: int, wall_s: float) -> set[str]:
        """Take one message; returns which parts of the view changed ("game", "vision", "world",
        "health", "timeline")."""
        info = messages.TOPICS.get(topic)
        meter = self.meters.get(topic)
        if meter is None and info is not None:
            meter = self.meters[topic] = RateMeter(topic, info.rate_hz, RATE_WINDOW_S)
        if meter is not None and header.source != "console":
            meter.add(header.mono_ns, now_ns)
        match message:
            case GameState():
                return self._take_state(message, header.pid, wall_s)
            case BoardObservation():
                if topic == "vision.stable":
                    self.stable = message
                self.vision = message
                return {"vision"}
            case WorldState():
                changed = self.world is None or self.world.revision != message.revision
                self.world = message
                return {"world"} if changed else set()
            case Heartbeat():
                seen = self.processes.get(message.process)
                restarts = seen.restarts if seen is not None else 0
                if seen is not None and seen.beat.pid != message.pid:
                    restarts += 1
                    self.note(wall_s, "process", f"{message.process} restarted (pid {message.pid})")
                self.processes[message.process] = ProcessSeen(message, header.mono_ns, restarts)
                return {"health"}
            case HumanSetup():
                self.human_policy = message.policy
                return {"world"}
            case OperatorReply():
                self.replies[message.command_id] = message
                if not message.ok:
                    self.note(wall_s, "refused", f"the referee refused a command: {message.error}")
                    return {"timeline"}
        return set()

    def _take_state(self, state: GameState, pid: int, wall_s: float) -> set[str]:
        old = self.state
        # the newest revision wins; a restarted referee (a new pid) may number afresh
        if old is not None and pid == self._state_pid and state.revision <= old.revision:
            return set()
        self.state, self._state_pid = state, pid
        for kind, text in game_events(old, state):
            self.note(wall_s, kind, text)
        return {"game", "timeline"}

    def note(self, wall_s: float, kind: str, text: str) -> None:
        self.timeline.append(Event(wall_s, kind, text))

    # -- views ------------------------------------------------------------------------------------------

    def api_state(self) -> dict[str, Any]:
        """``GET /api/state``: the game as the referee holds it (at least ``phase``, ``board`` and
        ``task``), vision's reading, the simulated table, and whether this is the simulator."""
        state = self.state or GameState(revision=0)
        return {
            **msgspec.to_builtins(state),
            "referee_heard": self.state is not None,
            "vision": self.vision_view(),
            "world": self.world_view(),
            "sim": self.sim,
        }

    def game_view(self) -> dict[str, Any]:
        out = self.api_state()
        out.pop("vision")
        out.pop("world")
        return out

    def vision_view(self) -> dict[str, Any] | None:
        obs = self.vision
        if obs is None:
            return None
        return {
            "found": obs.found,
            "board": obs.board,
            "stable_board": self.stable.board if self.stable is not None else None,
            "stable": obs.stable,
            "occluded": obs.occluded,
            "occlusion": obs.occlusion,
            "problem": obs.problem,
            "angle_deg": round(obs.pose.angle_deg, 1) if obs.pose is not None else None,
            "confidences": [round(s.confidence, 2) for s in obs.squares],
            "supply": {
                "black": sum(1 for p in obs.supply if p.colour == "black"),
                "white": sum(1 for p in obs.supply if p.colour == "white"),
            },
            "processing_ms": obs.processing_ms,
            "frame_id": obs.frame_id,
        }

    def world_view(self) -> dict[str, Any] | None:
        w = self.world
        if w is None:
            return None
        supply = {
            c: sum(1 for p in w.pieces if p.where == "supply" and p.colour == c) for c in ("black", "white")
        }
        return {
            "board": w.board,
            "hand": w.hand.present,
            "holding": w.gripper.holding is not None,
            "speed": w.speed or None,
            "policy": self.human_policy or None,
            "supply": supply,
            "revision": w.revision,
        }

    def health_view(self, now_ns: int) -> dict[str, Any]:
        """Every process heard (alive, pid, restarts seen, heartbeat age, health, last error) and every
        topic's rate against the topic table (alive, on rate), as ``sanzi status`` and ``sanzi hz`` judge."""
        procs = []
        for name, seen in sorted(self.processes.items()):
            age = (now_ns - seen.heard_ns) / 1e9
            procs.append(
                {
                    "name": name,
                    "alive": now_ns - seen.heard_ns <= self.peer_timeout_ns,
                    "pid": seen.beat.pid,
                    "restarts": seen.restarts,
                    "heartbeat_age_s": round(age, 2),
                    "uptime_s": seen.beat.uptime_s,
                    "health": seen.beat.state,
                    "detail": seen.beat.detail,
                    "last_error": seen.beat.last_error,
                }
            )
        topics = []
        for name, meter in sorted(self.meters.items()):
            r = meter.report(now_ns)
            topics.append(
                {
                    "topic": name,
                    "rate_hz": round(r.rate_hz, 2) if r.rate_hz != float("inf") else None,
                    "expected_hz": r.expected_hz,
                    "alive": r.alive,
                    "on_rate": r.on_rate,
                    "age_s": round(r.age_s, 2) if r.age_s is not None else None,
                }
            )
        return {"processes": procs, "topics": topics}

    def timeline_view(self) -> list[dict[str, Any]]:
        return [{"t": e.t, "kind": e.kind, "text": e.text} for e in self.timeline]


# ------------------------------------------------------------------------------------------ frames


@dataclass(frozen=True)
class Pair:
    """A camera frame and vision's reading of it (None: vision is silent; the frame is shown bare)."""

    frame: CameraFrame
    obs: BoardObservation | None


class FramePairer:
    """Pairs each frame with vision's reading of the same capture (``capture_ns``): vision's reading
    comes a few milliseconds after its frame, so recent frames wait here for it. When vision has said
    nothing for :data:`VISION_SILENT_NS`, a frame is paired with nothing."""

    def __init__(self) -> None:
        self._frames: deque[CameraFrame] = deque(maxlen=FRAMES_KEPT)
        self._last_obs_ns = 0
        self.newest: Pair | None = None
        #: grows with every new pair (the frame flow's sequence number).
        self.seq = 0

    def on_frame(self, frame: CameraFrame, now_ns: int) -> Pair | None:
        self._frames.append(frame)
        if now_ns - self._last_obs_ns > VISION_SILENT_NS:
            return self._new(Pair(frame, None))
        return None

    def on_observation(self, obs: BoardObservation, now_ns: int) -> Pair | None:
        self._last_obs_ns = now_ns
        for frame in reversed(self._frames):
            if obs.capture_ns and frame.capture_ns == obs.capture_ns:
                while self._frames and self._frames[0] is not frame:
                    self._frames.popleft()  # older frames will get no reading now
                return self._new(Pair(frame, obs))
        return None

    def forget(self) -> None:
        """Drop every frame held (nobody looks any more: they would be stale when someone does)."""
        self._frames.clear()
        self.newest = None

    def _new(self, pair: Pair) -> Pair:
        if self.newest is not None and pair.frame.capture_ns < self.newest.frame.capture_ns:
            return self.newest  # never go back in time
        self.seq += 1
        self.newest = pair
        return pair


@dataclass
class ClientFlow:
    """One browser's frames: at most one in flight (sent, not yet acknowledged as shown) and only the
    newest waiting; every older frame is dropped, never queued. Times are monotonic ns."""

    ack_timeout_ns: int
    min_interval_ns: int
    #: (seq, capture_ns, data) of the newest frame not yet sent.
    waiting: tuple[int, int, bytes] | None = None
    in_flight: int = 0
    sent_ns: int = 0
    #: no frame goes before this (the frame-rate limit).
    due_ns: int = 0
    sent: int = 0
    shown: int = 0
    dropped: int = 0
    capture_of: dict[int, int] = field(default_factory=dict)
    latencies_ms: deque[float] = field(default_factory=lambda: deque(maxlen=LATENCY_SAMPLES))
    shown_ns: deque[int] = field(default_factory=lambda: deque(maxlen=LATENCY_SAMPLES))

    def offer(self, seq: int, capture_ns: int, data: bytes) -> None:
        if self.waiting is not None and self.waiting[0] != seq:
            self.dropped += 1
        self.waiting = (seq, capture_ns, data)

    def drop_older(self, newest_seq: int) -> None:
        """Drop the waiting frame if a newer pair exists: the frame loop offers that one when this page
        may take a frame, and the waiting one must not go first. (A frame may be offered stale: the loop
        encodes it while the page is free, and the page takes another frame before the encoding ends.)"""
        if self.waiting is not None and self.waiting[0] < newest_seq:
            self.waiting = None
            self.dropped += 1

    def wait_ns(self, now_ns: int) -> int | None:
        """Nanoseconds until a new frame may go (0: now), or None while one is in flight and its
        acknowledgement is not yet overdue (the acknowledgement says when)."""
        if self.in_flight and now_ns - self.sent_ns < self.ack_timeout_ns:
            return None
        return max(0, self.due_ns - now_ns)

    def ready(self, now_ns: int) -> bool:
        """Whether a new frame may go now (nothing in flight, or its acknowledgement is overdue, and
        the frame-rate limit allows)."""
        if self.in_flight and now_ns - self.sent_ns < self.ack_timeout_ns:
            return False
        return now_ns >= self.due_ns

    def take(self, now_ns: int) -> tuple[int, bytes] | None:
        """The frame to send now, or None."""
        if self.waiting is None or not self.ready(now_ns):
            return None
        seq, capture_ns, data = self.waiting
        self.waiting = None
        self.in_flight, self.sent_ns = seq, now_ns
        # the next frame is due one interval after this one was due, not after it went: frames come on
        # the camera's beat, and waiting a full interval after a late one would lower the rate
        self.due_ns = max(self.due_ns, now_ns - self.min_interval_ns) + self.min_interval_ns
        self.capture_of = {seq: capture_ns}
        self.sent += 1
        return seq, data

    def acked(self, seq: int, now_ns: int) -> bool:
        """The browser showed frame ``seq``: record capture-to-shown latency. False for an unknown seq."""
        capture_ns = self.capture_of.pop(seq, None)
        if capture_ns is None:
            return False
        if seq == self.in_flight:
            self.in_flight = 0
        self.shown += 1
        self.shown_ns.append(now_ns)
        if capture_ns:
            self.latencies_ms.append((now_ns - capture_ns) / 1e6)
        return True

    def stats(self, now_ns: int, window_ns: int = 5_000_000_000) -> dict[str, Any]:
        recent = [t for t in self.shown_ns if now_ns - t <= window_ns]
        fps = (len(recent) - 1) / ((recent[-1] - recent[0]) / 1e9) if len(recent) > 1 else 0.0
        lat = sorted(self.latencies_ms)
        return {
            "sent": self.sent,
            "shown": self.shown,
            "dropped": self.dropped,
            "fps": round(fps, 1),
            "latency_ms_p50": round(lat[len(lat) // 2], 1) if lat else None,
            "latency_ms_p95": round(lat[min(len(lat) - 1, int(len(lat) * 0.95))], 1) if lat else None,
        }
