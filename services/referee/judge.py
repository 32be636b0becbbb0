"""Judging a stable observation of the board against the logical board (pure functions).

Boards are 9-character strings, row by row ("X" black, "O" white, "." empty); squares on the bus are
1..9. :func:`judge` says what the person did after pressing the button; :func:`analyse_placement` says
what became of a placement by the device that vision did not confirm.

The judging rules (SPEC 2.2, issue 7), checked in this order:

1. a person's piece is missing from its square: ``person-piece-moved`` if a new person piece appeared
   elsewhere, else ``person-piece-removed`` (illegal);
2. more device-colour pieces appeared than device pieces went missing: ``wrong-colour`` (illegal);
3. two or more new person pieces on empty squares: ``two-pieces`` (illegal);
4. a person piece on a square where a device piece should be: ``occupied-square`` (illegal: the device
   cannot restore its piece there);
5. device pieces missing (cheating): each is restored, by a ``move`` from the square a device-colour piece
   appeared on, or a ``place`` of a fresh piece from the supply when it left the board; a new person piece
   on an empty square, if there is one, is the person's move and counts;
6. no new person piece: ``no-change`` (illegal);
7. otherwise exactly one new person piece on an empty square: the person's move.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

# The illegal kinds are the game's vocabulary (messages.game); the machine and the tests name them as
# ``judge.X`` too.
from messages.game import (
    NO_CHANGE,
    NO_ILLEGAL,
    OCCUPIED_SQUARE,
    PERSON_PIECE_MOVED,
    PERSON_PIECE_REMOVED,
    TWO_PIECES,
    WRONG_COLOUR,
    Illegal,
)

EMPTY: Final = "."
UNKNOWN: Final = "?"
BLACK: Final = "X"
WHITE: Final = "O"
EMPTY_BOARD: Final = EMPTY * 9


def colour_name(piece: str) -> str:
    """ "X" -> "black", "O" -> "white"."""
    return {BLACK: "black", WHITE: "white"}[piece]


def other_piece(piece: str) -> str:
    return WHITE if piece == BLACK else BLACK


@dataclass(frozen=True, slots=True)
class RestoreOp:
    """One command that puts a device piece back: ``kind`` "move" (from ``from_square``) or "place" (a
    fresh piece of ``colour`` from the supply), to ``to_square``; ``expected`` is the board vision should
    see once it is done."""

    kind: str
    to_square: int
    colour: str
    expected: str
    from_square: int | None = None


@dataclass(frozen=True, slots=True)
class Judgement:
    """What the person did. ``illegal`` is "" for a legal turn; ``move`` the person's square (1..9) or
    None; ``restores`` the commands that undo cheating, in order; ``reason`` one line for the log."""

    illegal: Illegal
    reason: str
    move: int | None = None
    restores: tuple[RestoreOp, ...] = ()

    @property
    def cheated(self) -> bool:
        return bool(self.restores)


def squares_where(board: str, piece: str) -> list[int]:
    """Squares (1..9) of ``board`` holding ``piece``."""
    return [i + 1 for i, c in enumerate(board) if c == piece]


def put(board: str, square: int, piece: str) -> str:
    """``board`` with ``piece`` on ``square`` (1..9)."""
    i = square - 1
    return board[:i] + piece + board[i + 1 :]


def judge(logical: str, observed: str, device: str) -> Judgement:
    """Compare the stable ``observed`` board with the ``logical`` board after the person's turn.

    ``device`` is the device's piece ("X" or "O"); the person plays the other. ``observed`` must be a
    complete reading (no "?"): the caller only judges such readings.
    """
    person = other_piece(device)
    device_missing = [s for s in squares_where(logical, device) if observed[s - 1] != device]
    device_extra = [s for s in squares_where(observed, device) if logical[s - 1] != device]
    person_missing = [s for s in squares_where(logical, person) if observed[s - 1] != person]
    person_extra = [s for s in squares_where(observed, person) if logical[s - 1] != person]
    new_on_empty = [s for s in person_extra if logical[s - 1] == EMPTY]
    on_device_square = [s for s in person_extra if logical[s - 1] == device]

    if person_missing:
        kind = PERSON_PIECE_MOVED if person_extra else PERSON_PIECE_REMOVED
        return Judgement(kind, f"your piece left square(s) {person_missing}: put it back")
    if len(device_extra) > len(device_missing):
        unpaired = device_extra[len(device_missing) :]
        return Judgement(
            WRONG_COLOUR,
            f"a {colour_name(device)} piece appeared on square(s) {unpaired}: you play {colour_name(person)}",
        )
    if len(new_on_empty) >= 2:
        return Judgement(TWO_PIECES, f"{len(new_on_empty)} new pieces on squares {new_on_empty}: play one")
    if on_device_square:
        return Judgement(
            OCCUPIED_SQUARE,
            f"your piece is on square(s) {on_device_square}, where the device's piece belongs",
        )
    move = new_on_empty[0] if new_on_empty else None
    if device_missing:
        restores: list[RestoreOp] = []
        physical = observed
        sources = list(device_extra)
        for target in device_missing:
            if sources:
                src = sources.pop(0)
                physical = put(put(physical, src, EMPTY), target, device)
                restores.append(RestoreOp("move", target, colour_name(device), physical, from_square=src))
            else:
                physical = put(physical, target, device)
                restores.append(RestoreOp("place", target, colour_name(device), physical))
        moved = ", ".join(
            f"{op.from_square}->{op.to_square}" if op.kind == "move" else f"supply->{op.to_square}"
            for op in restores
        )
        also = f"; your move on square {move} counts" if move is not None else "; you still have to move"
        return Judgement(
            "", f"device piece(s) moved or removed, restoring {moved}{also}", move, tuple(restores)
        )
    if move is None:
        return Judgement(NO_CHANGE, "nothing changed on the board: make a move, then press the button")
    return Judgement(NO_ILLEGAL, f"your move on square {move}", move)


@dataclass(frozen=True, slots=True)
class PlacementAnalysis:
    """What became of a placement: ``kind`` is "confirmed", "landed-elsewhere" (a ``move`` from
    ``from_square`` fixes it), "missing" (a fresh ``place`` fixes it) or "unexplained" (a person must fix
    the board); ``reason`` is one line for the log."""

    kind: str
    reason: str
    from_square: int | None = None


def analyse_placement(expected: str, observed: str, square: int, piece: str) -> PlacementAnalysis:
    """Compare the board vision sees after a placement of ``piece`` on ``square`` with ``expected``."""
    if observed == expected:
        return PlacementAnalysis("confirmed", f"square {square} holds the piece")
    diffs = [i + 1 for i in range(9) if observed[i] != expected[i]]
    if diffs == [square] and observed[square - 1] == EMPTY:
        return PlacementAnalysis("missing", f"square {square} is empty and the piece is not on the board")
    if len(diffs) == 2 and square in diffs and observed[square - 1] == EMPTY:
        (other,) = [s for s in diffs if s != square]
        if observed[other - 1] == piece and expected[other - 1] == EMPTY:
            return PlacementAnalysis(
                "landed-elsewhere", f"the piece landed on square {other} instead of {square}", other
            )
    return PlacementAnalysis(
        "unexplained", f"the board differs from the expected {expected} at squares {diffs}: fix it by hand"
    )
