"""Worlds for the simulated camera: build a WorldState from a board string (for tests), and read the
documented WORLD.json format (docs/world-format.md) used by ``sanzi render``.

Square geometry follows docs/geometry.md: square n (row r = (n-1)//3, column c = (n-1)%3) has its
centre at board offset ((c-1)*pitch, (r-1)*pitch), rotated by the board angle a (CCW as seen from the
camera, y down): x = cx + dx cos a + dy sin a, y = cy - dx sin a + dy cos a.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Final, Literal

import msgspec
import numpy as np

from messages import Colour, GripperState, HandState, PieceState, WorldState
from services.common.config import TableConfig

#: pieces of each colour in the world.
PIECES_PER_COLOUR: Final = 5
_BOARD_CHARS: Final = {"X": "black", "O": "white", ".": None}
_SYMBOL: Final = {"black": "X", "white": "O"}

#: where the gripper rests when a world does not say (the machine's home corner, raised).
DEFAULT_GRIPPER: Final = GripperState(x_mm=0.0, y_mm=0.0, z_mm=40.0)


class WorldFormatError(ValueError):
    """A board string or a WORLD.json that does not describe a valid world; the message says why."""


def square_centre(
    square: int, center: tuple[float, float], angle_deg: float, pitch_mm: float
) -> tuple[float, float]:
    """The table position (mm) of square ``square`` (1..9) of a board at ``center`` turned ``angle_deg``.

    :raises WorldFormatError: for a square outside 1..9.
    """
    if not 1 <= square <= 9:
        raise WorldFormatError(f"square must be 1..9, got {square}")
    r, c = divmod(square - 1, 3)
    return board_to_table((c - 1) * pitch_mm, (r - 1) * pitch_mm, center, angle_deg)


def board_to_table(
    dx: float, dy: float, center: tuple[float, float], angle_deg: float
) -> tuple[float, float]:
    """A point at offset (dx, dy) in the board's own frame, in table millimetres."""
    a = math.radians(angle_deg)
    ca, sa = math.cos(a), math.sin(a)
    return (center[0] + dx * ca + dy * sa, center[1] - dx * sa + dy * ca)


def table_to_board(x: float, y: float, center: tuple[float, float], angle_deg: float) -> tuple[float, float]:
    """The inverse of :func:`board_to_table`."""
    a = math.radians(angle_deg)
    ca, sa = math.cos(a), math.sin(a)
    ex, ey = x - center[0], y - center[1]
    return (ex * ca - ey * sa, ex * sa + ey * ca)


def square_at(
    x: float, y: float, center: tuple[float, float], angle_deg: float, pitch_mm: float
) -> int | None:
    """The square (1..9) whose area holds the point, or None outside the 3x3 grid."""
    dx, dy = table_to_board(x, y, center, angle_deg)
    c = math.floor(dx / pitch_mm + 1.5)
    r = math.floor(dy / pitch_mm + 1.5)
    if 0 <= r <= 2 and 0 <= c <= 2:
        return r * 3 + c + 1
    return None


def supply_position(table: TableConfig, colour: Colour, slot: int) -> tuple[float, float]:
    """The table position of supply slot ``slot`` of ``colour``'s column.

    :raises WorldFormatError: for a slot outside the column.
    """
    column = table.black_supply if colour == "black" else table.white_supply
    if not 0 <= slot < column.slots:
        raise WorldFormatError(f"{colour} supply has slots 0..{column.slots - 1}, got {slot}")
    return (column.x_mm + slot * column.dx_mm, column.y_mm + slot * column.dy_mm)


def _check_board(board: str) -> str:
    if len(board) != 9 or any(ch not in _BOARD_CHARS for ch in board):
        raise WorldFormatError(
            f"board must be 9 characters of 'X' (black), 'O' (white), '.' (empty), got {board!r}"
        )
    for symbol in "XO":
        if board.count(symbol) > PIECES_PER_COLOUR:
            raise WorldFormatError(
                f"board {board!r} has {board.count(symbol)} {symbol!r} pieces; "
                f"there are only {PIECES_PER_COLOUR}"
            )
    return board


def world_from_board(
    board: str,
    angle_deg: float = 0.0,
    center: tuple[float, float] = (200.0, 150.0),
    *,
    pitch_mm: float = 40.0,
    table: TableConfig | None = None,
    hand: HandState | None = None,
    gripper: GripperState | None = None,
    device_colour: Colour | None = None,
    jitter_mm: float = 0.0,
    rng: np.random.Generator | None = None,
    line_width_mm: float = 2.5,
    plate_margin_mm: float = 12.0,
    board_colour: tuple[int, int, int] = (205, 210, 200),
    line_colour: tuple[int, int, int] = (35, 35, 35),
    piece_diameter_mm: float = 22.0,
    sim_time_s: float = 0.0,
) -> WorldState:
    """A world with the pieces of ``board`` (9 chars, 'X' black, 'O' white, '.' empty, square 1 first) on
    their squares and every other piece in its supply column, 5 of each colour in all.

    Supply slots empty the way the players take from them (docs/geometry.md): the device's colour from
    slot 0 upwards, the person's from the last slot downwards. With ``device_colour=None`` both columns
    empty from slot 0 upwards. ``jitter_mm`` > 0 moves each piece on the board by a uniform random
    offset of up to that many mm in x and y (needs ``rng``), as a person's placement would.

    Piece ids: black 0..4, white 5..9, in slot order.

    :raises WorldFormatError: for a bad board string (wrong length or characters, more than 5 of a colour).
    """
    _check_board(board)
    table = table or TableConfig()
    if jitter_mm > 0 and rng is None:
        raise WorldFormatError("jitter_mm needs an rng")
    pieces: list[PieceState] = []
    for base_id, colour in ((0, "black"), (PIECES_PER_COLOUR, "white")):
        symbol = _SYMBOL[colour]
        squares = [i + 1 for i, ch in enumerate(board) if ch == symbol]
        column = table.black_supply if colour == "black" else table.white_supply
        remaining = PIECES_PER_COLOUR - len(squares)
        if remaining > column.slots:
            raise WorldFormatError(f"{colour} supply has {column.slots} slots, {remaining} pieces to hold")
        taken_from_top = device_colour is not None and colour != device_colour
        slots = (
            list(range(remaining)) if taken_from_top else list(range(column.slots - remaining, column.slots))
        )
        pid = base_id
        for slot in slots:
            x, y = supply_position(table, colour, slot)  # type: ignore[arg-type]
            pieces.append(PieceState(piece_id=pid, colour=colour, x_mm=x, y_mm=y, where="supply", slot=slot))  # type: ignore[arg-type]
            pid += 1
        for square in squares:
            x, y = square_centre(square, center, angle_deg, pitch_mm)
            if jitter_mm > 0:
                assert rng is not None
                x += float(rng.uniform(-jitter_mm, jitter_mm))
                y += float(rng.uniform(-jitter_mm, jitter_mm))
            pieces.append(
                PieceState(
                    piece_id=pid,
                    colour=colour,  # type: ignore[arg-type]
                    x_mm=x,
                    y_mm=y,
                    where="board",
                    square=square_at(x, y, center, angle_deg, pitch_mm),
                )
            )
            pid += 1
    return WorldState(
        board_center_mm=(float(center[0]), float(center[1])),
        board_angle_deg=float(angle_deg),
        pitch_mm=pitch_mm,
        pieces=pieces,
        gripper=gripper or DEFAULT_GRIPPER,
        hand=hand or HandState(),
        board=board,
        sim_time_s=sim_time_s,
        line_width_mm=line_width_mm,
        plate_margin_mm=plate_margin_mm,
        board_colour=board_colour,
        line_colour=line_colour,
        piece_diameter_mm=piece_diameter_mm,
    )


def board_of(world: WorldState) -> str:
    """The board string the pieces lying on squares make (for checking a world file's pieces)."""
    cells = ["."] * 9
    for p in world.pieces:
        if p.where == "board":
            sq = square_at(p.x_mm, p.y_mm, world.board_center_mm, world.board_angle_deg, world.pitch_mm)
            if sq is not None:
                cells[sq - 1] = _SYMBOL[p.colour]
    return "".join(cells)


# -- WORLD.json ----------------------------------------------------------------------------------------


class PieceSpec(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """One piece in a WORLD.json: a colour and either a square, a supply slot, or coordinates."""

    colour: Literal["black", "white"]
    x_mm: float | None = None
    y_mm: float | None = None
    square: int | None = None
    slot: int | None = None
    #: "board", "supply", "table" or "gripper"; inferred when absent.
    where: Literal["board", "supply", "table", "gripper"] | None = None
    piece_id: int | None = None
    #: stacking order among overlapping pieces (higher lies on top).
    layer: int = 0


class WorldFile(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """The WORLD.json format (docs/world-format.md): WorldState's fields, each with a default, plus the
    compact ``board`` string."""

    board_center_mm: tuple[float, float] = (200.0, 150.0)
    board_angle_deg: float = 0.0
    pitch_mm: float = 40.0
    board: str | None = None
    pieces: list[PieceSpec] | None = None
    #: with ``board``: put the pieces not on the board in their supply columns.
    fill_supplies: bool = True
    device_colour: Literal["black", "white"] | None = None
    gripper: GripperState = DEFAULT_GRIPPER
    hand: HandState = HandState()
    sim_time_s: float = 0.0
    line_width_mm: float = 2.5
    plate_margin_mm: float = 12.0
    board_colour: tuple[int, int, int] = (205, 210, 200)
    line_colour: tuple[int, int, int] = (35, 35, 35)
    piece_diameter_mm: float = 22.0
    revision: int = 0
    #: ignored (lets a WorldState published on the bus, tag included, be read back as a world file).
    type: str | None = None
    actions_seen: list[str] = []
    #: ignored too: the simulator's speed is its own setting (``simworld.speed``), not the world's.
    speed: float = 0.0


def _piece_from_spec(
    i: int, spec: PieceSpec, wf: WorldFile, table: TableConfig, gripper: GripperState
) -> PieceState:
    # Coordinates win over square/slot, so that a WorldState taken from the bus reads back unchanged.
    where = spec.where
    centre, angle, pitch = wf.board_center_mm, wf.board_angle_deg, wf.pitch_mm
    if (spec.x_mm is None) != (spec.y_mm is None):
        raise WorldFormatError(f"pieces[{i}]: give both x_mm and y_mm, or neither")
    if where == "gripper":
        x, y = gripper.x_mm, gripper.y_mm
    elif spec.x_mm is not None and spec.y_mm is not None:
        x, y = spec.x_mm, spec.y_mm
        if where is None:
            where = "board" if square_at(x, y, centre, angle, pitch) is not None else "table"
    elif spec.square is not None:
        try:
            x, y = square_centre(spec.square, centre, angle, pitch)
        except WorldFormatError as exc:
            raise WorldFormatError(f"pieces[{i}]: {exc}") from None
        where = where or "board"
    elif spec.slot is not None:
        try:
            x, y = supply_position(table, spec.colour, spec.slot)
        except WorldFormatError as exc:
            raise WorldFormatError(f"pieces[{i}]: {exc}") from None
        where = where or "supply"
    else:
        raise WorldFormatError(f"pieces[{i}]: give a square, a supply slot, or both x_mm and y_mm")
    return PieceState(
        piece_id=spec.piece_id if spec.piece_id is not None else i,
        colour=spec.colour,
        x_mm=float(x),
        y_mm=float(y),
        where=where,
        square=square_at(x, y, centre, angle, pitch) if where == "board" else None,
        slot=spec.slot if where == "supply" else None,
        layer=spec.layer,
    )


def world_from_file_data(data: bytes, table: TableConfig | None = None) -> WorldState:
    """Parse WORLD.json text into a WorldState.

    :raises WorldFormatError: naming the offending field.
    """
    table = table or TableConfig()
    try:
        wf = msgspec.json.decode(data, type=WorldFile)
    except msgspec.ValidationError as exc:
        raise WorldFormatError(f"invalid world: {exc}") from None
    except msgspec.DecodeError as exc:
        raise WorldFormatError(f"not valid JSON: {exc}") from None
    return world_from_file(wf, table)


def world_from_file(wf: WorldFile, table: TableConfig) -> WorldState:
    """A WorldState from a parsed :class:`WorldFile`. :raises WorldFormatError: for contradictions."""
    if not -90.0 <= wf.board_angle_deg <= 90.0:
        raise WorldFormatError(f"board_angle_deg must be within [-90, 90], got {wf.board_angle_deg}")
    if wf.pitch_mm <= 0 or wf.piece_diameter_mm <= 0 or wf.line_width_mm <= 0:
        raise WorldFormatError("pitch_mm, piece_diameter_mm and line_width_mm must be positive")
    for name in ("board_colour", "line_colour"):
        if any(not 0 <= c <= 255 for c in getattr(wf, name)):
            raise WorldFormatError(f"{name} must be three integers 0..255 (BGR)")
    appearance: dict[str, Any] = {
        "line_width_mm": wf.line_width_mm,
        "plate_margin_mm": wf.plate_margin_mm,
        "board_colour": wf.board_colour,
        "line_colour": wf.line_colour,
        "piece_diameter_mm": wf.piece_diameter_mm,
        "sim_time_s": wf.sim_time_s,
    }
    # With both, the pieces describe the world and board is ignored (a WorldState from the bus has both).
    if wf.board is not None and wf.pieces is None:
        world = world_from_board(
            wf.board,
            wf.board_angle_deg,
            wf.board_center_mm,
            pitch_mm=wf.pitch_mm,
            table=table,
            hand=wf.hand,
            gripper=wf.gripper,
            device_colour=wf.device_colour,
            **appearance,
        )
        if not wf.fill_supplies:
            world = msgspec.structs.replace(world, pieces=[p for p in world.pieces if p.where != "supply"])
        return world
    pieces = [_piece_from_spec(i, spec, wf, table, wf.gripper) for i, spec in enumerate(wf.pieces or [])]
    ids = [p.piece_id for p in pieces]
    if len(set(ids)) != len(ids):
        raise WorldFormatError(f"piece ids must be distinct, got {ids}")
    if sum(p.where == "gripper" for p in pieces) > 1:
        raise WorldFormatError("at most one piece can be in the gripper")
    held = next((p.piece_id for p in pieces if p.where == "gripper"), None)
    gripper = wf.gripper if held is None else msgspec.structs.replace(wf.gripper, holding=held, magnet=True)
    world = WorldState(
        board_center_mm=wf.board_center_mm,
        board_angle_deg=wf.board_angle_deg,
        pitch_mm=wf.pitch_mm,
        pieces=pieces,
        gripper=gripper,
        hand=wf.hand,
        revision=wf.revision,
        **appearance,
    )
    return msgspec.structs.replace(world, board=board_of(world))


def load_world(path: str | Path, table: TableConfig | None = None) -> WorldState:
    """Read a WORLD.json file. :raises WorldFormatError: naming the file and the problem."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise WorldFormatError(f"cannot read {p}: {exc.strerror}") from None
    try:
        return world_from_file_data(data, table)
    except WorldFormatError as exc:
        raise WorldFormatError(f"{p}: {exc}") from None
