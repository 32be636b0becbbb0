"""The frame protocol's codec: CRC, frames, resynchronisation after garbage (pure)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.common import frame as fp


def test_crc_check_value() -> None:
    assert fp.crc16_ccitt_false(b"123456789") == 0x29B1
    assert fp.crc16_ccitt_false(b"") == 0xFFFF


def test_frame_layout() -> None:
    data = fp.encode_frame(7, fp.Command.MOVE, b"\x01\x02")
    assert data[:2] == b"\xa5\x5a" and data[2] == 2 and data[3] == 7 and data[4] == 0x03
    assert data[5:7] == b"\x01\x02"
    assert int.from_bytes(data[7:], "big") == fp.crc16_ccitt_false(data[2:7])


def test_encode_refuses_bad_frames() -> None:
    with pytest.raises(fp.FrameError, match="exceeds"):
        fp.encode_frame(0, 1, bytes(65))
    with pytest.raises(fp.FrameError):
        fp.encode_frame(256, 1)


@given(
    frames=st.lists(
        st.tuples(st.integers(0, 255), st.integers(0, 255), st.binary(max_size=64)), min_size=1, max_size=8
    ),
    garbage=st.lists(st.binary(max_size=20), min_size=9, max_size=9),
    chunk=st.integers(1, 17),
)
@settings(max_examples=200, deadline=None)
def test_parser_finds_every_frame_between_garbage_in_any_chunking(
    frames: list[tuple[int, int, bytes]], garbage: list[bytes], chunk: int
) -> None:
    # Garbage must not itself contain a valid frame: strip header bytes out of it.
    noise = [g.replace(b"\xa5", b"\x00") for g in garbage]
    stream = noise[0] + b"".join(fp.encode_frame(*f) + n for f, n in zip(frames, noise[1:], strict=False))
    parser = fp.FrameParser()
    got: list[fp.Frame] = []
    for i in range(0, len(stream), chunk):
        got += parser.feed(stream[i : i + chunk])
    assert [(f.sequence, f.command, f.payload) for f in got] == frames


def test_resync_on_a_header_hidden_in_a_broken_frame() -> None:
    good = fp.encode_frame(9, fp.Command.PING | fp.REPLY_BIT, b"\x00sim")
    broken = bytearray(fp.encode_frame(8, fp.Command.STATUS, b"abc"))
    broken[-1] ^= 0xFF  # bad CRC
    fake_header = b"\xa5\x5a\xff"  # impossible length
    parser = fp.FrameParser()
    frames = parser.feed(bytes(broken[:4]) + fake_header + bytes(broken[4:]) + good)
    assert frames == [fp.Frame(9, 0x81, b"\x00sim")]
    assert parser.discarded > 0
    assert frames[0].is_reply and frames[0].base_command == fp.Command.PING


def test_random_corruption_never_yields_a_wrong_frame() -> None:
    rng = random.Random(11)
    good = [fp.encode_frame(s, fp.Command.STATUS | fp.REPLY_BIT, bytes([0]) + bytes(16)) for s in range(50)]
    stream = bytearray(b"".join(good))
    for _ in range(40):  # flip random bytes
        stream[rng.randrange(len(stream))] ^= 1 << rng.randrange(8)
    frames = fp.FrameParser().feed(bytes(stream))
    assert all(f.encode() in good for f in frames)
    assert len(frames) >= 10


def test_payload_helpers_round_trip() -> None:
    report = fp.StatusReport(state=1, x_mm=12.345, y_mm=-0.5, z_mm=20.0, magnet=True, alarm=0, queued=3)
    assert fp.parse_status(fp.status_payload(report)) == report
    assert fp.move_payload(1.0, 2.0, 3.0, 6000) == (1000).to_bytes(4, "little", signed=True) + (
        2000
    ).to_bytes(4, "little", signed=True) + (3000).to_bytes(4, "little", signed=True) + (6000).to_bytes(
        2, "little"
    )
    with pytest.raises(fp.FrameError):
        fp.move_payload(0, 0, 0, 70000)
    with pytest.raises(fp.FrameError):
        fp.parse_status(b"\x00")
