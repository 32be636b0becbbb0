"""`sanzi detect`, the camera sources, and the vision service on a real bus."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import cv2
import msgspec
import numpy as np
import pytest

from launch.commands import detect as detect_cmd
from messages import BoardObservation, CameraFrame, Channel, GameState
from services.vision.service import VisionService
from services.vision.sources import (
    OpenCVSource,
    SourceError,
    VideoFileSource,
    decode_camera_frame,
    is_video_file,
)
from tests.inprocess import bus_sockets, running

from .synth import Scene, draw

BOARD = "X...O...O"


def _image(tmp_path: Path, name: str = "board.png", **kw: Any) -> Path:
    path = tmp_path / name
    cv2.imwrite(str(path), draw(Scene(angle_deg=-20.0, board=BOARD, noise=2.0, **kw), seed=3))
    return path


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    detect_cmd.add_arguments(parser)
    return detect_cmd.run(parser.parse_args(argv))


def test_detect_json_and_annotation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    image = _image(tmp_path)
    out = tmp_path / "annotated.png"
    assert _run([str(image), "--json", "--annotate", str(out)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["found"] and data["board"] == BOARD
    assert data["pose"]["angle_deg"] == pytest.approx(-20.0, abs=1.0)
    assert len(data["pose"]["corners_px"]) == 4
    assert [s["number"] for s in data["squares"]] == list(range(1, 10))
    assert {s["state"] for s in data["squares"]} == {"empty", "black", "white"}
    assert data["occluded"] is False
    annotated = cv2.imread(str(out))
    assert annotated is not None and annotated.shape == (480, 640, 3)


def test_detect_text_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run([str(_image(tmp_path))]) == 0
    text = capsys.readouterr().out
    assert f"board {BOARD}" in text and "square 5: white" in text and "angle -20" in text


def test_detect_not_an_image_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "notes.png"
    bad.write_text("not an image")
    assert _run([str(bad)]) == 2
    assert "not a readable image" in capsys.readouterr().err
    assert _run([str(tmp_path / "missing.png")]) == 2


def test_detect_no_board_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blank = tmp_path / "blank.png"
    cv2.imwrite(str(blank), np.random.default_rng(0).integers(100, 140, (480, 640, 3), dtype=np.uint8))
    assert _run([str(blank), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["found"] is False


def test_decode_camera_frame() -> None:
    image = draw(Scene(board=BOARD), seed=0)
    msg = CameraFrame(frame_id=1, width=640, height=480, data=image.tobytes())
    assert np.array_equal(decode_camera_frame(msg), image)
    _ok, jpeg = cv2.imencode(".jpg", image)
    assert decode_camera_frame(
        CameraFrame(frame_id=2, width=640, height=480, data=jpeg.tobytes(), encoding="jpeg")
    ).shape == (480, 640, 3)
    with pytest.raises(SourceError, match="bytes"):
        decode_camera_frame(CameraFrame(frame_id=3, width=640, height=480, data=b"xx"))
    with pytest.raises(SourceError, match="encoding"):
        decode_camera_frame(CameraFrame(frame_id=4, width=1, height=1, data=b"xyz", encoding="yuv"))


async def test_video_file_source_reads_every_frame_then_ends(tmp_path: Path) -> None:
    path = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10.0, (640, 480))
    assert writer.isOpened()
    for i in range(5):
        writer.write(draw(Scene(angle_deg=float(i), board=BOARD), seed=i))
    writer.release()
    assert is_video_file(str(path)) and not is_video_file("rtsp://cam/stream.mp4")
    source = VideoFileSource(str(path), realtime=False)
    frames = [await source.read() for _ in range(6)]
    source.close()
    assert [f.frame_id for f in frames[:5] if f is not None] == [1, 2, 3, 4, 5]
    assert frames[5] is None
    assert frames[0].image.shape == (480, 640, 3)


def test_opencv_source_refuses_a_missing_device() -> None:
    with pytest.raises(SourceError, match="cannot open"):
        OpenCVSource("/dev/no-such-camera-here")
    with pytest.raises(SourceError, match="no such video"):
        VideoFileSource("/nonexistent/clip.mp4")


async def test_service_on_a_real_bus(bus: Any, tmp_path: Path) -> None:
    """Frames on camera.frame in, vision.board for each and vision.stable once the board holds still;
    a stable board that disagrees with the waiting referee's is saved as an anomaly frame."""
    anomalies = tmp_path / "anomalies"
    config = msgspec.structs.replace(
        bus,
        vision=msgspec.structs.replace(
            bus.vision, stable_frames=3, anomaly_dir=str(anomalies), stable_repeat_s=0.2
        ),
    )
    service = VisionService(config)
    async with running(service) as (task,), bus_sockets(config.bus) as sockets:
        pub = sockets.publisher("simcam", Channel.EVENT, Channel.FRAME)
        sub = sockets.subscriber(["vision."])
        image = draw(Scene(angle_deg=15.0, board=BOARD, noise=2.0), seed=5)
        boards: list[BoardObservation] = []
        stables: list[BoardObservation] = []
        deadline = time.monotonic() + 30.0
        frame_id = 0
        referee = GameState(revision=1, phase="placement-confirmed", board="X........")
        while time.monotonic() < deadline and not (stables and list(anomalies.glob("*.png"))):
            frame_id += 1
            await pub.publish(
                "camera.frame", CameraFrame(frame_id=frame_id, width=640, height=480, data=image.tobytes())
            )
            await pub.publish("referee.state", referee)
            env = await sub.recv(timeout=0.05)
            while env is not None:
                if env.topic == "vision.board":
                    boards.append(env.message)
                elif env.topic == "vision.stable":
                    stables.append(env.message)
                env = await sub.recv(timeout=0.0)
        assert boards, "no vision.board published"
        assert all(b.found and b.board == BOARD for b in boards)
        assert stables and stables[0].stable and stables[0].board == BOARD
        assert list(anomalies.glob("*-disagree-*.png")), "no anomaly frame saved"
        assert not task.done()
