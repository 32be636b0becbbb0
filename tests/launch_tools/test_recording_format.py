"""The recording file format: round trip, lazy decoding, and damaged files (every truncation, every flipped
byte) cut at the last good record, never fatal."""

from __future__ import annotations

import random
import warnings
from pathlib import Path

import pytest

import messages
from messages import ActuatorEvent, BoardObservation, CameraFrame, GameState, Heartbeat
from services.common.recording import (
    FORMAT_VERSION,
    MAGIC,
    DamagedTailWarning,
    FileHeader,
    Record,
    Recording,
    RecordingError,
    RecordingWriter,
    write_recording,
)

from .conftest import frames_for


def sample_frames() -> list[list[bytes]]:
    return [
        frames_for("sys.heartbeat", Heartbeat(process="vision", pid=11, seq=1), 1, "vision", 11),
        frames_for("vision.board", BoardObservation(frame_id=1, found=True, board="X...O...."), 1, "vision"),
        frames_for("referee.state", GameState(revision=3, game_id="g1", phase="judged"), 7, "referee"),
        frames_for("actuator.event", ActuatorEvent(command_id="c1", status="done"), 2, "actuator"),
        frames_for("camera.frame", CameraFrame(frame_id=5, width=4, height=2, data=bytes(24)), 5, "simcam"),
    ]


def write_sample(path: Path) -> list[Record]:
    with RecordingWriter(path, FileHeader.now(tool="test")) as writer:
        return [
            writer.write(frames, recv_ns=1_000_000_000 + i * 10_000_000)
            for i, frames in enumerate(sample_frames())
        ]


def test_round_trip_keeps_frames_times_and_header(tmp_path: Path) -> None:
    path = tmp_path / "a.sanzilog"
    written = write_sample(path)
    rec = Recording(path)
    assert rec.header.format_version == FORMAT_VERSION
    assert rec.header.info["tool"] == "test"
    assert rec.header.versions == {tag: cls.VERSION for tag, cls in messages.MESSAGE_TYPES.items()}
    assert rec.header.topics["camera.frame"]["channel"] == "frame"
    assert rec.header.topics["camera.frame"]["logged"] is False
    assert "GameState" in rec.header.schemas["$defs"]
    read = list(rec)
    assert read == written
    assert [r.frames() for r in read] == [r.frames() for r in written]
    assert [r.topic for r in read] == [f[0].decode() for f in sample_frames()]
    assert rec.tail is None
    assert rec.good_bytes == path.stat().st_size
    # lazy decoding gives the messages back
    env = read[2].envelope()
    assert env.topic == "referee.state"
    assert env.message == GameState(revision=3, game_id="g1", phase="judged")
    assert env.header.source == "referee" and env.header.seq == 7
    assert read[4].envelope().message.data == bytes(24)
    # a second pass reads the same again
    assert list(rec) == written
    assert len(rec) == 5


def test_wall_clock_of_a_record(tmp_path: Path) -> None:
    path = tmp_path / "a.sanzilog"
    header = FileHeader.now()
    with RecordingWriter(path, header) as writer:
        writer.write(sample_frames()[0], recv_ns=header.created_mono_ns + 2_500_000_000)
    rec = Recording(path)
    (record,) = list(rec)
    assert rec.wall_ns(record) == header.created_wall_ns + 2_500_000_000


def test_unknown_message_type_is_kept_and_decoded_only_on_demand(tmp_path: Path) -> None:
    path = tmp_path / "a.sanzilog"
    header = messages.Header(type="fromthefuture", version=9, source="x", pid=1, seq=1, mono_ns=0, wall_ns=0)
    frames = [b"future.topic", messages.envelope._header_encoder.encode(header), b"\x81\xa1a\x01"]
    with RecordingWriter(path) as writer:
        writer.write(frames, recv_ns=5)
    (record,) = list(Recording(path))
    assert record.topic == "future.topic"
    assert record.header().type == "fromthefuture"
    with pytest.raises(messages.DecodeError) as err:
        record.envelope()
    assert err.value.reason == "unknown-type"


def test_every_truncation_keeps_the_complete_records(tmp_path: Path) -> None:
    path = tmp_path / "a.sanzilog"
    written = write_sample(path)
    data = path.read_bytes()
    rec = Recording(path)
    boundaries = [rec.data_offset]
    for r in written:
        boundaries.append(boundaries[-1] + r.size)
    assert boundaries[-1] == len(data)
    cut = tmp_path / "cut.sanzilog"
    for length in range(rec.data_offset, len(data) + 1):
        cut.write_bytes(data[:length])
        damaged = Recording(cut, warn=False)
        got = list(damaged)
        complete = sum(1 for b in boundaries[1:] if b <= length)
        assert got == written[:complete], length
        if length in boundaries:
            assert damaged.tail is None
        else:
            assert damaged.tail is not None and damaged.tail.reason == "truncated"
            assert damaged.tail.offset == boundaries[complete]
            assert damaged.tail.dropped_bytes == length - boundaries[complete]


def test_a_damaged_tail_warns_once_per_reader(tmp_path: Path) -> None:
    path = tmp_path / "a.sanzilog"
    written = write_sample(path)
    with open(path, "ab") as f:
        f.write(b"\x01\x02")
    rec = Recording(path)
    with pytest.warns(DamagedTailWarning, match="truncated tail cut"):
        assert list(rec) == written
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert list(rec) == written  # the second pass does not warn again


def test_truncated_inside_the_header_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "a.sanzilog"
    write_sample(path)
    data = path.read_bytes()
    data_offset = Recording(path).data_offset
    cut = tmp_path / "cut.sanzilog"
    for length in (0, 3, len(MAGIC), len(MAGIC) + 5, data_offset // 2, data_offset - 1):
        cut.write_bytes(data[:length])
        with pytest.raises(RecordingError):
            Recording(cut)


def test_every_flipped_byte_cuts_from_the_damaged_record(tmp_path: Path) -> None:
    path = tmp_path / "a.sanzilog"
    written = write_sample(path)
    data = path.read_bytes()
    rec = Recording(path)
    boundaries = [rec.data_offset]
    for r in written:
        boundaries.append(boundaries[-1] + r.size)
    rng = random.Random(8)
    bad = tmp_path / "bad.sanzilog"
    for offset in range(rec.data_offset, len(data)):
        damaged_bytes = bytearray(data)
        damaged_bytes[offset] ^= rng.randrange(1, 256)
        bad.write_bytes(bytes(damaged_bytes))
        damaged = Recording(bad, warn=False)
        got = list(damaged)
        index = max(i for i, b in enumerate(boundaries) if b <= offset)
        assert got == written[:index], offset
        assert damaged.tail is not None and damaged.tail.offset == boundaries[index]


def test_damaged_header_or_foreign_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "a.sanzilog"
    write_sample(path)
    data = bytearray(path.read_bytes())
    data[len(MAGIC) + 20] ^= 0xFF
    bad = tmp_path / "bad.sanzilog"
    bad.write_bytes(bytes(data))
    with pytest.raises(RecordingError, match="checksum"):
        Recording(bad)
    foreign = tmp_path / "notes.txt"
    foreign.write_text("hello, this is not a recording\n")
    with pytest.raises(RecordingError, match="not a sanzi recording"):
        Recording(foreign)
    with pytest.raises(RecordingError, match="cannot read"):
        Recording(tmp_path / "missing.sanzilog")


def test_writer_refuses_to_overwrite_and_bad_frames(tmp_path: Path) -> None:
    path = tmp_path / "a.sanzilog"
    write_sample(path)
    before = path.read_bytes()
    with pytest.raises(RecordingError, match="exists"):
        RecordingWriter(path)
    assert path.read_bytes() == before  # nothing lost
    with RecordingWriter(tmp_path / "b.sanzilog") as writer:
        with pytest.raises(RecordingError, match="3 frames"):
            writer.write([b"a", b"b"])
        with pytest.raises(RecordingError, match="UTF-8"):
            writer.write([b"\xff\xfe", b"h", b"b"])
        assert writer.records == 0


def test_write_recording_is_atomic_and_complete(tmp_path: Path) -> None:
    source = tmp_path / "a.sanzilog"
    written = write_sample(source)
    copy = tmp_path / "copy.sanzilog"
    size = write_recording(copy, Recording(source), FileHeader.now(reason="test"))
    assert copy.stat().st_size == size
    assert list(Recording(copy)) == written
    assert Recording(copy).header.info["reason"] == "test"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
