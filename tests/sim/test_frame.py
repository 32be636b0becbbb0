"""The binary frame protocol: codec, and the emulated controller over a real pty through pyserial."""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from services.common import frame as codec
from services.simworld import frame as F
from services.simworld.controller import EmulatedController

from .helpers import FrameClient

Factory = Callable[..., tuple[EmulatedController, FrameClient]]


def test_crc_check_value() -> None:
    assert codec.crc16_ccitt_false(b"123456789") == 0x29B1


def test_reader_resynchronises_after_garbage_and_broken_frames() -> None:
    good = codec.encode_frame(7, F.PING)
    broken = bytearray(codec.encode_frame(8, F.STATUS))
    broken[-1] ^= 0xFF  # bad CRC
    noise = b"\x00\xa5\xa5\x5a\xff\x13" + bytes(broken) + b"\xa5"
    reader = codec.FrameParser()
    frames = reader.feed(noise + good[:4])
    assert frames == []
    frames = reader.feed(good[4:])
    assert [(f.seq, f.command) for f in frames] == [(7, F.PING)]
    assert reader.bad_crc == 1 and reader.discarded > 0


def test_encode_refuses_oversized_payloads() -> None:
    with pytest.raises(ValueError, match="at most 64"):
        codec.encode_frame(1, F.PING, bytes(65))


@pytest.fixture
def framed(config: Any, runtime_dir: Path) -> Iterator[Factory]:
    made: list[tuple[EmulatedController, FrameClient]] = []

    def make(
        speed: float = 40.0, faults: list[str] | None = None, **sim: Any
    ) -> tuple[EmulatedController, FrameClient]:
        cfg = msgspec.structs.replace(config, simworld=msgspec.structs.replace(config.simworld, **sim))
        ctl = EmulatedController(config=cfg, protocol="frame", speed=speed, faults=faults)
        client = FrameClient(ctl.start_pty(runtime_dir / "sim-serial"))
        made.append((ctl, client))
        return ctl, client

    yield make
    for ctl, client in made:
        client.close()
        ctl.close()


def test_ping_is_acknowledged(framed: Factory) -> None:
    _, c = framed()
    _, reply = c.request(F.PING)
    assert reply.payload[0] == F.ST_OK and reply.payload[1:] == F.FIRMWARE


def test_unknown_command_and_bad_payload(framed: Factory) -> None:
    _, c = framed()
    assert c.request(0x42)[1].payload == bytes([F.ST_UNKNOWN])
    assert c.request(F.MOVE, b"\x01\x02")[1].payload == bytes([F.ST_BAD_PAYLOAD])
    assert c.request(F.MAGNET, b"\x02")[1].payload == bytes([F.ST_BAD_PAYLOAD])


def test_move_status_polling_and_position(framed: Factory) -> None:
    _ctl, c = framed(speed=4.0)
    assert c.move(300.0, 100.0, 40.0, feed=6000).payload == bytes([F.ST_OK])
    states = []
    while True:
        st = c.status()
        states.append(st)
        if st["state"] == F.STATE_IDLE and st["queued"] == 0:
            break
    moving = [s for s in states if s["state"] == F.STATE_RUN]
    assert moving and any(0 < s["x"] < 300 for s in moving)
    assert (states[-1]["x"], states[-1]["y"], states[-1]["z"]) == (300.0, 100.0, 40.0)


def test_retry_with_the_same_sequence_is_not_executed_twice(framed: Factory) -> None:
    ctl, c = framed(speed=1.0)
    payload = struct.pack(codec.MOVE_FORMAT, 10_000, 0, 40_000, 0)
    data, first = c.request(F.MOVE, payload, seq=42)
    executed = ctl.engine.executed
    c.ser.write(data)  # the host thinks the reply was lost and sends the same bytes again
    again = c.expect(42, F.MOVE)
    assert again.raw == first.raw
    assert ctl.engine.executed == executed
    assert ctl.engine.retries_answered == 1
    assert len(ctl.planner.blocks) <= 1  # one move queued, not two
    # a new command with the same payload but the next sequence IS executed
    c.request(F.MOVE, payload, seq=43)
    assert ctl.engine.executed == executed + 1


def test_lost_reply_then_retry_gets_the_stored_reply(framed: Factory) -> None:
    ctl, c = framed(faults=["lose-reply:1"])
    data = codec.encode_frame(5, F.MAGNET, b"\x01")
    c.ser.write(data)
    assert c.read_frame(deadline_s=0.2) is None  # lost
    c.ser.write(data)  # retry after the host's timeout
    reply = c.expect(5, F.MAGNET)
    assert reply.payload == bytes([F.ST_OK])
    assert ctl.engine.executed == 1 and ctl.engine.retries_answered == 1


def test_resync_after_garbage_on_the_wire(framed: Factory) -> None:
    _, c = framed()
    c.ser.write(b"\x00\xff\xa5\x5a\xff\xa5junk\xa5")
    _, reply = c.request(F.PING)
    assert reply.payload[0] == F.ST_OK


def test_garbage_before_a_reply_is_skipped_by_the_reader(framed: Factory) -> None:
    _ctl, c = framed(faults=["garbage:2"])
    for _ in range(3):
        assert c.request(F.PING)[1].payload[0] == F.ST_OK
    assert c.reader.discarded > 0


def test_bad_crc_gets_no_reply(framed: Factory) -> None:
    _, c = framed()
    broken = bytearray(codec.encode_frame(9, F.PING))
    broken[5] ^= 0x01
    c.ser.write(bytes(broken))
    assert c.read_frame(deadline_s=0.2) is None


def test_home_replies_when_done_and_alarm_refuses_moves(framed: Factory) -> None:
    ctl, c = framed(speed=20.0)
    c.move(100.0, 100.0, 40.0)
    c.wait_idle()
    data = codec.encode_frame(c.next_seq(), F.HOME)
    c.ser.write(data)
    c.ser.write(data)  # a retry while homing: still only one reply
    seq = data[3]
    assert c.status()["state"] == F.STATE_HOMING
    reply = c.expect(seq, F.HOME)
    assert reply.payload == bytes([F.ST_OK])
    assert c.read_frame(deadline_s=0.1) is None
    st = c.status()
    assert (st["x"], st["y"], st["z"]) == (0.0, 0.0, 40.0)
    # an injected hard-limit alarm during a move
    ctl.inject("alarm")
    c.move(200.0, 200.0, 40.0)
    deadline = 200
    while c.status()["state"] != F.STATE_ALARM and deadline:
        deadline -= 1
    st = c.status()
    assert st["state"] == F.STATE_ALARM and st["alarm"] == F.ALARM_HARD_LIMIT
    assert c.move(10.0, 10.0, 40.0).payload == bytes([F.ST_ALARM])
    assert c.request(F.UNLOCK)[1].payload == bytes([F.ST_OK])
    assert c.move(10.0, 10.0, 40.0).payload == bytes([F.ST_OK])


def test_out_of_range_and_reset_in_motion(framed: Factory) -> None:
    _ctl, c = framed(speed=1.0)
    assert c.move(1000.0, 0.0, 0.0).payload == bytes([F.ST_RANGE])
    c.move(300.0, 0.0, 40.0, feed=600)
    assert c.request(F.RESET)[1].payload == bytes([F.ST_OK])
    st = c.status()
    assert st["state"] == F.STATE_ALARM and st["alarm"] == F.ALARM_RESET_IN_MOTION and st["queued"] == 0


def test_pick_and_place_over_frames(framed: Factory) -> None:
    ctl, c = framed(speed=50.0)
    x, y = ctl.world.square_center(7)
    for step in (
        lambda: c.move(360.0, 80.0, 20.0),
        lambda: c.move(360.0, 80.0, 0.0, feed=1500),
        lambda: c.request(F.MAGNET, b"\x01")[1],
        lambda: c.request(F.DWELL, struct.pack("<H", 100))[1],
        lambda: c.move(360.0, 80.0, 20.0, feed=1500),
        lambda: c.move(x, y, 20.0),
        lambda: c.move(x, y, 0.0, feed=1500),
        lambda: c.request(F.MAGNET, b"\x00")[1],
        lambda: c.move(x, y, 20.0),
    ):
        assert step().payload[0] == F.ST_OK
    c.wait_idle()
    snap = ctl.snapshot()
    assert snap.board == "......O.."
    assert snap.pieces[5].square == 7
    assert sum(p.where == "supply" for p in snap.pieces) == 9
    ctl.world.check()


def test_stall_then_late_replies(framed: Factory) -> None:
    ctl, c = framed(stall_s=0.3, faults=["stall:1"])
    data = codec.encode_frame(1, F.PING)
    c.ser.write(data)
    assert c.read_frame(deadline_s=0.1) is None
    c.ser.write(data)  # the host retries during the stall
    reply = c.expect(1, F.PING)
    assert reply.payload[0] == F.ST_OK
    assert ctl.engine.executed == 1
