"""The led service on a real bus (in-process forwarder), and the console and serial drivers (a real pty)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import time
import tty
from pathlib import Path
from typing import Any

import pytest

from messages import ButtonLevel, ButtonPress, GameState, PanelState
from services.common.config import load
from services.common.log import get as get_log
from services.led.drivers import ConsolePanel, PanelError, SerialPanel, make_panel
from services.led.service import LedService
from tests.inprocess import bus_sockets, in_process_bus, running

DEADLINE_S = 10.0


@pytest.fixture
def bus(tmp_path: Path) -> Any:
    config = load(
        None, overrides={"runtime": {"dir": str(tmp_path)}, "led": {"driver": "sim", "debounce_ms": 30.0}}
    )
    with in_process_bus(config.bus):
        yield config


async def until(predicate: Any, what: str, action: Any = None) -> None:
    """Poll ``predicate`` (doing ``action`` each round, e.g. re-publishing) until true or the deadline."""
    deadline = time.monotonic() + DEADLINE_S
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        if action is not None:
            await action()
        await asyncio.sleep(0.02)


async def test_panel_follows_the_referee_and_the_button_is_debounced(bus: Any) -> None:
    service = LedService(bus, get_log(test="led"))
    async with running(service, shutdown=True) as (runner,), bus_sockets(bus.bus) as sockets:
        pub = sockets.publisher()
        sub = sockets.subscriber(["panel."])
        panels: list[PanelState] = []
        presses: list[ButtonPress] = []

        async def drain() -> None:
            while (env := await sub.recv(timeout=0.005)) is not None:
                (panels if isinstance(env.message, PanelState) else presses).append(env.message)  # type: ignore[arg-type]

        revision = 0

        async def send(**fields: Any) -> None:
            await pub.publish("referee.state", GameState(revision=revision, **fields))
            await drain()

        revision = 1
        await until(
            lambda: any(p.pattern == "thinking" for p in panels),
            "thinking",
            lambda: send(phase="device-to-move"),
        )
        revision = 2
        await until(lambda: panels[-1].lamp, "the lamp", lambda: send(phase="waiting-for-person"))
        assert panels[-1].pattern == "your-turn"
        # an old revision is ignored (the latched state keeps the newest)
        await pub.publish("referee.state", GameState(revision=1, phase="device-to-move"))
        # a press with contact bounce: one panel.button
        for level in (True, False, True, False, True):
            await pub.publish("sim.button", ButtonLevel(pressed=level))
        await asyncio.sleep(0.08)  # held down longer than the debounce time (the hold, not a sync)
        for level in (False, True, False):
            await pub.publish("sim.button", ButtonLevel(pressed=level))
        await until(lambda: len(presses) >= 1, "a press", drain)
        # a glitch shorter than the debounce time: no press
        await pub.publish("sim.button", ButtonLevel(pressed=True))
        await pub.publish("sim.button", ButtonLevel(pressed=False))
        revision = 3
        await until(lambda: not panels[-1].lamp, "the lamp off", lambda: send(phase="button-pressed"))
        await asyncio.sleep(0.1)
        await drain()
        # one press (announced again with the same id until the referee acknowledges it)
        assert len({p.press_id for p in presses}) == 1
        assert presses[0].source == "sim" and presses[0].press_ns > 0
        assert all(p.lamp == (p.pattern == "your-turn") for p in panels)
        # the referee falls silent: after bus.peer_timeout_s the panel says so
        assert not runner.done()


def test_debounce_time_per_driver() -> None:
    from services.led.debounce import debounce_s

    def cfg(**sections: Any) -> Any:
        return load(None, overrides=sections)

    assert debounce_s(cfg(led={"driver": "gpio", "debounce_ms": 30.0}).led) == 0.030
    # the simulated button gets the real debounce at any speed: the simulated finger is not sped up
    assert debounce_s(cfg(led={"driver": "sim"}, simworld={"speed": 1000.0}).led) == 0.030
    assert debounce_s(cfg(led={"driver": "sim", "sim_debounce_ms": 12.0}).led) == 0.012


async def test_referee_silence_shows_process_down(tmp_path: Path) -> None:
    config = load(None, overrides={"runtime": {"dir": str(tmp_path)}, "bus": {"peer_timeout_s": 0.2}})
    service = LedService(config, get_log(test="led"))
    try:
        service._take_state(GameState(revision=4, phase="device-to-move"))
        service._take_state(GameState(revision=5, phase="waiting-for-person"))
        assert service.current_panel(time.monotonic()).pattern == "your-turn"
        later = service.current_panel(time.monotonic() + 1.0)
        assert later.pattern == "process-down" and "referee" in later.text and later.lamp
    finally:
        service.close()


async def test_a_panel_started_during_the_persons_turn_asks_for_the_press_again(tmp_path: Path) -> None:
    config = load(None, overrides={"runtime": {"dir": str(tmp_path)}})
    service = LedService(config, get_log(test="led"))
    turn = {"game_id": "g1", "phase": "waiting-for-person", "move_number": 2}
    try:
        service._take_state(GameState(revision=7, **turn))  # the first state this process sees
        panel = service.current_panel(time.monotonic())
        assert panel.pattern == "press-again" and panel.lamp and "press it again" in panel.text
        service._take_state(GameState(revision=8, message="your move", **turn))  # the same turn
        assert service.current_panel(time.monotonic()).pattern == "press-again"
        service._take_state(GameState(revision=9, game_id="g1", phase="waiting-for-stable", move_number=2))
        assert service.current_panel(time.monotonic()).pattern == "checking"
        service._take_state(GameState(revision=10, game_id="g1", phase="waiting-for-person", move_number=4))
        assert service.current_panel(time.monotonic()).pattern == "your-turn"  # the next turn: as usual
    finally:
        service.close()


async def test_a_press_is_announced_again_until_the_referee_acknowledges_it(bus: Any) -> None:
    service = LedService(bus, get_log(test="led"))
    async with running(service, shutdown=True) as (runner,), bus_sockets(bus.bus) as sockets:
        pub = sockets.publisher()
        sub = sockets.subscriber(["panel.button"])
        presses: list[ButtonPress] = []

        async def drain() -> None:
            while (env := await sub.recv(timeout=0.005)) is not None:
                presses.append(env.message)  # type: ignore[arg-type]

        async def press() -> None:
            await pub.publish("sim.button", ButtonLevel(pressed=True))
            await asyncio.sleep(0.05)  # held longer than the debounce time (the hold, not a sync)
            await pub.publish("sim.button", ButtonLevel(pressed=False))
            await asyncio.sleep(0.05)
            await drain()

        await until(lambda: len(presses) >= 1, "a press", press)
        first = presses[0].press_id
        await until(
            lambda: sum(p.press_id == first for p in presses) >= 3, "the press announced again", drain
        )
        assert set(service.unacked) >= {first}
        acked = max(service.unacked)
        await until(
            lambda: not service.unacked,
            "the acknowledged presses forgotten",
            lambda: pub.publish("referee.state", GameState(revision=1, press_ack=acked)),
        )
        assert not runner.done()


async def test_console_panel_redraws_one_line() -> None:
    out = io.StringIO()
    config = load(None, overrides={"led": {"driver": "console"}}).led
    panel = make_panel(config, lambda *_: None, lambda *_: None, stream=out, stdin=io.StringIO())
    assert isinstance(panel, ConsolePanel)
    await panel.start()
    panel.show(
        PanelState(lamp=True, pattern="your-turn", leds={"status": "on", "error": "off"}, text="your turn")
    )
    panel.show(
        PanelState(lamp=False, pattern="idle", leds={"status": "heartbeat", "error": "off"}, text="idle")
    )
    await panel.close()
    text = out.getvalue()
    assert text.count("\r") == 2 and text[-1] == "\n" and text.count("\n") == 1
    first, second = text.strip("\n").split("\r")[1:]
    assert first.startswith("[LAMP] your-turn") and second.startswith("[----] idle")
    assert len(second) == len(first)  # padded to erase the longer line


async def test_serial_panel_protocol_on_a_pty(tmp_path: Path) -> None:
    master, slave = os.openpty()
    tty.setraw(slave)
    os.set_blocking(master, False)
    levels: list[bool] = []
    config = load(None, overrides={"led": {"driver": "serial", "serial_port": os.ttyname(slave)}}).led
    panel = make_panel(config, lambda pressed, t: levels.append(pressed), lambda t: None)
    assert isinstance(panel, SerialPanel)
    try:
        await panel.start()
        panel.show(PanelState(lamp=True, pattern="your-turn", leds={"status": "on", "error": "off"}))
        received = bytearray()

        def got_line() -> bool:
            with contextlib.suppress(BlockingIOError):
                received.extend(os.read(master, 1024))
            return b"\n" in received

        await until(got_line, "the panel line")
        assert bytes(received).split(b"\n")[0] == b"L 1 on off"
        os.write(master, b"# panel v1\nB1\nB0\nXYZ\n")
        await until(lambda: len(levels) == 2, "two levels")
        assert levels == [True, False] and panel.bad_lines == 1
    finally:
        await panel.close()
        os.close(master)
        os.close(slave)


async def test_bad_drivers_are_clear_errors() -> None:
    base = load(None).led
    import msgspec

    with pytest.raises(PanelError, match=r"unknown led\.driver"):
        make_panel(msgspec.structs.replace(base, driver="blinkenlights"), lambda *_: None, lambda *_: None)
    panel = make_panel(msgspec.structs.replace(base, driver="serial"), lambda *_: None, lambda *_: None)
    with pytest.raises(PanelError, match="serial_port is empty"):
        await panel.start()
    gpio = make_panel(
        msgspec.structs.replace(base, driver="gpio", gpio_chip="/nonexistent"),
        lambda *_: None,
        lambda *_: None,
    )
    with pytest.raises(PanelError, match=r"gpiod|GPIO"):
        await gpio.start()


async def test_console_enter_is_a_press_when_stdin_is_a_terminal() -> None:
    master, slave = os.openpty()
    stdin = os.fdopen(slave, "r", buffering=1)
    presses: list[float] = []
    config = load(None, overrides={"led": {"driver": "console"}}).led
    panel = make_panel(config, lambda *_: None, presses.append, stream=io.StringIO(), stdin=stdin)
    try:
        await panel.start()
        os.write(master, b"\n")
        await until(lambda: len(presses) == 1, "a press from Enter")
        os.write(master, b"x\n")
        await until(lambda: len(presses) == 2, "a second press")
    finally:
        await panel.close()
        stdin.close()
        os.close(master)


async def test_a_serial_panel_that_cannot_be_read_is_logged_and_in_the_heartbeat(tmp_path: Path) -> None:
    master, slave = os.openpty()
    tty.setraw(slave)
    led = {"driver": "serial", "serial_port": os.ttyname(slave)}
    config = load(None, overrides={"runtime": {"dir": str(tmp_path)}, "led": led})
    service = LedService(config, get_log(test="led"))
    try:
        await service.panel.start()
        assert service.heartbeat().state == "ok" and service.panel.fault == ""
        os.close(master)  # the adapter is unplugged: reading the port fails
        master = -1
        await until(lambda: service.panel.fault != "", "the driver's fault")
        beat = service.heartbeat()
        assert beat.state == "fault" and beat.detail == "the button is not read"
        assert "serial port" in beat.last_error
    finally:
        await service.panel.close()
        service.close()
        if master >= 0:
            os.close(master)
        os.close(slave)


class _GoneLines:
    """What libgpiod's line request does once its chip is gone: the fd wakes, reading it fails."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def read_edge_events(self) -> list[Any]:
        raise OSError(19, "No such device")

    def release(self) -> None:
        return None


async def test_a_gpio_button_that_cannot_be_read_is_logged_and_in_the_heartbeat(tmp_path: Path) -> None:
    """No GPIO chip here: the driver's line request is replaced by one that fails like a removed chip
    (a real pipe wakes the loop's reader, as the request's fd would)."""
    led = {"driver": "gpio", "gpio_chip": "/dev/gpiochip9"}
    config = load(None, overrides={"runtime": {"dir": str(tmp_path)}, "led": led})
    service = LedService(config, get_log(test="led"))
    read_end, write_end = os.pipe()
    panel = service.panel
    try:
        panel._request, panel._gpiod = _GoneLines(read_end), object()  # what start() sets on a device
        asyncio.get_running_loop().add_reader(read_end, panel._edges)
        assert service.heartbeat().state == "ok"
        os.write(write_end, b"x")
        await until(lambda: panel.fault != "", "the driver's fault")
        beat = service.heartbeat()
        assert beat.state == "fault" and beat.detail == "the button is not read"
        assert "/dev/gpiochip9" in beat.last_error and "No such device" in beat.last_error
    finally:
        await panel.close()
        service.close()
        os.close(read_end)
        os.close(write_end)
