"""What vision sees: the board's pose, each square's state, the supply pieces, occlusion and stability."""

from __future__ import annotations

import msgspec

from .base import Colour, Message, Point, SquareState


class BoardPose(msgspec.Struct, frozen=True, kw_only=True):
    """Where the board is in the image.

    ``corners_px`` are the outer corners of the grid in the order top-left, top-right, bottom-right,
    bottom-left *of the board* (square 1 is at the first corner), after undoing the rotation.
    ``angle_deg`` is the signed rotation in (-45, 45], counter-clockwise positive as seen in the image.
    ``homography`` maps image pixels to the canonical top view (row-major 3x3) in which the grid spans
    (0, 0)-(3, 3) in square units; square n's centre is at ((n-1) % 3 + 0.5, (n-1) // 3 + 0.5).
    """

    center_px: Point
    angle_deg: float
    corners_px: tuple[Point, Point, Point, Point]
    homography: tuple[float, ...] = ()


class SquareObservation(msgspec.Struct, frozen=True, kw_only=True):
    """One square as seen: its number 1..9, its state and how sure vision is (0..1)."""

    number: int
    state: SquareState
    confidence: float
    center_px: Point | None = None


class SupplyPiece(msgspec.Struct, frozen=True, kw_only=True):
    """A piece seen off the grid (in a supply column or lying on the table)."""

    colour: Colour
    center_px: Point
    radius_px: float = 0.0


class BoardObservation(Message, frozen=True):
    """Vision's reading of one frame. Published for every frame on ``vision.board``; when the stable
    reading changes it is published again on ``vision.stable`` with ``stable=True``.

    Every frame that agrees with the stable reading is published on ``vision.board`` with
    ``stable=True``: that is the per-frame refresh a consumer waiting for a view captured after some
    moment (the referee after a button press) takes, without waiting for ``vision.stable``'s repeat.

    ``board`` is the compact form: 9 characters row by row, "X" black, "O" white, "." empty,
    "?" unknown (occluded or not confident).
    """

    frame_id: int
    found: bool
    board: str = "?????????"
    pose: BoardPose | None = None
    squares: list[SquareObservation] = []
    supply: list[SupplyPiece] = []
    occluded: bool = False
    #: fraction of the grid covered by something that is not the board or a piece.
    occlusion: float = 0.0
    stable: bool = False
    #: how many consecutive agreeing, unoccluded frames stand behind this reading.
    agreeing_frames: int = 0
    #: CLOCK_MONOTONIC nanoseconds when this frame was captured (the camera's ``capture_ns``); it is
    #: also when the agreeing window behind this reading ends.
    capture_ns: int = 0
    #: when the window's first frame was captured (CLOCK_MONOTONIC ns): the ``agreeing_frames`` frames
    #: captured from ``window_start_ns`` to ``capture_ns`` are all usable and read this board. 0 when
    #: no window stands behind this frame (unusable) or the producer does not know.
    window_start_ns: int = 0
    processing_ms: float = 0.0
    #: a short word when something is wrong: "no-board", "occluded", "jump", "low-confidence".
    problem: str = ""
