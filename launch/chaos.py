"""Chaos: kill -9 a random device process at random moments while games run, and measure the recovery.

:class:`Monkey` runs beside :func:`launch.simrun.run_plans` (another task on the same asyncio loop, with
its own bus connection). While a game is in progress it kills one of :data:`VICTIMS` (seeded choice)
every ``interval`` seconds (seeded, uniform), one process at a time: the next kill waits until the last
victim is heard again (the product promises recovery from any *one* process killed at any moment). For
every kill it records:

- ``back_s``: kill -> the victim's first heartbeat under its new pid (every peer can notice the restart
  from then on);
- ``progress_s``: kill -> the game moving again: the first ``referee.state`` after the victim is back
  whose progress (phase, moves, placements, judgments, result) differs from what it was then, with no
  process down.

With ``at_person_turns`` = (low, high) the moments are not every ``interval`` but one in each of the
person's turns, low..high seconds (seeded, uniform) after the lamp came on: the person's hand, piece
and button press then meet a restarting process (a restarted bus loses what is published meanwhile).

With ``freeze_share`` > 0 that share of the events is a freeze instead of a kill: SIGSTOP, ``freeze_s``
seconds, SIGCONT (always sent, even when the run is cancelled). ``back_s`` is then the first heartbeat
after the resume, and ``paused`` says whether the referee's state showed the victim down meanwhile.
When the games are over (:func:`play_under`), the monkey kills no more and listens until its last victim
is heard again (a kill just before the end would otherwise leave ``back_s`` unmeasured).

Used by ``tests/e2e/test_chaos.py`` and ``bench/chaos.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import statistics
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from messages import ButtonPress, GameState, Heartbeat
from messages.game import PAUSED, RESTING_PHASES, WAITING_FOR_PERSON
from services.common.config import Config

from . import stack as stack_module

#: the device's processes (the simulator's own are not killed: they stand for the physical world).
VICTIMS: Final = ("bus", "vision", "referee", "ai", "actuator", "led")
#: seconds between kills (uniform), as the issue's script did it.
DEFAULT_INTERVAL_S: Final = (1.0, 5.0)
#: how often the monkey looks at the clock when nothing arrives.
LOOK_S: Final = 0.05
#: when the games are over, how long the monkey waits at most for its last victim to be heard again.
SETTLE_TIMEOUT_S: Final = 30.0


def progress_key(state: GameState) -> tuple[Any, ...]:
    """What changes when the game moves on (a republication or a pause does not change it)."""
    return (
        state.game_id,
        state.paused_phase or state.phase,
        state.activity,
        len(state.moves),
        len(state.placements),
        state.pending_command,
        state.illegal_moves,
        state.cheats_restored,
        getattr(state, "press_ack", 0),
        state.result,
    )


@dataclass
class Kill:
    """One kill -9 and what followed."""

    victim: str
    pid: int
    #: monotonic seconds
    at: float
    #: where the game was ("phase/activity move N")
    moment: str
    #: "kill" (SIGKILL) or "freeze" (SIGSTOP, then SIGCONT after ``freeze_s``)
    kind: str = "kill"
    back_s: float | None = None
    progress_s: float | None = None
    #: a freeze: when SIGCONT was sent (monotonic), and whether the referee showed the victim down
    resumed_at: float | None = None
    paused: bool = False
    _back_key: tuple[Any, ...] | None = None


@dataclass
class Monkey:
    """Kills device processes of ``stack`` at random moments of the games (see the module docstring)."""

    stack: stack_module.Stack
    config: Config
    seed: int
    victims: Sequence[str] = VICTIMS
    interval: tuple[float, float] = DEFAULT_INTERVAL_S
    freeze_share: float = 0.0
    freeze_s: float = 5.0
    #: (low, high): kill once per person's turn, this long after the lamp came on, instead of every
    #: ``interval`` (None: every ``interval``)
    at_person_turns: tuple[float, float] | None = None
    kills: list[Kill] = field(default_factory=list)
    #: the newest referee state (by pid, then revision) and the newest pid of every process heard
    state: GameState | None = None
    pids: dict[str, int] = field(default_factory=dict)
    #: ids of every button press announced on panel.button (each must end up acknowledged)
    presses: set[int] = field(default_factory=set)
    #: set when the games are over: no more kills, only listening until the last victim is heard again
    stopping: bool = False
    _state_pid: int = 0
    #: ``at_person_turns``: the person's turn last seen, and when to kill in it (None: done)
    _turn: tuple[Any, ...] = ()
    _turn_kill_at: float | None = None

    async def run(self) -> None:
        """Run until cancelled."""
        from services.bus.client import Subscriber, context

        rng = random.Random(self.seed)
        ctx = context()
        sub = Subscriber(
            ctx, self.config.bus, ["sys.heartbeat", "referee.state", "panel.button"], name="chaos"
        )
        try:
            next_kill = time.monotonic() + rng.uniform(*self.interval)
            while True:
                env = await sub.recv(timeout=LOOK_S)
                now = time.monotonic()
                if env is not None:
                    self._take(env.message, env.header.pid, now)
                self._resume_due(now)
                if self.stopping and self.settled():
                    return
                due = self._turn_due(now, rng) if self.at_person_turns else now >= next_kill
                if not self.stopping and due and self._may_kill():
                    freeze = rng.random() < self.freeze_share
                    if await self._kill(rng.choice(list(self.victims)), now, freeze):
                        self._turn_kill_at = None  # one kill per person's turn
                    next_kill = now + rng.uniform(*self.interval)
        finally:
            for k in self.kills:  # never leave a process stopped
                if k.kind == "freeze" and k.resumed_at is None:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(k.pid, signal.SIGCONT)
                    k.resumed_at = time.monotonic()
            sub.close()
            ctx.destroy(linger=0)

    def _turn_due(self, now: float, rng: random.Random) -> bool:
        """``at_person_turns``: whether this is the moment of the kill in the person's current turn."""
        s = self.state
        assert self.at_person_turns is not None
        if s is None or s.phase != WAITING_FOR_PERSON or not s.lamp or s.result:
            return False
        turn = (s.game_id, len(s.moves), s.illegal_moves, s.cheats_restored)
        if turn != self._turn:  # a new turn: its moment is drawn now
            self._turn = turn
            self._turn_kill_at = now + rng.uniform(*self.at_person_turns)
        return self._turn_kill_at is not None and now >= self._turn_kill_at

    def settled(self) -> bool:
        """Whether every victim so far is heard again (a frozen one resumed and heard)."""
        return all(k.back_s is not None for k in self.kills)

    def _resume_due(self, now: float) -> None:
        for k in self.kills:
            if k.kind == "freeze" and k.resumed_at is None and now - k.at >= self.freeze_s:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(k.pid, signal.SIGCONT)
                k.resumed_at = now

    def _may_kill(self) -> bool:
        s = self.state
        if s is None or s.phase in RESTING_PHASES:
            return False
        return not self.kills or self.kills[-1].back_s is not None

    async def _kill(self, victim: str, now: float, freeze: bool = False) -> bool:
        """Kill (or freeze) ``victim``; whether it was done."""
        try:
            pids = await asyncio.to_thread(self.stack.pids)
        except Exception:  # supervisord busy: try at the next look
            return False
        pid = pids.get(victim, 0)
        if not pid:
            return False
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGSTOP if freeze else signal.SIGKILL)
            s = self.state
            moment = (
                "" if s is None else f"{s.paused_phase or s.phase}/{s.activity or '-'} move {s.move_number}"
            )
            self.kills.append(Kill(victim, pid, now, moment, "freeze" if freeze else "kill"))
            return True
        return False

    def _take(self, msg: Any, pid: int, now: float) -> None:
        if isinstance(msg, ButtonPress):
            if msg.press_id > 0:
                self.presses.add(msg.press_id)
        elif isinstance(msg, Heartbeat):
            self.pids[msg.process] = msg.pid
            for k in self.kills:
                if k.victim != msg.process or k.back_s is not None:
                    continue
                if (k.kind == "kill" and msg.pid != k.pid) or (
                    k.kind == "freeze" and k.resumed_at is not None
                ):
                    k.back_s = now - k.at
                    k._back_key = progress_key(self.state) if self.state is not None else None
        elif isinstance(msg, GameState):
            if self.state is None or pid != self._state_pid or msg.revision > self.state.revision:
                self.state, self._state_pid = msg, pid
            else:
                return
            key = progress_key(msg)
            for k in self.kills:
                if k.kind == "freeze" and k.back_s is None and k.victim in msg.peers_down:
                    k.paused = True
                if k.back_s is None or k.progress_s is not None or msg.peers_down or msg.phase == PAUSED:
                    continue
                if key != k._back_key:
                    k.progress_s = now - k.at


@dataclass
class ChaosFigures:
    """What a chaos run measured."""

    kills: list[Kill]

    def per_process(self, kind: str = "kill") -> dict[str, int]:
        counts = Counter(k.victim for k in self.kills if k.kind == kind)
        return {v: counts.get(v, 0) for v in VICTIMS}

    def freezes(self) -> list[Kill]:
        return [k for k in self.kills if k.kind == "freeze"]

    def recoveries(self) -> list[float]:
        """kill -> next progress, for the kills (not the freezes)."""
        return [k.progress_s for k in self.kills if k.progress_s is not None and k.kind == "kill"]

    def backs(self) -> list[float]:
        return [k.back_s for k in self.kills if k.back_s is not None and k.kind == "kill"]

    def unrecovered(self) -> list[Kill]:
        return [k for k in self.kills if k.progress_s is None]

    def lines(self) -> list[str]:
        rec, backs = self.recoveries(), self.backs()
        kills = [k for k in self.kills if k.kind == "kill"]
        out = [
            f"kills: {len(kills)} ("
            + ", ".join(f"{name} {n}" for name, n in self.per_process().items())
            + ")",
        ]
        freezes = self.freezes()
        if freezes:
            out.append(
                f"freezes (SIGSTOP, then SIGCONT): {len(freezes)} ("
                + ", ".join(f"{name} {n}" for name, n in self.per_process("freeze").items() if n)
                + f"); the referee showed the frozen process down in {sum(k.paused for k in freezes)}"
            )
        if backs:
            out.append(
                f"kill -> restarted process heard: median {statistics.median(backs):.2f} s, "
                f"worst {max(backs):.2f} s"
            )
        if rec:
            out.append(
                f"recovery (kill -> next progress): median {statistics.median(rec):.2f} s, "
                f"worst {max(rec):.2f} s over {len(rec)} kills"
            )
        if self.unrecovered():
            out.append(f"kills with no progress seen after them: {len(self.unrecovered())}")
        return out


def worst_placement_s(results: Sequence[Any]) -> float:
    """The longest placement (command -> vision's confirmation, wall seconds) of every game."""
    durations = [p.duration_s for r in results if r.seen.state for p in r.seen.state.placements]
    return max(durations, default=0.0)


def median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


async def play_under(
    monkey: Monkey, session: Any, plans: Sequence[Any], progress: Any, *, fail_fast: bool
) -> list[Any]:
    """Play ``plans`` in ``session`` (a :class:`launch.simrun.SimSession`) while ``monkey`` kills or
    freezes processes; the monkey is stopped when the plans are done, whatever happened."""
    from . import simrun  # simrun is the heavier module; the monkey alone does not need it

    killer = asyncio.create_task(monkey.run(), name="chaos")
    try:
        results = await simrun.run_plans(session, list(plans), progress, fail_fast=fail_fast)
        # A kill just before the last game ended: its victim is still restarting. No more kills; the
        # monkey listens until it is heard again (its run returns), within the deadline.
        monkey.stopping = True
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(killer), SETTLE_TIMEOUT_S)
        return results
    finally:
        killer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await killer
