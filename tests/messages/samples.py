"""One filled-in instance of every message type, for round-trip tests and fuzzing."""

from __future__ import annotations

import messages as m

_POSE = m.BoardPose(
    center_px=m.Point(320.0, 240.0),
    angle_deg=-12.5,
    corners_px=(m.Point(200, 120), m.Point(440, 120), m.Point(440, 360), m.Point(200, 360)),
    homography=(1.0, 0.0, -200.0, 0.0, 1.0, -120.0, 0.0, 0.0, 1.0),
)

SAMPLES: dict[str, m.Message] = {
    "CameraFrame": m.CameraFrame(frame_id=3, width=2, height=1, data=b"\x01\x02\x03\x04\x05\x06"),
    "CameraControl": m.CameraControl(exposure=0.8),
    "BoardObservation": m.BoardObservation(
        frame_id=3,
        found=True,
        board="X.O......",
        pose=_POSE,
        squares=[m.SquareObservation(number=1, state="black", confidence=0.97, center_px=m.Point(1, 2))],
        supply=[m.SupplyPiece(colour="white", center_px=m.Point(10, 20), radius_px=9.0)],
        stable=True,
        agreeing_frames=6,
        capture_ns=2_000_000_000,
        window_start_ns=1_833_000_000,
    ),
    "ButtonPress": m.ButtonPress(press_id=4, source="sim", press_ns=123),
    "PanelState": m.PanelState(lamp=True, pattern="your-turn", leds={"status": "green"}, text="your turn"),
    "OperatorCommand": m.OperatorCommand(command_id="c1", action="task", task=2, squares=[1, 5, 9, 3]),
    "OperatorReply": m.OperatorReply(command_id="c1", ok=False, error="square 10 is not 1..9"),
    "MoveRequest": m.MoveRequest(request_id="g1-3", board="X...O....", to_move="X", level="hard", seed=5),
    "MoveReply": m.MoveReply(request_id="g1-3", square=9, value=0, pv=[9, 1], nodes=12, elapsed_us=3.5),
    "ActuatorCommand": m.ActuatorCommand(
        command_id="g1-4", kind="place", colour="black", to_square=5, pose=_POSE
    ),
    "ActuatorEvent": m.ActuatorEvent(command_id="g1-4", status="done", duration_s=4.2, supply_black=4),
    "ActuatorPosition": m.ActuatorPosition(x_mm=1.0, y_mm=2.0, z_mm=20.0, magnet=True, state="Run"),
    "GameState": m.GameState(
        revision=9,
        game_id="g1",
        phase="waiting-for-person",
        task=5,
        board="X...O....",
        lamp=True,
        placements=[
            m.PlacementRecord(command_id="g1-4", square=5, colour="white", duration_s=4.1, within_budget=True)
        ],
        moves=[1, 5],
    ),
    "Heartbeat": m.Heartbeat(process="vision", pid=42, seq=8, state="degraded", detail="no board"),
    "WorldState": m.WorldState(
        board_center_mm=(200.0, 150.0),
        board_angle_deg=10.0,
        pitch_mm=40.0,
        pieces=[m.PieceState(piece_id=0, colour="black", x_mm=40.0, y_mm=80.0, where="supply", slot=0)],
        gripper=m.GripperState(x_mm=0.0, y_mm=0.0, z_mm=20.0),
        hand=m.HandState(present=True, x_mm=200.0, y_mm=150.0),
    ),
    "WorldAction": m.WorldAction(action_id="a1", kind="place", colour="black", to_square=1),
    "FaultInjection": m.FaultInjection(kind="garbage", count=3),
    "ButtonLevel": m.ButtonLevel(pressed=True),
    "HumanSetup": m.HumanSetup(policy="mistake:1", misbehave=["two-pieces"], seed=3),
}
