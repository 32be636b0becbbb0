"""`sanzi motion` against the emulated controller on a real pseudo-terminal, both protocols."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from launch.cli import main

from .conftest import SPEED


@pytest.fixture
def port(config: Any, protocol: str, tmp_path: Path) -> Any:
    from services.simworld.controller import EmulatedController

    ctl = EmulatedController(config=config, protocol=protocol, speed=SPEED)
    path = ctl.start_pty(tmp_path / "sim-serial")
    try:
        yield ctl, path
    finally:
        ctl.close()


def sanzi(*argv: str) -> int:
    return main(["motion", *argv])


def test_home_goto_pick_place(port: Any, protocol: str, capsys: pytest.CaptureFixture[str]) -> None:
    ctl, path = port
    common = ["--port", path, "--protocol", protocol]
    assert sanzi(*common, "home") == 0
    assert sanzi(*common, "goto", "120", "90") == 0
    out = capsys.readouterr().out
    assert "Idle at X120.000 Y90.000 Z20.000" in out
    black0 = next(p for p in ctl.snapshot().pieces if p.colour == "black" and p.slot == 0)
    assert sanzi(*common, "pick", str(black0.x_mm), str(black0.y_mm)) == 0
    assert ctl.snapshot().gripper.holding == black0.piece_id
    assert sanzi(*common, "place", "150", "150") == 0
    moved = next(p for p in ctl.snapshot().pieces if p.piece_id == black0.piece_id)
    assert math.dist((moved.x_mm, moved.y_mm), (150, 150)) < 0.5
    assert sanzi(*common, "magnet", "on") == 0
    assert ctl.snapshot().gripper.magnet
    assert sanzi(*common, "magnet", "off") == 0
    assert sanzi(*common, "status") == 0
    assert "Idle at X150.000 Y150.000 Z20.000 magnet off" in capsys.readouterr().out


def test_alarm_is_shown_and_motion_refused(
    port: Any, protocol: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _, path = port
    common = ["--port", path, "--protocol", protocol]
    if protocol == "grbl":  # GRBL starts locked (homing switches); the frame controller starts idle
        assert sanzi(*common, "status") == 0
        assert "in alarm" in capsys.readouterr().out
        assert sanzi(*common, "goto", "10", "10") == 1
        assert "alarm" in capsys.readouterr().err
        assert sanzi(*common, "unlock") == 0
    assert sanzi(*common, "goto", "10", "10", "5") == 0


def test_raw_lines_on_grbl_and_refused_on_frame(
    port: Any, protocol: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _, path = port
    code = sanzi("--port", path, "--protocol", protocol, "raw", "$I")
    captured = capsys.readouterr()
    if protocol == "grbl":
        assert code == 0 and "[VER:1.1h" in captured.out and captured.out.rstrip().endswith("ok")
    else:
        assert code == 1 and "no raw command lines" in captured.err


def test_no_controller_is_a_clear_error(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "launch.cli", "motion", "--port", str(tmp_path / "nothing"), "status"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert "cannot open serial port" in proc.stderr
