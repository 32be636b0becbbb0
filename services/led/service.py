"""The led process: the referee's game state in, the panel's state and the button's presses out.

It keeps no game logic: :func:`services.led.patterns.panel_for` derives the panel from the newest
``referee.state`` (latched by revision, with a snapshot request at start), and adds "referee" to the
processes down when no state has come for ``bus.peer_timeout_s``. ``panel.state`` is published on every
change (and every ``led.republish_s``); the driver shows it. Raw button levels (the driver's, or
``sim.button`` with driver "sim") go through :class:`services.led.debounce.Debouncer`; each press is one
``panel.button``. Press ids start from the wall-clock milliseconds at start, so they keep growing across
restarts of this process.

A press is latched: announced again (same id) every ``led.press_resend_s`` until the referee's state
acknowledges it (``press_ack``), so that a press survives a restart of the bus or of the referee. A
press made while this process itself was down is lost with it: when it starts during the person's turn
the lamp asks with its own pattern ("press-again") until the turn ends.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from messages import ButtonLevel, ButtonPress, GameState, PanelState
from services.bus.client import Latched, request_snapshot
from services.common.config import Config
from services.common.shell import Service

from .debounce import Debouncer, debounce_s
from .drivers import Panel, make_panel
from .patterns import LAMP_PHASE, no_referee_panel, panel_for

#: how long the snapshot request at start may take.
SNAPSHOT_TIMEOUT_S = 0.5
#: the main loop wakes at least this often (to notice the referee's silence).
TICK_S = 0.1


class LedService(Service):
    """The panel."""

    name = "led"

    def __init__(self, config: Config, log: Any | None = None, **driver_kwargs: Any) -> None:
        super().__init__(config, log)
        self.led = config.led
        self.debouncer = Debouncer(debounce_s(config.led))
        self.state: Latched[GameState] = Latched(lambda s: s.revision)
        self.panel: Panel = make_panel(self.led, self._level, self._press, **driver_kwargs)
        self.panel.on_fault = self._panel_failed
        self.shown: PanelState | None = None
        self.presses: asyncio.Queue[float] = asyncio.Queue()
        self._press_base = int(time.time() * 1000)
        self._press_count = 0
        self._poll_handle: asyncio.TimerHandle | None = None
        self._last_state_at: float | None = None
        #: presses published and not yet acknowledged by the referee, by id (oldest first)
        self.unacked: dict[int, ButtonPress] = {}
        self._unacked_at: dict[int, float] = {}
        #: the turn (game, move, illegal moves, cheats) this process started in with the lamp on, if any
        self.ask_again: tuple[str, int, int, int] | None = None
        self._first_state = True

    # -- the button ----------------------------------------------------------------------------------

    def _level(self, pressed: bool, t: float) -> None:
        """A raw level from the driver or the simulated button, at monotonic time ``t``."""
        if self.debouncer.update(pressed, t):
            self._press(self.debouncer.last_press_at or t)
        self._schedule_poll()

    def _schedule_poll(self) -> None:
        deadline = self.debouncer.deadline()
        if self._poll_handle is not None:
            self._poll_handle.cancel()
            self._poll_handle = None
        if deadline is not None:
            loop = asyncio.get_running_loop()
            delay = max(0.0, deadline - time.monotonic())
            self._poll_handle = loop.call_later(delay, self._poll)

    def _poll(self) -> None:
        self._poll_handle = None
        if self.debouncer.poll(time.monotonic()):
            self._press(self.debouncer.last_press_at or time.monotonic())
        self._schedule_poll()

    def _press(self, t: float) -> None:
        self.presses.put_nowait(t)

    async def _publish_presses(self) -> None:
        while True:
            t = await self.presses.get()
            self._press_count += 1
            press = ButtonPress(
                press_id=self._press_base + self._press_count, source=self.panel.name, press_ns=int(t * 1e9)
            )
            self.log.info("button pressed", press_id=press.press_id)
            self.unacked[press.press_id] = press
            self._unacked_at[press.press_id] = time.monotonic()
            await self.pub.publish("panel.button", press)

    async def resend_unacked(self, now: float) -> None:
        """Announce again every press the referee has not acknowledged; forget acknowledged ones and
        those older than ``led.press_latch_s``."""
        ack = self.state.value.press_ack if self.state.value is not None else 0
        for press_id in list(self.unacked):
            if press_id <= ack or now - self._unacked_at[press_id] > self.led.press_latch_s:
                if press_id > ack:
                    self.log.warning("button press never acknowledged: given up", press_id=press_id)
                del self.unacked[press_id], self._unacked_at[press_id]
        for press in list(self.unacked.values()):
            await self.pub.publish("panel.button", press)

    def _panel_failed(self, reason: str) -> None:
        """The driver stopped reading the button: say so in the log and in every heartbeat from now on
        (the panel state is still published and shown as far as the driver can)."""
        self.log.error("the panel driver stopped reading the button", driver=self.panel.name, error=reason)
        self.health = "fault"
        self.detail = "the button is not read"
        self.last_error = reason

    # -- the panel -----------------------------------------------------------------------------------

    def current_panel(self, now: float) -> PanelState:
        state = self.state.value
        if state is None:
            return no_referee_panel(now - self.started - self.config.bus.peer_timeout_s)
        silent = (
            self._last_state_at is not None and now - self._last_state_at > self.config.bus.peer_timeout_s
        )
        ask_again = self.ask_again is not None and self.ask_again == _turn(state)
        return panel_for(state, ["referee"] if silent else [], ask_again=ask_again)

    async def run(self) -> None:
        topics = ["referee.state"] + (["sim.button"] if self.led.driver == "sim" else [])
        sub = self.subscribe(topics)
        await self.panel.start()
        presser = asyncio.create_task(self._publish_presses(), name="led.presses")
        self.log.info(
            "panel driver", driver=self.panel.name, debounce_ms=round(self.debouncer.hold_s * 1000, 2)
        )
        try:
            snapshot = await request_snapshot(
                self.ctx,
                self.config.bus.snapshot,
                "referee.state",
                timeout=SNAPSHOT_TIMEOUT_S,
                attempts=1,
                bus=self.config.bus,
            )
            if snapshot is not None and isinstance(snapshot.message, GameState):
                self._take_state(snapshot.message)
            last_sent = 0.0
            last_resend = 0.0
            while True:
                env = await sub.recv(timeout=TICK_S)
                if env is not None:
                    match env.message:
                        case GameState() as state:
                            self._take_state(state)
                        case ButtonLevel(pressed=pressed):
                            self._level(pressed, env.header.mono_ns / 1e9)
                now = time.monotonic()
                if self.unacked and now - last_resend >= self.led.press_resend_s:
                    last_resend = now
                    await self.resend_unacked(now)
                panel = self.current_panel(now)
                if panel != self.shown or now - last_sent >= self.led.republish_s:
                    if panel != self.shown:
                        self.log.info("panel", pattern=panel.pattern, lamp=panel.lamp, text=panel.text)
                        self.panel.show(panel)
                    self.shown = panel
                    last_sent = now
                    await self.pub.publish("panel.state", panel)
                if presser.done():
                    presser.result()
        finally:
            presser.cancel()
            await asyncio.gather(presser, return_exceptions=True)

    def _take_state(self, state: GameState) -> None:
        self._last_state_at = time.monotonic()  # any state, even an old revision, shows the referee lives
        if self.state.offer(state) and self._first_state:
            self._first_state = False
            if state.phase == LAMP_PHASE:
                # Started during the person's turn: a press made while the panel was down is lost.
                self.ask_again = _turn(state)
                self.log.info("started during the person's turn: asking for the button again")

    async def shutdown(self) -> None:
        if self._poll_handle is not None:
            self._poll_handle.cancel()
        await self.panel.close()


def _turn(state: GameState) -> tuple[str, int, int, int]:
    """What identifies one turn of the person's (the referee changes it when it hands the turn back)."""
    return (state.game_id, state.move_number, state.illegal_moves, state.cheats_restored)
