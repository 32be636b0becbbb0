"""The recording file (MCAP): round trip, lazy decoding, the viewers' JSON channels validated against their
schemas, and damaged files (truncations, flipped bytes) read up to the last complete chunk, never fatal."""

from __future__ import annotations

import json
import random
import warnings
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from mcap.reader import make_reader

import messages
from messages import ActuatorEvent, BoardObservation, CameraFrame, GameState, Heartbeat
from services.common import viewer
from services.common.recording import (
    FORMAT_VERSION,
    FRAMES_ENCODING,
    OLD_MAGIC,
    DamagedTailWarning,
    FileHeader,
    Record,
    Recording,
    RecordingError,
    RecordingWriter,
    write_recording,
)
from tests.messages.samples import SAMPLES

from .conftest import frames_for


def sample_frames() -> list[list[bytes]]:
    return [
        frames_for("sys.heartbeat", Heartbeat(process="vision", pid=11, seq=1), 1, "vision", 11),
        frames_for("vision.board", BoardObservation(frame_id=1, found=True, board="X...O...."), 1, "vision"),
        frames_for("referee.state", GameState(revision=3, game_id="g1", phase="judged"), 7, "referee"),
        frames_for("actuator.event", ActuatorEvent(command_id="c1", status="done"), 2, "actuator"),
        frames_for("camera.frame", CameraFrame(frame_id=5, width=4, height=2, data=bytes(24)), 5, "simcam"),
    ]


def write_sample(path: Path, **kw: object) -> list[Record]:
    """The sample, each record in a chunk of its own when ``flush_interval_s=0`` is passed."""
    with RecordingWriter(path, FileHeader.now(tool="test"), **kw) as writer:  # type: ignore[arg-type]
        return [
            writer.write(frames, recv_ns=1_000_000_000 + i * 10_000_000)
            for i, frames in enumerate(sample_frames())
        ]


def test_round_trip_keeps_frames_times_and_header(tmp_path: Path) -> None:
    path = tmp_path / "a.mcap"
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
    assert rec.tail is None
    assert rec.good_bytes == path.stat().st_size
    env = read[2].envelope()
    assert env.message == GameState(revision=3, game_id="g1", phase="judged")
    assert env.header.source == "referee" and env.header.seq == 7
    assert read[4].envelope().message.data == bytes(24)
    assert list(rec) == written  # a second pass reads the same again
    assert len(rec) == 5


def test_the_file_is_mcap_that_the_mcap_library_reads(tmp_path: Path) -> None:
    path = tmp_path / "a.mcap"
    write_sample(path)
    with open(path, "rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        assert summary is not None and summary.statistics is not None
        topics = {c.topic: c.message_encoding for c in summary.channels.values()}
        assert all(c.compression == "zstd" for c in summary.chunk_indexes)
    assert topics["vision.board"] == FRAMES_ENCODING
    assert topics["/vision/board"] == "json"
    assert topics["/referee/state"] == "json"
    assert "/camera/frame" not in topics  # pixels go out only as /camera/image, with --camera


def test_wall_clock_and_log_time(tmp_path: Path) -> None:
    path = tmp_path / "a.mcap"
    header = FileHeader.now()
    with RecordingWriter(path, header) as writer:
        writer.write(sample_frames()[0], recv_ns=header.created_mono_ns + 2_500_000_000)
    rec = Recording(path)
    (record,) = list(rec)
    assert rec.wall_ns(record) == header.created_wall_ns + 2_500_000_000
    with open(path, "rb") as f:
        (_, _, message), *_ = make_reader(f).iter_messages(topics=["sys.heartbeat"])
    assert message.log_time == header.created_wall_ns + 2_500_000_000


def test_unknown_message_type_is_kept_and_decoded_only_on_demand(tmp_path: Path) -> None:
    path = tmp_path / "a.mcap"
    header = messages.Header(type="fromthefuture", version=9, source="x", pid=1, seq=1, mono_ns=0, wall_ns=0)
    frames = [b"future.topic", messages.envelope._header_encoder.encode(header), b"\x81\xa1a\x01"]
    with RecordingWriter(path) as writer:
        writer.write(frames, recv_ns=5)
        assert writer.viewer_errors["future.topic"] == 1  # no viewer form, but recorded
    (record,) = list(Recording(path))
    assert record.topic == "future.topic" and record.body == b"\x81\xa1a\x01"
    assert record.header().type == "fromthefuture"
    with pytest.raises(messages.DecodeError) as err:
        record.envelope()
    assert err.value.reason == "unknown-type"


def _camera_frame(frame_id: int, capture_ns: int) -> CameraFrame:
    rng = np.random.default_rng(frame_id)
    pixels = rng.integers(0, 255, (48, 64, 3), dtype=np.uint8)
    return CameraFrame(frame_id=frame_id, width=64, height=48, data=pixels.tobytes(), capture_ns=capture_ns)


def test_every_viewer_message_matches_its_channel_schema(tmp_path: Path) -> None:
    """Every message type (and the camera, annotations and log) as the viewers get it: the schema is a
    flat root object and each message validates against it."""
    path = tmp_path / "v.mcap"
    header = FileHeader.now()
    t0 = header.created_mono_ns
    with RecordingWriter(path, header, jpeg_quality=70) as writer:
        for i, (topic, info) in enumerate(messages.TOPICS.items()):
            writer.write(frames_for(topic, SAMPLES[info.type.__name__], i + 1), recv_ns=t0 + i)
        writer.write(frames_for("camera.frame", _camera_frame(7, t0 + 50), 9), recv_ns=t0 + 60, raw=False)
        obs = SAMPLES["BoardObservation"]
        writer.write(frames_for("vision.board", obs, 99), recv_ns=t0 + 70)
        writer.write_log({"event": "cheat detected", "level": "warning", "square": 3}, t0, "referee")
        assert not writer.viewer_errors
    checked: dict[str, int] = {}
    with open(path, "rb") as f:
        for schema, channel, message in make_reader(f).iter_messages():
            if channel.message_encoding != "json":
                continue
            assert schema is not None and schema.encoding == "jsonschema"
            doc = json.loads(schema.data)
            assert doc["type"] == "object" and "$ref" not in doc, channel.topic
            assert "$ref" not in schema.data.decode(), channel.topic
            jsonschema.validate(json.loads(message.data), doc)
            checked[channel.topic] = checked.get(channel.topic, 0) + 1
    # camera frames (camera.frame, vision.frame) become /camera/image, never JSON of their pixels
    every = {viewer.viewer_topic(t) for t, info in messages.TOPICS.items() if info.type is not CameraFrame}
    assert every <= set(checked)
    assert {"/camera/image", "/vision/annotations", "/log"} <= set(checked)
    # the camera's image and vision's reading of it carry the same time, so the Image panel pairs them
    image = [m for t, _, m in Recording(path).viewer_messages(["/camera/image"])][-1]
    annotations = [m for t, _, m in Recording(path).viewer_messages(["/vision/annotations"])]
    assert image["format"] == "jpeg"
    stamp = viewer.stamp(header.wall_ns(obs.capture_ns))
    assert annotations[-1]["points"][0]["timestamp"] == stamp
    assert len(annotations[-1]["texts"]) == len(obs.squares)
    # the camera frame written for viewing only is not a record to replay (the sample's is)
    assert [r.topic for r in Recording(path)].count("camera.frame") == 1


def test_flattened_schemas_have_plain_types() -> None:
    schema = viewer.schema_for(BoardObservation)
    props = schema["properties"]
    assert props["pose"]["type"] == "object"  # Optional[BoardPose]: the plain type
    point = props["pose"]["properties"]["center_px"]
    assert point == {
        "type": "object",
        "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
        "required": ["x", "y"],
    }  # an array-like struct as an object
    game = viewer.schema_for(GameState)["properties"]
    assert game["phase"]["type"] == "string" and "idle" in game["phase"]["enum"]
    assert game["paused_phase"]["type"] == "string" and "" in game["paused_phase"]["enum"]
    assert game["task"] == {"type": "integer"}
    assert viewer.to_viewer(GameState(revision=1))["type"] == "GameState"
    assert "task" not in viewer.to_viewer(GameState(revision=1))  # None is left out


def first_chunk(path: Path) -> int:
    """Where the first chunk starts: before it are the magic, the MCAP header and the sanzi metadata."""
    with open(path, "rb") as f:
        summary = make_reader(f).get_summary()
    assert summary is not None
    return min(c.chunk_start_offset for c in summary.chunk_indexes)


def _read_all(path: Path) -> tuple[list[Record], Recording]:
    rec = Recording(path, warn=False)
    return list(rec), rec


def test_truncation_keeps_the_complete_chunks(tmp_path: Path) -> None:
    path = tmp_path / "a.mcap"
    written = write_sample(path, flush_interval_s=0.0)  # a chunk per record
    data = path.read_bytes()
    cut = tmp_path / "cut.mcap"
    header_end = first_chunk(path)
    # around every chunk's start and end, every 97th length, and the end of the file but its closing
    # magic (the footer is whole there)
    with open(path, "rb") as f:
        summary = make_reader(f).get_summary()
    assert summary is not None and len(summary.chunk_indexes) == len(written)
    edges = {c.chunk_start_offset + d for c in summary.chunk_indexes for d in (0, c.chunk_length)}
    near = {e + d for e in edges for d in (-1, 0, 1)}
    lengths = sorted(
        x for x in {*near, *range(header_end + 40, len(data) - 8, 97), len(data) - 9} if x > header_end
    )
    previous = 0
    for length in lengths:
        cut.write_bytes(data[:length])
        try:
            got, damaged = _read_all(cut)
        except RecordingError:
            assert previous == 0, length  # only a cut inside the header is an error
            continue
        assert got == written[: len(got)], length
        assert len(got) >= previous, length
        previous = len(got)
        assert damaged.tail is not None and damaged.tail.reason == "truncated", length
        assert damaged.tail.offset + damaged.tail.dropped_bytes == length
    assert previous == len(written)  # the records are all in, only the summary is missing


def test_a_damaged_tail_warns_once_per_reader(tmp_path: Path) -> None:
    path = tmp_path / "a.mcap"
    written = write_sample(path, flush_interval_s=0.0)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 30])
    rec = Recording(path)
    with pytest.warns(DamagedTailWarning, match="truncated tail cut"):
        assert list(rec) == written
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert list(rec) == written  # the second pass does not warn again


def test_flipped_bytes_never_give_a_wrong_record(tmp_path: Path) -> None:
    path = tmp_path / "a.mcap"
    written = write_sample(path, flush_interval_s=0.0)
    data = path.read_bytes()
    rng = random.Random(8)
    bad = tmp_path / "bad.mcap"
    start = first_chunk(path)
    for offset in rng.sample(range(start, len(data)), 150):
        damaged = bytearray(data)
        damaged[offset] ^= rng.randrange(1, 256)
        bad.write_bytes(bytes(damaged))
        got, _ = _read_all(bad)
        # CRCs on every chunk: a damaged chunk ends the reading, it never yields a changed record
        assert got == written[: len(got)], offset


def test_old_damaged_or_foreign_files_are_clear_errors(tmp_path: Path) -> None:
    old = tmp_path / "game.sanzilog"
    old.write_bytes(OLD_MAGIC + bytes(100))
    with pytest.raises(RecordingError, match=r"old \.sanzilog"):
        Recording(old)
    foreign = tmp_path / "notes.txt"
    foreign.write_text("hello, this is not a recording\n")
    with pytest.raises(RecordingError, match="not a sanzi recording"):
        Recording(foreign)
    with pytest.raises(RecordingError, match="cannot read"):
        Recording(tmp_path / "missing.mcap")
    path = tmp_path / "a.mcap"
    write_sample(path)
    for length in (8, 20, 60):
        cut = tmp_path / "cut.mcap"
        cut.write_bytes(path.read_bytes()[:length])
        with pytest.raises(RecordingError):
            Recording(cut)


def test_writer_refuses_to_overwrite_and_bad_frames(tmp_path: Path) -> None:
    path = tmp_path / "a.mcap"
    write_sample(path)
    before = path.read_bytes()
    with pytest.raises(RecordingError, match="exists"):
        RecordingWriter(path)
    assert path.read_bytes() == before  # nothing lost
    with RecordingWriter(tmp_path / "b.mcap") as writer:
        with pytest.raises(RecordingError, match="3 frames"):
            writer.write([b"a", b"b"])
        with pytest.raises(RecordingError, match="UTF-8"):
            writer.write([b"\xff\xfe", b"h", b"b"])
        assert writer.records == 0


def test_write_recording_is_atomic_and_complete(tmp_path: Path) -> None:
    source = tmp_path / "a.mcap"
    written = write_sample(source)
    copy = tmp_path / "copy.mcap"
    size = write_recording(copy, Recording(source), FileHeader.now(reason="test"))
    assert copy.stat().st_size == size
    assert list(Recording(copy)) == written
    assert Recording(copy).header.info["reason"] == "test"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_the_foxglove_layout_names_channels_and_fields_that_exist() -> None:
    """docs/foxglove-layout.json: every topic a panel reads is one the writer makes, every field path one
    its schema has."""
    layout = json.loads((Path(__file__).parents[2] / "docs" / "foxglove-layout.json").read_text())
    schemas = {viewer.viewer_topic(t): viewer.schema_for(info.type) for t, info in messages.TOPICS.items()}
    schemas |= {
        viewer.CAMERA_TOPIC: viewer.COMPRESSED_IMAGE_SCHEMA,
        viewer.ANNOTATIONS_TOPIC: viewer.IMAGE_ANNOTATIONS_SCHEMA,
        viewer.LOG_TOPIC: viewer.LOG_SCHEMA,
    }
    paths: list[str] = []
    for panel in layout["configById"].values():
        paths += [p["value"] for p in panel.get("paths", [])]
        paths += [panel[k] for k in ("topicPath", "topicToRender") if k in panel]
        image = panel.get("imageMode", {})
        paths += [image["imageTopic"], *image["annotations"]] if image else []
    assert len(paths) >= 10
    for path in paths:
        topic, _, field = path.partition(".")
        assert topic in schemas, path
        if field:
            assert field in schemas[topic]["properties"], path


def test_a_bad_camera_frame_is_recorded_without_a_viewer_copy(tmp_path: Path) -> None:
    path = tmp_path / "bad.mcap"
    short = CameraFrame(frame_id=1, width=64, height=48, data=bytes(10))
    odd = CameraFrame(frame_id=2, width=2, height=1, data=bytes(6), encoding="yuv")
    with RecordingWriter(path, jpeg_quality=80) as writer:
        writer.write(frames_for("camera.frame", short, 1), recv_ns=1)
        writer.write(frames_for("camera.frame", odd, 2), recv_ns=2)
        writer.write(frames_for("camera.frame", _camera_frame(3, 0), 3), recv_ns=3)
        assert writer.viewer_errors["camera.frame"] == 2
        assert writer.viewer_counts[viewer.CAMERA_TOPIC] == 1
    assert [r.envelope().message.frame_id for r in Recording(path)] == [1, 2, 3]
