"""The physical truth of the simulated table: board, ten pieces, gripper and the person's hand.

A pure class, no I/O: the emulated controller moves the gripper and switches the magnet, the simulated
person acts through :meth:`World.apply`, and :meth:`World.snapshot` gives the ``sim.world`` message.
Units are table millimetres (docs/geometry.md): x right, y down as the camera sees the table, z up with
z = 0 where the magnet touches the top of a piece lying on the table.

Physics that matters to the rest of the stack:

- the magnet, when on and low enough (``z <= pick_height_mm``), picks up the piece whose centre is
  nearest the gripper within ``pick_tolerance_mm`` (the top one when pieces overlap), or nothing;
- switching the magnet off drops the held piece exactly where the gripper is: on a line, half off the
  board or on top of another piece, it stays there (a later piece lies on top: ``layer`` grows);
- there are always exactly ten pieces, each in exactly one place (:meth:`World.check` after every change).

Not thread-safe: the emulated controller and the service share one ``threading.Lock`` around it.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Final

from messages import Colour, GripperState, HandState, PieceState, WorldAction, WorldState
from services.common.config import SupplyColumn, TableConfig

from .config import SimWorldConfig

#: pieces per colour, and in all.
PIECES_PER_COLOUR: Final = 5
PIECE_COUNT: Final = 2 * PIECES_PER_COLOUR
COLOURS: Final[tuple[Colour, Colour]] = ("black", "white")
#: a piece this close to a supply slot's centre stands in that slot.
SUPPLY_TOLERANCE_MM: Final = 4.0
#: the 9-character board string: black, white, empty, and a square whose reading is ambiguous (a piece
#: touching its lines, or pieces of both colours in it).
BLACK_CHAR: Final = "X"
WHITE_CHAR: Final = "O"
EMPTY_CHAR: Final = "."
UNKNOWN_CHAR: Final = "?"


class WorldError(ValueError):
    """An action that cannot be done in this world (no such piece, square out of range, ...)."""


class ConservationError(AssertionError):
    """The world lost or duplicated a piece: a bug in the simulator, never a user error."""


@dataclass
class Piece:
    """One piece's mutable physical state."""

    piece_id: int
    colour: Colour
    x_mm: float
    y_mm: float
    #: the gripper holds it (its x, y follow the gripper).
    held: bool = False
    #: stacking order: a piece that landed later lies on top of earlier ones.
    layer: int = 0


@dataclass
class Gripper:
    x_mm: float
    y_mm: float
    z_mm: float
    magnet: bool = False
    holding: int | None = None


@dataclass
class Hand:
    present: bool = False
    x_mm: float = 0.0
    y_mm: float = 0.0
    angle_deg: float = 0.0


def supply_slot_xy(column: SupplyColumn, slot: int) -> tuple[float, float]:
    """Centre of ``slot`` (0-based) in a supply column."""
    return column.x_mm + slot * column.dx_mm, column.y_mm + slot * column.dy_mm


def initial_piece_xy(table: TableConfig, piece_id: int) -> tuple[Colour, float, float]:
    """Colour and home position of piece ``piece_id``: ids 0..4 are black in slots 0..4, 5..9 white."""
    colour = COLOURS[piece_id // PIECES_PER_COLOUR]
    column = table.black_supply if colour == "black" else table.white_supply
    x, y = supply_slot_xy(column, piece_id % PIECES_PER_COLOUR)
    return colour, x, y


class World:
    """The simulated table. Deterministic: the same config, seed and calls give the same states.

    :param sim: the ``[simworld]`` section (board pose and looks, tolerances, person's placement jitter).
    :param table: the ``[table]`` section (supply columns, travel).
    """

    def __init__(self, sim: SimWorldConfig, table: TableConfig) -> None:
        self.sim = sim
        self.table = table
        self.board_x_mm = sim.board_x_mm
        self.board_y_mm = sim.board_y_mm
        self.board_angle_deg = sim.board_angle_deg
        self.pitch_mm = sim.pitch_mm
        self.radius_mm = sim.piece_diameter_mm / 2.0
        self.rng = random.Random(sim.seed)
        self.pieces: list[Piece] = []
        for pid in range(PIECE_COUNT):
            colour, x, y = initial_piece_xy(table, pid)
            self.pieces.append(Piece(pid, colour, x, y))
        hx, hy, hz = [*sim.home_mm, 0.0, 0.0, 0.0][:3]
        self.gripper = Gripper(hx, hy, hz)
        self.hand = Hand()
        #: grows by one on every discrete change (pieces, magnet, hand, board); not on gripper motion.
        self.revision = 0
        self.sim_time_s = 0.0
        self._next_layer = 1
        self.check()

    # ----------------------------------------------------------------- geometry

    def board_frame(self, x: float, y: float) -> tuple[float, float]:
        """(x, y) on the table -> (u, v) in the board's own frame (inverse of docs/geometry.md)."""
        a = math.radians(self.board_angle_deg)
        dx, dy = x - self.board_x_mm, y - self.board_y_mm
        # x = cx + u cos a + v sin a ; y = cy - u sin a + v cos a  =>  rotate back
        u = dx * math.cos(a) - dy * math.sin(a)
        v = dx * math.sin(a) + dy * math.cos(a)
        return u, v

    def square_center(self, square: int) -> tuple[float, float]:
        """Table coordinates of square 1..9's centre. :raises WorldError: for another number."""
        if isinstance(square, bool) or not isinstance(square, int) or not 1 <= square <= 9:
            raise WorldError(f"square must be 1..9, got {square!r}")
        r, c = divmod(square - 1, 3)
        du, dv = (c - 1) * self.pitch_mm, (r - 1) * self.pitch_mm
        a = math.radians(self.board_angle_deg)
        return (
            self.board_x_mm + du * math.cos(a) + dv * math.sin(a),
            self.board_y_mm - du * math.sin(a) + dv * math.cos(a),
        )

    def square_at(self, x: float, y: float) -> int | None:
        """The square (1..9) whose area holds the point, or None (off the grid)."""
        u, v = self.board_frame(x, y)
        half = 1.5 * self.pitch_mm
        if not (-half <= u < half and -half <= v < half):
            return None
        c = min(2, int((u + half) // self.pitch_mm))
        r = min(2, int((v + half) // self.pitch_mm))
        return 3 * r + c + 1

    def squarely_on(self, piece: Piece, square: int) -> bool:
        """Whether ``piece`` lies inside ``square`` without touching any of the square's lines."""
        u, v = self.board_frame(piece.x_mm, piece.y_mm)
        r, c = divmod(square - 1, 3)
        cu, cv = (c - 1) * self.pitch_mm, (r - 1) * self.pitch_mm
        room = self.pitch_mm / 2.0 - self.sim.line_width_mm / 2.0 - self.radius_mm
        return abs(u - cu) <= room and abs(v - cv) <= room

    def on_plate(self, x: float, y: float) -> bool:
        u, v = self.board_frame(x, y)
        half = 1.5 * self.pitch_mm + self.sim.plate_margin_mm
        return abs(u) <= half and abs(v) <= half

    def supply_slot_at(self, x: float, y: float) -> int | None:
        """The supply slot (of either column) whose centre is within tolerance of the point."""
        for column in (self.table.black_supply, self.table.white_supply):
            for slot in range(column.slots):
                sx, sy = supply_slot_xy(column, slot)
                if math.hypot(x - sx, y - sy) <= SUPPLY_TOLERANCE_MM:
                    return slot
        return None

    # ----------------------------------------------------------------- queries

    def where(self, piece: Piece) -> str:
        """Where the piece is: "gripper", "supply", "board" (on the plate) or "table"."""
        if piece.held:
            return "gripper"
        if self.supply_slot_at(piece.x_mm, piece.y_mm) is not None:
            return "supply"
        if self.on_plate(piece.x_mm, piece.y_mm):
            return "board"
        return "table"

    def pieces_on(self, square: int) -> list[Piece]:
        """Pieces lying (not held) with their centre in ``square``'s area, top first."""
        found = [p for p in self.pieces if not p.held and self.square_at(p.x_mm, p.y_mm) == square]
        return sorted(found, key=lambda p: -p.layer)

    def board_string(self) -> str:
        """9 characters: 'X'/'O' for a square holding pieces of one colour squarely, '.' empty, '?' for
        a square with a piece touching its lines or pieces of both colours."""
        chars = []
        for square in range(1, 10):
            here = self.pieces_on(square)
            if not here:
                chars.append(EMPTY_CHAR)
            elif len({p.colour for p in here}) > 1 or not all(self.squarely_on(p, square) for p in here):
                chars.append(UNKNOWN_CHAR)
            else:
                chars.append(BLACK_CHAR if here[0].colour == "black" else WHITE_CHAR)
        return "".join(chars)

    def piece(self, piece_id: int) -> Piece:
        return self.pieces[piece_id]

    # ----------------------------------------------------------------- invariant

    def check(self) -> None:
        """The conservation invariant. :raises ConservationError: when it does not hold."""
        if len(self.pieces) != PIECE_COUNT:
            raise ConservationError(f"{len(self.pieces)} pieces in the world, expected {PIECE_COUNT}")
        if sorted(p.piece_id for p in self.pieces) != list(range(PIECE_COUNT)):
            raise ConservationError("piece ids are not 0..9 exactly once each")
        for colour in COLOURS:
            n = sum(1 for p in self.pieces if p.colour == colour)
            if n != PIECES_PER_COLOUR:
                raise ConservationError(f"{n} {colour} pieces, expected {PIECES_PER_COLOUR}")
        held = [p.piece_id for p in self.pieces if p.held]
        if len(held) > 1:
            raise ConservationError(f"the gripper holds several pieces: {held}")
        if (held[0] if held else None) != self.gripper.holding:
            raise ConservationError(f"gripper says it holds {self.gripper.holding}, pieces say {held}")
        for p in self.pieces:
            if not (math.isfinite(p.x_mm) and math.isfinite(p.y_mm)):
                raise ConservationError(f"piece {p.piece_id} has no position")

    def _changed(self) -> None:
        self.check()
        self.revision += 1

    # ----------------------------------------------------------------- gripper physics

    def move_gripper(self, x: float, y: float, z: float) -> None:
        """Put the gripper at (x, y, z); a held piece follows. Not a discrete change (no revision)."""
        g = self.gripper
        g.x_mm, g.y_mm, g.z_mm = x, y, z
        if g.holding is not None:
            held = self.pieces[g.holding]
            held.x_mm, held.y_mm = x, y

    def set_magnet(self, on: bool) -> None:
        """Switch the magnet: on grips the piece under it (if low enough), off drops the held piece."""
        g = self.gripper
        if g.magnet == on:
            if on:
                self.try_pick()
            return
        g.magnet = on
        if on:
            self.try_pick()
        else:
            self.release()
        self._changed()

    def try_pick(self) -> int | None:
        """With the magnet on, empty-handed and low enough: grip the nearest piece within tolerance (the
        top one among equals). Returns the piece id gripped now, or None."""
        g = self.gripper
        if not g.magnet or g.holding is not None or g.z_mm > self.sim.pick_height_mm:
            return None
        best: tuple[float, int, Piece] | None = None
        for p in self.pieces:
            d = math.hypot(p.x_mm - g.x_mm, p.y_mm - g.y_mm)
            if d <= self.sim.pick_tolerance_mm:
                key = (round(d, 6), -p.layer, p)
                if best is None or key[:2] < best[:2]:
                    best = key
        if best is None:
            return None
        piece = best[2]
        piece.held = True
        piece.x_mm, piece.y_mm = g.x_mm, g.y_mm
        g.holding = piece.piece_id
        self._changed()
        return piece.piece_id

    def release(self) -> int | None:
        """Drop the held piece where the gripper is (the magnet stays as it is). Returns its id or None."""
        g = self.gripper
        if g.holding is None:
            return None
        piece = self.pieces[g.holding]
        piece.held = False
        piece.x_mm, piece.y_mm = g.x_mm, g.y_mm
        piece.layer = self._take_layer()
        g.holding = None
        self._changed()
        return piece.piece_id

    def _take_layer(self) -> int:
        layer = self._next_layer
        self._next_layer += 1
        return layer

    # ----------------------------------------------------------------- the person's actions

    def apply(self, action: WorldAction) -> None:
        """Carry out the person's (or the operator's) ``action``.

        :raises WorldError: when it cannot be done (nothing on ``from_square``, no piece of that colour
            left, a missing field); the world is then unchanged.
        """
        match action.kind:
            case "place":
                if action.colour not in COLOURS:
                    raise WorldError(f"place needs a colour (black or white), got {action.colour!r}")
                self.place(action.colour, self._need_square(action.to_square, "to_square"))
            case "move":
                self.move(
                    self._need_square(action.from_square, "from_square"),
                    self._need_square(action.to_square, "to_square"),
                )
            case "remove":
                self.remove(self._need_square(action.from_square, "from_square"))
            case "hand":
                self.set_hand(action.present, action.to_square, action.angle_deg)
            case "board":
                self.set_board(action.x_mm, action.y_mm, action.angle_deg)
            case "reset":
                self.reset()
            case other:
                raise WorldError(f"unknown action kind {other!r}")

    @staticmethod
    def _need_square(value: int | None, name: str) -> int:
        if value is None or isinstance(value, bool) or not 1 <= value <= 9:
            raise WorldError(f"{name} must be a square 1..9, got {value!r}")
        return value

    def _person_piece(self, colour: Colour) -> Piece:
        """The piece the person takes: a loose piece of that colour lying on the table (one they took
        off the board earlier: a person picks up what they just put aside), else from the supply's last
        occupied slot downwards (the device takes from slot 0 upwards)."""
        loose = [p for p in self.pieces if p.colour == colour and self.where(p) == "table"]
        if loose:
            return max(loose, key=lambda p: p.layer)
        column = self.table.black_supply if colour == "black" else self.table.white_supply
        for slot in reversed(range(column.slots)):
            sx, sy = supply_slot_xy(column, slot)
            for p in self.pieces:
                if (
                    p.colour == colour
                    and not p.held
                    and math.hypot(p.x_mm - sx, p.y_mm - sy) <= SUPPLY_TOLERANCE_MM
                ):
                    return p
        raise WorldError(f"no {colour} piece left in the supply or on the table")

    def _put_down(self, piece: Piece, square: int) -> None:
        x, y = self.square_center(square)
        j = self.sim.place_jitter_mm
        if j > 0:
            x += self.rng.uniform(-j, j)
            y += self.rng.uniform(-j, j)
        piece.x_mm, piece.y_mm = x, y
        piece.layer = self._take_layer()

    def place(self, colour: Colour, square: int) -> int:
        """The person puts a ``colour`` piece on ``square`` (even an occupied one: it lands on top).
        Returns the piece's id."""
        self.square_center(square)  # validates
        piece = self._person_piece(colour)
        self._put_down(piece, square)
        self._changed()
        return piece.piece_id

    def move(self, from_square: int, to_square: int) -> int:
        """The person moves the top piece on ``from_square`` to ``to_square``. Returns its id."""
        here = self.pieces_on(from_square)
        if not here:
            raise WorldError(f"there is no piece on square {from_square} to move")
        self.square_center(to_square)
        self._put_down(here[0], to_square)
        self._changed()
        return here[0].piece_id

    def discard_spot(self, index: int) -> tuple[float, float]:
        return self.sim.discard_x_mm + index * self.sim.discard_dx_mm, self.sim.discard_y_mm

    def remove(self, from_square: int) -> int:
        """The person takes the top piece on ``from_square`` off the board and puts it back in its
        colour's supply column, in the highest free slot (where the person's hand goes first; for a
        device piece that is the slot the device has not reached yet); on a discard spot on the table
        when no slot is free. Returns the piece's id."""
        here = self.pieces_on(from_square)
        if not here:
            raise WorldError(f"there is no piece on square {from_square} to remove")
        piece = here[0]
        column = self.table.black_supply if piece.colour == "black" else self.table.white_supply
        spots = [supply_slot_xy(column, slot) for slot in reversed(range(column.slots))]
        spots += [self.discard_spot(index) for index in range(PIECE_COUNT)]
        for x, y in spots:
            if self._free(x, y, piece):
                break
        piece.x_mm, piece.y_mm = x, y
        piece.layer = self._take_layer()
        self._changed()
        return piece.piece_id

    def _free(self, x: float, y: float, moving: Piece) -> bool:
        """No other piece lies where ``moving`` would go."""
        return all(
            math.hypot(p.x_mm - x, p.y_mm - y) >= 2 * self.radius_mm
            for p in self.pieces
            if p is not moving and not p.held
        )

    def set_hand(self, present: bool, square: int | None = None, angle_deg: float | None = None) -> None:
        """Show the hand over ``square`` (or the board's centre), or withdraw it."""
        if present:
            x, y = self.square_center(square) if square is not None else (self.board_x_mm, self.board_y_mm)
            self.hand = Hand(True, x, y, angle_deg if angle_deg is not None else 0.0)
        else:
            self.hand = Hand(False, self.hand.x_mm, self.hand.y_mm, self.hand.angle_deg)
        self._changed()

    def set_board(self, x: float | None, y: float | None, angle_deg: float | None) -> None:
        """Turn or shift the board (the operator, task 3). Pieces on the board move with it; the angle
        must lie within +-45 degrees."""
        angle = self.board_angle_deg if angle_deg is None else angle_deg
        if not -45.0 <= angle <= 45.0:
            raise WorldError(f"board angle must be within +-45 degrees, got {angle}")
        on_board = [(p, self.board_frame(p.x_mm, p.y_mm)) for p in self.pieces if self.where(p) == "board"]
        self.board_x_mm = self.board_x_mm if x is None else x
        self.board_y_mm = self.board_y_mm if y is None else y
        self.board_angle_deg = angle
        a = math.radians(angle)
        for p, (u, v) in on_board:
            p.x_mm = self.board_x_mm + u * math.cos(a) + v * math.sin(a)
            p.y_mm = self.board_y_mm - u * math.sin(a) + v * math.cos(a)
        self._changed()

    def reset(self) -> None:
        """Every piece back in its own supply slot; the gripper lets go (the magnet stays as it is)."""
        for p in self.pieces:
            _, p.x_mm, p.y_mm = initial_piece_xy(self.table, p.piece_id)
            p.held = False
            p.layer = 0
        self.gripper.holding = None
        self.hand = Hand()
        self._changed()

    # ----------------------------------------------------------------- messages

    def snapshot(self) -> WorldState:
        """The world as a ``sim.world`` message."""
        pieces = []
        for p in self.pieces:
            where = self.where(p)
            pieces.append(
                PieceState(
                    piece_id=p.piece_id,
                    colour=p.colour,
                    x_mm=round(p.x_mm, 3),
                    y_mm=round(p.y_mm, 3),
                    where=where,
                    square=None if p.held else self.square_at(p.x_mm, p.y_mm),
                    slot=self.supply_slot_at(p.x_mm, p.y_mm) if where == "supply" else None,
                    layer=p.layer,
                )
            )
        g = self.gripper
        h = self.hand
        return WorldState(
            board_center_mm=(self.board_x_mm, self.board_y_mm),
            board_angle_deg=self.board_angle_deg,
            pitch_mm=self.pitch_mm,
            pieces=pieces,
            gripper=GripperState(
                x_mm=round(g.x_mm, 3),
                y_mm=round(g.y_mm, 3),
                z_mm=round(g.z_mm, 3),
                magnet=g.magnet,
                holding=g.holding,
            ),
            hand=HandState(present=h.present, x_mm=h.x_mm, y_mm=h.y_mm, angle_deg=h.angle_deg),
            board=self.board_string(),
            sim_time_s=round(self.sim_time_s, 4),
            line_width_mm=self.sim.line_width_mm,
            plate_margin_mm=self.sim.plate_margin_mm,
            board_colour=_bgr(self.sim.board_colour),
            line_colour=_bgr(self.sim.line_colour),
            piece_diameter_mm=self.sim.piece_diameter_mm,
            revision=self.revision,
        )

    def load_state(self, state: WorldState) -> None:
        """Take board pose, pieces (by id), gripper and hand from ``state`` (a world file).

        :raises WorldError: if it does not hold the ten pieces 0..9 with the right colours.
        """
        ids = sorted(p.piece_id for p in state.pieces)
        if ids != list(range(PIECE_COUNT)):
            raise WorldError(f"a world needs pieces 0..9 exactly once each, got ids {ids}")
        for ps in state.pieces:
            colour, _, _ = initial_piece_xy(self.table, ps.piece_id)
            if ps.colour != colour:
                raise WorldError(f"piece {ps.piece_id} must be {colour} (ids 0..4 black, 5..9 white)")
        held = [ps.piece_id for ps in state.pieces if ps.where == "gripper"]
        if len(held) > 1 or (held[0] if held else None) != state.gripper.holding:
            raise WorldError("the gripper's 'holding' must name the one piece whose 'where' is 'gripper'")
        self.board_x_mm, self.board_y_mm = state.board_center_mm
        self.board_angle_deg = state.board_angle_deg
        self.pitch_mm = state.pitch_mm
        for ps in state.pieces:
            p = self.pieces[ps.piece_id]
            p.x_mm, p.y_mm, p.held, p.layer = ps.x_mm, ps.y_mm, ps.where == "gripper", ps.layer
        self._next_layer = max(p.layer for p in self.pieces) + 1
        g = state.gripper
        self.gripper = Gripper(g.x_mm, g.y_mm, g.z_mm, g.magnet, g.holding)
        h = state.hand
        self.hand = Hand(h.present, h.x_mm, h.y_mm, h.angle_deg)
        self._changed()


def _bgr(values: list[int]) -> tuple[int, int, int]:
    b, g, r = [*values, 0, 0, 0][:3]
    return int(b), int(g), int(r)
