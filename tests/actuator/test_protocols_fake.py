"""Protocol-layer edge cases against a scripted controller on a real pty (the emulated controller
covers the normal behaviour in test_sim_controller.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from services.actuator.controller import (
    ControllerAlarm,
    ControllerProtocolError,
    ControllerRejected,
    ControllerTimeout,
    Timing,
)
from services.actuator.framed import FrameController
from services.actuator.grbl import GrblController, clean_line, parse_line, parse_status
from services.common import frame as fp

from .fake import FakeFrame, FakeGrbl

TIMING = Timing(reply=0.1, motion=2.0, homing=2.0, poll=0.005, retries=2)


@pytest.fixture
async def grbl() -> AsyncIterator[FakeGrbl]:
    fake = FakeGrbl()
    fake.peer.start()
    yield fake
    fake.peer.close()


@pytest.fixture
async def framed() -> AsyncIterator[FakeFrame]:
    fake = FakeFrame()
    fake.peer.start()
    yield fake
    fake.peer.close()


# -- GRBL, pure parsing ----------------------------------------------------------------------------


def test_parse_lines() -> None:
    assert parse_line("ok").kind == "ok"
    assert parse_line("error:22").code == 22
    assert parse_line("ALARM:2").kind == "alarm"
    assert parse_line("Grbl 1.1h ['$' for help]").kind == "banner"
    assert parse_line("[MSG:'$H'|'$X' to unlock]").kind == "msg"
    assert parse_line("[VER:1.1h.20190825:]").kind == "info"
    assert parse_line("#%&*@ok").kind == "garbage"
    s = parse_status("<Hold:0|WPos:1.5,-2.000,3.25|Bf:15,128>")
    assert s is not None and s.state == "Hold" and (s.x_mm, s.y_mm, s.z_mm) == (1.5, -2.0, 3.25)
    assert parse_status("<Idle|MPos:1,2>") is None and parse_status("<Dance|MPos:1,2,3>") is None
    assert clean_line(b"\xff\x00ok\r") == "ok"


# -- GRBL over a pty --------------------------------------------------------------------------------


async def test_grbl_connect_checks_the_banner(grbl: FakeGrbl) -> None:
    ctl = GrblController(grbl.peer.port, timing=TIMING)
    firmware = await ctl.connect()
    assert firmware.startswith("Grbl 1.1h") and ctl.firmware == firmware
    assert grbl.peer.received.startswith(b"\r\n\r\n\x18")
    await ctl.close()


async def test_grbl_without_banner_is_a_protocol_error(grbl: FakeGrbl) -> None:
    grbl.banner = None
    with pytest.raises(ControllerProtocolError, match="no GRBL banner"):
        await GrblController(grbl.peer.port, timing=TIMING).connect()
    assert grbl.peer.received.count(b"\x18") == 1 + TIMING.retries


async def test_grbl_wrong_firmware(grbl: FakeGrbl) -> None:
    grbl.banner = "Grbl 0.9j ['$' for help]"
    with pytest.raises(ControllerProtocolError, match="unsupported firmware"):
        await GrblController(grbl.peer.port, timing=TIMING).connect()


async def test_grbl_error_is_reported_with_its_meaning(grbl: FakeGrbl) -> None:
    ctl = GrblController(grbl.peer.port, timing=TIMING)
    await ctl.connect()
    grbl.expect("G1 X1.000 Y2.000 Z3.000 F0", "error:22")
    with pytest.raises(ControllerRejected, match=r"error:22 \(feed rate not set\)") as info:
        await ctl.move_to(1, 2, 3, 0)
    assert info.value.code == 22
    await ctl.close()


async def test_grbl_lost_ok_is_resent_only_when_the_controller_is_alive(grbl: FakeGrbl) -> None:
    ctl = GrblController(grbl.peer.port, timing=TIMING)
    await ctl.connect()
    await ctl.move_to(0, 0, 20)  # modal setup lines out of the way
    grbl.expect("M8")  # first M8: no answer (lost)
    await ctl.magnet(True)
    assert grbl.lines.count("M8") == 2 and ctl.retries_used == 1
    # Stalled: neither the line nor '?' answered -> nothing re-sent, a timeout with a reason.
    grbl.answer_status = False
    grbl.expect("M9")
    with pytest.raises(ControllerTimeout, match="no reply from controller to 'M9'"):
        await ctl.magnet(False)
    assert grbl.lines.count("M9") == 1
    await ctl.close()


async def test_grbl_held_answer_while_moving_is_not_resent(grbl: FakeGrbl) -> None:
    """GRBL holds the ok of an M-code until the planner is empty: busy is not lost."""
    import asyncio

    ctl = GrblController(grbl.peer.port, timing=TIMING)
    await ctl.connect()
    grbl.status = "<Run|MPos:1.000,2.000,3.000|FS:600,0>"
    grbl.expect("M8")
    probes_before = grbl.peer.received.count(b"?")

    async def finish() -> None:
        while grbl.peer.received.count(b"?") < probes_before + 3:
            await asyncio.sleep(0.005)
        grbl.status = "<Idle|MPos:1.000,2.000,3.000|FS:0,0>"
        grbl.peer.send(b"ok\r\n")

    finisher = asyncio.create_task(finish())
    await ctl.magnet(True)
    await finisher
    assert grbl.lines.count("M8") == 1 and ctl.retries_used == 0
    await ctl.close()


async def test_grbl_garbage_and_binary_noise_are_skipped(grbl: FakeGrbl) -> None:
    ctl = GrblController(grbl.peer.port, timing=TIMING)
    await ctl.connect()
    grbl.expect("G4 P0.500", b"\x00\xff#junk&*\r\n", b"\xfe\xfdok\r\n")
    await ctl.dwell(0.5)
    assert ctl.garbage_lines == 1
    await ctl.close()


async def test_grbl_alarm_during_motion_is_reported(grbl: FakeGrbl) -> None:
    ctl = GrblController(grbl.peer.port, timing=TIMING)
    await ctl.connect()
    grbl.expect("G4 P0", "ALARM:1")
    grbl.status = "<Alarm|MPos:5.000,5.000,20.000|FS:0,0>"
    with pytest.raises(ControllerAlarm, match=r"alarm 1 \(hard limit"):
        await ctl.wait_idle()
    assert ctl.alarm == 1 and ctl.position_lost
    # the locked controller answers error:9 from now on: a clear alarm, not a generic rejection
    grbl.expect("G0 X1.000 Y1.000 Z20.000", "error:9")
    with pytest.raises(ControllerAlarm, match="locked"):
        await ctl.move_to(1, 1, 20)
    await ctl.close()


async def test_grbl_wait_idle_waits_for_the_barrier_and_idle(grbl: FakeGrbl) -> None:
    ctl = GrblController(grbl.peer.port, timing=TIMING)
    await ctl.connect()
    grbl.status = "<Run|MPos:1.000,2.000,3.000|FS:600,0>"
    grbl.expect("G4 P0")  # the barrier's ok comes later
    seen: list[str] = []
    ctl.on_status = lambda s: seen.append(s.state)
    import asyncio

    async def finish() -> None:
        while len(seen) < 3:
            await asyncio.sleep(0.005)
        grbl.status = "<Idle|MPos:1.000,2.000,3.000|FS:0,0>"
        grbl.peer.send(b"ok\r\n")

    finisher = asyncio.create_task(finish())
    status = await ctl.wait_idle()
    await finisher
    assert status.state == "Idle" and "Run" in seen
    await ctl.close()


# -- frame protocol over a pty ----------------------------------------------------------------------


async def test_frame_retry_uses_the_same_bytes(framed: FakeFrame) -> None:
    ctl = FrameController(framed.peer.port, timing=TIMING)
    await ctl.connect()
    framed.replies[fp.Command.MAGNET].append(None)  # the first reply is lost
    await ctl.magnet(True)
    magnets = [
        raw for raw, f in zip(framed.raw, framed.frames, strict=True) if f.command == fp.Command.MAGNET
    ]
    assert len(magnets) == 2 and magnets[0] == magnets[1]
    await ctl.close()


async def test_frame_gives_up_after_the_retries(framed: FakeFrame) -> None:
    ctl = FrameController(framed.peer.port, timing=TIMING)
    await ctl.connect()
    framed.peer.silent = True
    with pytest.raises(ControllerTimeout, match=r"no reply from controller to DWELL after 3 attempt"):
        await ctl.dwell(1.0)
    await ctl.close()


async def test_frame_stale_reply_is_ignored(framed: FakeFrame) -> None:
    ctl = FrameController(framed.peer.port, timing=TIMING)
    await ctl.connect()
    framed.stale_first = True
    await ctl.move_to(1, 2, 3, 1000)
    assert ctl.stale_replies == 1
    await ctl.close()


async def test_frame_queue_full_is_sent_again_as_a_new_command(framed: FakeFrame) -> None:
    ctl = FrameController(framed.peer.port, timing=TIMING)
    await ctl.connect()
    framed.replies[fp.Command.MOVE].append((fp.ReplyStatus.QUEUE_FULL, b""))
    await ctl.move_to(1, 2, 3, 1000)
    moves = [f for f in framed.frames if f.command == fp.Command.MOVE]
    assert len(moves) == 2 and moves[0].sequence != moves[1].sequence and moves[0].payload == moves[1].payload
    await ctl.close()


async def test_frame_alarm_names_its_code(framed: FakeFrame) -> None:
    ctl = FrameController(framed.peer.port, timing=TIMING)
    await ctl.connect()
    framed.replies[fp.Command.MOVE].append((fp.ReplyStatus.ALARM, b""))
    framed.report = fp.StatusReport(state=3, x_mm=0, y_mm=0, z_mm=0, magnet=False, alarm=3, queued=0)
    with pytest.raises(ControllerAlarm, match=r"alarm 3 \(stall detected\)"):
        await ctl.move_to(1, 2, 3, 1000)
    framed.replies[fp.Command.DWELL].append((fp.ReplyStatus.BAD_PAYLOAD, b""))
    with pytest.raises(ControllerRejected, match="bad payload"):
        await ctl.dwell(0.1)
    with pytest.raises(ControllerRejected, match="out of range"):
        await ctl.dwell(100.0)
    await ctl.close()
