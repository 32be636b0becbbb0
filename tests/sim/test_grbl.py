"""The emulated GRBL over a real pseudo-terminal, through pyserial."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from services.simworld.controller import ControllerError, EmulatedController

from .helpers import GrblClient, mpos

Factory = Callable[..., tuple[EmulatedController, GrblClient]]


@pytest.fixture
def grbl(config: Any, runtime_dir: Path) -> Iterator[Factory]:
    made: list[tuple[EmulatedController, GrblClient]] = []

    def make(
        speed: float = 40.0, faults: list[str] | None = None, **sim: Any
    ) -> tuple[EmulatedController, GrblClient]:
        cfg = msgspec.structs.replace(config, simworld=msgspec.structs.replace(config.simworld, **sim))
        ctl = EmulatedController(config=cfg, protocol="grbl", speed=speed, faults=faults)
        port = ctl.start_pty(runtime_dir / "sim-serial")
        client = GrblClient(port)
        made.append((ctl, client))
        return ctl, client

    yield make
    for ctl, client in made:
        client.close()
        ctl.close()


def unlocked(make: Factory, **kw: Any) -> tuple[EmulatedController, GrblClient]:
    ctl, c = make(homing_lock=False, **kw)
    c.reset()  # pyserial's open() discarded the power-on banner
    return ctl, c


def test_symlink_is_published_and_removed(config: Any, runtime_dir: Path) -> None:
    ctl = EmulatedController(config=config)
    link = runtime_dir / "sim-serial"
    port = ctl.start_pty(link)
    assert port == str(link) and os.readlink(link).startswith("/dev/pts/")
    with pytest.raises(ControllerError):
        ctl.start_pty(link)
    ctl.close()
    assert not link.exists()


def test_power_on_banner_and_homing_lock(grbl: Factory) -> None:
    _, c = grbl()
    c.ser.write(b"\x18")
    lines = c.read_until(lambda s: s.startswith("[MSG:"))
    assert lines[-2] == "Grbl 1.1h ['$' for help]"
    assert lines[-1] == "[MSG:'$H'|'$X' to unlock]"
    assert c.status().startswith("<Alarm|MPos:0.000,0.000,40.000|")
    assert c.send("G0 X10") == ["error:9"]


def test_soft_reset_prints_the_banner(grbl: Factory) -> None:
    _, c = unlocked(grbl)
    assert c.reset()[-1] == "Grbl 1.1h ['$' for help]"
    assert c.status().startswith("<Idle|")


def test_build_info_ok_and_errors(grbl: Factory) -> None:
    _, c = unlocked(grbl)
    assert c.send("$I") == ["[VER:1.1h.20190825:]", "[OPTS:V,15,128]", "ok"]
    assert c.send("") == ["ok"]
    assert c.send("G21 G90") == ["ok"]
    assert c.send("G2 X1 Y1") == ["error:20"]
    assert c.send("G1 X10") == ["error:22"]  # no feed rate yet
    assert c.send("G0 X") == ["error:2"]
    assert c.send("$Q") == ["error:3"]
    assert c.send("G0 X1 X2") == ["error:25"]
    assert c.send("G0 G1 X1") == ["error:21"]
    assert c.send("G4") == ["error:28"]
    assert c.send("M100") == ["error:20"]
    assert c.send("X" * 100) == ["error:11"]
    assert c.send("g0 x1 (comment) ; more") == ["ok"]
    assert c.send("N10 M3 S1000 T1") == ["ok"]  # spindle words accepted (the magnet is on M8/M9 here)
    assert c.send("$G")[0].startswith("[GC:G0 G54 G17 G21 G90 G94 M5 M9 ")


def test_status_reports_while_moving(grbl: Factory) -> None:
    ctl, c = unlocked(grbl, speed=4.0)
    # 300 mm at 6000 mm/min = 3 s simulated = 0.75 s real at speed 4
    assert c.send("G1 X300 F6000") == ["ok"]  # accepted into the planner at once
    seen = []
    while True:
        report = c.status()
        seen.append(report)
        if report.startswith("<Idle"):
            break
    running = [r for r in seen if r.startswith("<Run")]
    assert running, seen
    xs = [mpos(r)[0] for r in running]
    assert any(0.0 < x < 300.0 for x in xs)
    assert xs == sorted(xs)
    assert "FS:6000,0" in running[0]
    assert mpos(seen[-1]) == (300.0, 0.0, 40.0)
    assert ctl.snapshot().gripper.x_mm == 300.0


def test_relative_moves_and_inches(grbl: Factory) -> None:
    _, c = unlocked(grbl, speed=200.0)
    assert c.send("G91 G0 X10 Y5") == ["ok"]
    assert c.send("X10") == ["ok"]
    assert c.send("G90 G20 G0 X1") == ["ok"]  # 1 inch
    assert mpos(c.wait_idle()) == (25.4, 5.0, 40.0)


def test_dwell_answers_after_the_motion(grbl: Factory) -> None:
    _ctl, c = unlocked(grbl, speed=10.0)
    c.send("G1 X100 F6000")
    assert c.send("G4 P0") == ["ok"]
    assert c.status().startswith("<Idle|MPos:100.000,")


def test_homing(grbl: Factory) -> None:
    _, c = grbl(speed=10.0)
    c.ser.write(b"$H\n")
    assert c.status().startswith("<Home|")
    c.read_until(lambda s: s == "ok")
    assert c.status() == "<Idle|MPos:0.000,0.000,40.000|FS:0,0>"
    assert c.send("G0 X5") == ["ok"]


def test_unlock_clears_the_alarm(grbl: Factory) -> None:
    _, c = grbl()
    assert c.send("$X") == ["[MSG:Caution: Unlocked]", "ok"]
    assert c.send("G0 X5") == ["ok"]


def test_soft_limit_alarm_then_unlock(grbl: Factory) -> None:
    _ctl, c = unlocked(grbl)
    assert c.send("G0 X500") == ["ALARM:2", "error:9"]
    assert c.status().startswith("<Alarm|")
    assert c.send("G0 X5") == ["error:9"]
    c.send("$X")
    assert c.send("G0 X5") == ["ok"]


def test_reset_while_moving_is_alarm_3(grbl: Factory) -> None:
    _, c = unlocked(grbl, speed=1.0)
    c.send("G1 X300 F600")
    lines = c.reset()
    assert lines[0] == "ALARM:3"
    assert c.read_line() == "[MSG:'$H'|'$X' to unlock]"
    report = c.status()
    assert report.startswith("<Alarm|") and mpos(report)[0] < 300.0


def test_feed_hold_and_resume(grbl: Factory) -> None:
    _, c = unlocked(grbl, speed=4.0)
    c.send("G1 X200 F6000")
    c.ser.write(b"!")
    held = c.status()
    assert held.startswith("<Hold|")
    assert mpos(c.status()) == mpos(held)  # stands still
    c.ser.write(b"~")
    assert mpos(c.wait_idle())[0] == 200.0


def pick_and_place(c: GrblClient, src: tuple[float, float], dst: tuple[float, float]) -> None:
    for line in (
        "G21",
        "G90",
        "G0 Z20",
        f"G0 X{src[0]:.3f} Y{src[1]:.3f}",
        "G1 Z0 F1500",
        "M8",
        "G4 P0.1",
        "G1 Z20 F1500",
        f"G0 X{dst[0]:.3f} Y{dst[1]:.3f}",
        "G1 Z0 F1500",
        "M9",
        "G4 P0.1",
        "G0 Z20",
    ):
        assert c.send(line) == ["ok"], line
    c.wait_idle()


def test_pick_and_place_moves_exactly_one_piece(grbl: Factory) -> None:
    ctl, c = unlocked(grbl, speed=50.0)
    before = ctl.snapshot()
    target = ctl.world.square_center(5)
    pick_and_place(c, (40.0, 80.0), target)
    after = ctl.snapshot()
    assert after.board == "....X...."
    changed = [a for a, b in zip(after.pieces, before.pieces, strict=True) if a != b]
    assert [p.piece_id for p in changed] == [0]
    assert changed[0].square == 5 and changed[0].where == "board"
    assert len(after.pieces) == 10 and after.gripper.holding is None
    ctl.world.check()


def test_magnet_over_nothing_picks_nothing(grbl: Factory) -> None:
    ctl, c = unlocked(grbl, speed=50.0)
    pick_and_place(c, (100.0, 100.0), ctl.world.square_center(1))
    assert ctl.snapshot().board == "." * 9


def test_rotated_board_placement(grbl: Factory) -> None:
    ctl, c = unlocked(grbl, speed=50.0, board_angle_deg=-35.0)
    pick_and_place(c, (360.0, 80.0), ctl.world.square_center(3))
    assert ctl.snapshot().board == "..O......"


def test_fault_drop_mid_move(grbl: Factory) -> None:
    ctl, c = unlocked(grbl, speed=50.0, faults=["drop:1"])
    target = ctl.world.square_center(9)
    pick_and_place(c, (40.0, 80.0), target)
    piece = ctl.snapshot().pieces[0]
    # dropped half-way from the supply slot to square 9 (at travel height, where it fell)
    assert piece.where != "gripper"
    assert (piece.x_mm, piece.y_mm) == pytest.approx(((40 + target[0]) / 2, (80 + target[1]) / 2), abs=0.01)
    assert piece.square != 9 and ctl.snapshot().board[8] == "."
    assert ctl.faults.committed["drop"] == 1


def test_fault_lose_reply_and_garbage(grbl: Factory) -> None:
    ctl, c = unlocked(grbl)
    ctl.inject("lose-reply")
    c.ser.write(b"G0 X10\n")
    # the ok never comes, but the line was executed
    assert mpos(c.wait_idle())[0] == 10.0
    ctl.inject("garbage")
    lines = c.send("G0 X20")
    assert lines[-1] == "ok" and len(lines) == 2 and lines[0] not in ("ok",)


def test_fault_stall_then_answers(grbl: Factory) -> None:
    ctl, c = unlocked(grbl, stall_s=0.3)
    ctl.inject("stall")
    c.ser.write(b"$I\n")
    assert c.read_line(deadline_s=0.1) is None  # nothing while stalled
    assert c.read_until(lambda s: s == "ok")[-1] == "ok"  # processed afterwards


def test_fault_alarm_during_a_move(grbl: Factory) -> None:
    ctl, c = unlocked(grbl, speed=10.0)
    pick_and_place(c, (40.0, 80.0), (40.0, 80.0))  # pick it up and put it back: holding nothing
    c.send("G1 Z0 F1500")
    c.send("M8")
    c.send("G0 Z20")
    c.wait_idle()
    assert ctl.snapshot().gripper.holding == 0
    ctl.inject("alarm")
    c.ser.write(b"G0 X200 Y150\n")
    lines = c.read_until(lambda s: s.startswith("ALARM:"))
    assert lines[-1] == "ALARM:1"
    snap = ctl.snapshot()
    assert snap.gripper.holding is None and not snap.gripper.magnet  # the alarm dropped the piece
    assert c.status().startswith("<Alarm|")
    assert c.send("$X")[-1] == "ok"
