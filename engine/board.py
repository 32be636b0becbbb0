"""The board: an immutable m x n position with k in a row, stored as two bit masks.

Square ``i`` is bit ``i`` of a mask; squares run row by row from the top left, so on the default 3 x 3 board::

    0 1 2        people number them   1 2 3
    3 4 5        (as on a phone         4 5 6
    6 7 8         keypad)               7 8 9

X is black and always moves first; O is white. The compact text form is one character per square, row by
row: ``'X'``, ``'O'`` or ``'.'`` (``'X...O....'``).

>>> board = Board().play(4).play(0)
>>> str(board)
'O...X....'
>>> board
Board('O...X....')
>>> board.to_move(), board.legal_moves()
('X', (1, 2, 3, 5, 6, 7, 8))
>>> Board('XXX.OO...').winner()
'X'
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final, Literal

from .errors import GameOverError, IllegalMoveError, InvalidBoardError

Player = Literal["X", "O"]
"""A side: ``"X"`` (black, moves first) or ``"O"`` (white)."""

Square = int
"""A square's index, ``0 .. rows*cols - 1``, row by row from the top left."""

X: Final = "X"
O: Final = "O"  # noqa: E741 - the game's own name for white
BLACK: Final = X
WHITE: Final = O
EMPTY_CHAR: Final = "."

#: The default board: 3 x 3, three in a row.
DEFAULT_ROWS: Final = 3
DEFAULT_COLS: Final = 3
DEFAULT_K: Final = 3

#: Largest side accepted; 32 x 32 is far beyond any game this engine is meant for (gomoku is 15 x 15).
MAX_SIDE: Final = 32

#: Masks with at most this many squares get a precomputed "has a line" table (512 entries for 3 x 3).
_LINE_TABLE_MAX_CELLS: Final = 9

#: Characters ignored by :meth:`Board.from_string`, so ``'X../.O./...'`` and multi-line text also parse.
_SEPARATORS: Final = frozenset(" \t\r\n/|")


def other(player: Player) -> Player:
    """The opponent of ``player``."""
    return O if player == X else X


def square_number(square: Square) -> int:
    """The number people use for ``square``: 1-based (``0 -> 1``, the centre ``4 -> 5`` on 3 x 3)."""
    return square + 1


def square_from_number(number: int, cells: int = DEFAULT_ROWS * DEFAULT_COLS) -> Square:
    """The square index of a person's square number ``1 .. cells``.

    :raises IllegalMoveError: if ``number`` is not an integer in ``1 .. cells``.
    """
    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= cells:
        raise IllegalMoveError(f"square number must be an integer 1..{cells}, got {number!r}")
    return number - 1


class Geometry:
    """The shape of a game: ``rows`` x ``cols`` squares, ``k`` in a row wins. Shared, immutable.

    Get one with :func:`geometry`; instances are cached, so ``is`` comparison is valid.
    """

    __slots__ = (
        "_line_table",
        "cells",
        "cols",
        "full",
        "k",
        "line_squares",
        "lines",
        "lines_through",
        "rows",
        "square_weight",
    )

    rows: int
    cols: int
    k: int
    #: number of squares
    cells: int
    #: mask with every square set
    full: int
    #: every winning line as a mask, sorted
    lines: tuple[int, ...]
    #: each line's squares, in the same order as :attr:`lines`
    line_squares: tuple[tuple[Square, ...], ...]
    #: for each square, the masks of the lines through it
    lines_through: tuple[tuple[int, ...], ...]
    #: for each square, how many lines pass through it (the centre of 3 x 3: 4, corners 3, edges 2)
    square_weight: tuple[int, ...]

    def __init__(self, rows: int, cols: int, k: int) -> None:
        for name, value in (("rows", rows), ("cols", cols), ("k", k)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise InvalidBoardError(f"{name} must be an integer, got {value!r}")
        if not (1 <= rows <= MAX_SIDE and 1 <= cols <= MAX_SIDE):
            raise InvalidBoardError(f"board must be 1..{MAX_SIDE} squares a side, got {rows} x {cols}")
        if not 1 <= k <= max(rows, cols):
            raise InvalidBoardError(f"k must be 1..{max(rows, cols)} on a {rows} x {cols} board, got {k}")
        self.rows, self.cols, self.k = rows, cols, k
        self.cells = rows * cols
        self.full = (1 << self.cells) - 1
        segments: set[tuple[Square, ...]] = set()
        for r in range(rows):
            for c in range(cols):
                for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                    end_r, end_c = r + dr * (k - 1), c + dc * (k - 1)
                    if 0 <= end_r < rows and 0 <= end_c < cols:
                        segments.add(tuple((r + dr * i) * cols + c + dc * i for i in range(k)))
        ordered = sorted(segments)
        self.line_squares = tuple(ordered)
        self.lines = tuple(sum(1 << s for s in seg) for seg in ordered)
        self.lines_through = tuple(
            tuple(mask for mask in self.lines if mask >> sq & 1) for sq in range(self.cells)
        )
        self.square_weight = tuple(len(through) for through in self.lines_through)
        self._line_table: tuple[bool, ...] | None = None
        if self.cells <= _LINE_TABLE_MAX_CELLS:
            self._line_table = tuple(
                any(mask & line == line for line in self.lines) for mask in range(1 << self.cells)
            )

    def has_line(self, mask: int) -> bool:
        """Whether the squares in ``mask`` contain a whole winning line."""
        if self._line_table is not None:
            return self._line_table[mask]
        return any(mask & line == line for line in self.lines)

    def winning_lines(self, mask: int) -> tuple[tuple[Square, ...], ...]:
        """The squares of every winning line fully inside ``mask``."""
        return tuple(
            sq for line, sq in zip(self.lines, self.line_squares, strict=True) if mask & line == line
        )

    @property
    def is_default(self) -> bool:
        """Whether this is 3 x 3 with three in a row."""
        return (self.rows, self.cols, self.k) == (DEFAULT_ROWS, DEFAULT_COLS, DEFAULT_K)

    def __repr__(self) -> str:
        return f"geometry({self.rows}, {self.cols}, {self.k})"


def geometry(rows: int = DEFAULT_ROWS, cols: int = DEFAULT_COLS, k: int = DEFAULT_K) -> Geometry:
    """The (cached) :class:`Geometry` for ``rows`` x ``cols``, ``k`` in a row: one instance per shape.

    :raises InvalidBoardError: on sizes outside ``1..MAX_SIDE`` or ``k`` longer than both sides.
    """
    return _geometry(rows, cols, k)


@functools.cache
def _geometry(rows: int, cols: int, k: int) -> Geometry:
    # Always called positionally, so the cache holds one instance per shape (`is` comparisons are valid).
    return Geometry(rows, cols, k)


GEOMETRY_3X3: Final = geometry()


def _popcount(mask: int) -> int:
    return mask.bit_count()


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a finished game ended."""

    #: the side that made k in a row, or None for a draw (a full board)
    winner: Player | None
    #: the winner's completed lines (squares), empty for a draw
    lines: tuple[tuple[Square, ...], ...] = ()

    @property
    def is_draw(self) -> bool:
        """Whether the game ended with a full board and no winner."""
        return self.winner is None

    @property
    def value(self) -> int:
        """The result from X's (black's) point of view: +1 X won, -1 O won, 0 a draw."""
        return {X: 1, O: -1, None: 0}[self.winner]

    def result(self) -> str:
        """``'1-0'`` (X won), ``'0-1'`` (O won) or ``'1/2-1/2'``, as in game records."""
        return {X: "1-0", O: "0-1", None: "1/2-1/2"}[self.winner]


class Board:
    """An immutable position on an m x n board with k in a row; a hashable value.

    Construct from text (``Board('X...O....')``), empty (``Board()``), or by playing moves
    (:meth:`play` returns a new board and leaves this one unchanged).

    By default the text must describe a position reachable in a legal game (X moves first, play stops at the
    first k in a row); pass ``validate=False`` to :meth:`from_string` to hold any pattern of pieces, for
    example an unreliable camera observation, and check it later with :meth:`is_valid`.

    :raises InvalidBoardError: from the constructor on bad text or an unreachable position.
    """

    __slots__ = ("_geometry", "_o", "_x")

    _geometry: Geometry
    _x: int
    _o: int

    def __init__(
        self,
        text: str | None = None,
        *,
        rows: int = DEFAULT_ROWS,
        cols: int = DEFAULT_COLS,
        k: int = DEFAULT_K,
    ) -> None:
        geo = geometry(rows, cols, k)
        x, o = (0, 0) if text is None else _parse(text, geo)
        self._geometry, self._x, self._o = geo, x, o
        if text is not None:
            self.validate()

    # ----------------------------------------------------------------------------------------- construction
    @classmethod
    def from_string(
        cls,
        text: str,
        *,
        rows: int = DEFAULT_ROWS,
        cols: int = DEFAULT_COLS,
        k: int = DEFAULT_K,
        validate: bool = True,
    ) -> Board:
        """A board from its text form: ``rows*cols`` characters ``X``, ``O``, ``.`` row by row.

        Lower case ``x``/``o`` are accepted; spaces, newlines, ``/`` and ``|`` are ignored, so
        ``'X../.O./...'`` parses too.

        :raises InvalidBoardError: on a wrong length or character, or (if ``validate``) an unreachable
            position.

        >>> Board.from_string('x../.o./...')
        Board('X...O....')
        """
        board = cls._from_masks(geometry(rows, cols, k), *_parse(text, geometry(rows, cols, k)))
        if validate:
            board.validate()
        return board

    @classmethod
    def empty(cls, rows: int = DEFAULT_ROWS, cols: int = DEFAULT_COLS, k: int = DEFAULT_K) -> Board:
        """The empty board of the given shape."""
        return cls._from_masks(geometry(rows, cols, k), 0, 0)

    @classmethod
    def from_masks(cls, x: int, o: int, geo: Geometry = GEOMETRY_3X3, *, validate: bool = True) -> Board:
        """A board from bit masks of X's and O's squares (bit ``i`` = square ``i``).

        :raises InvalidBoardError: on overlapping or out-of-range masks, or (if ``validate``) an unreachable
            position.
        """
        if x < 0 or o < 0 or (x | o) & ~geo.full or x & o:
            raise InvalidBoardError(f"masks {x:#x}, {o:#x} overlap or do not fit {geo.rows} x {geo.cols}")
        board = cls._from_masks(geo, x, o)
        if validate:
            board.validate()
        return board

    @classmethod
    def _from_masks(cls, geo: Geometry, x: int, o: int) -> Board:
        # The hot path (play, search, tables): no checks, no __init__.
        board = object.__new__(cls)
        board._geometry, board._x, board._o = geo, x, o
        return board

    # --------------------------------------------------------------------------------------------- accessors
    @property
    def geometry(self) -> Geometry:
        """The board's shape."""
        return self._geometry

    @property
    def rows(self) -> int:
        return self._geometry.rows

    @property
    def cols(self) -> int:
        return self._geometry.cols

    @property
    def k(self) -> int:
        return self._geometry.k

    @property
    def x_mask(self) -> int:
        """Bit mask of X's (black) squares."""
        return self._x

    @property
    def o_mask(self) -> int:
        """Bit mask of O's (white) squares."""
        return self._o

    @property
    def key(self) -> int:
        """A compact integer unique to this position within its geometry: ``x | o << cells``."""
        return self._x | self._o << self._geometry.cells

    @property
    def pieces(self) -> int:
        """Number of pieces on the board (plies played so far)."""
        return _popcount(self._x | self._o)

    def piece_at(self, square: Square) -> Player | None:
        """The piece on ``square``, or None.

        :raises IllegalMoveError: if ``square`` is not a square of this board.
        """
        self._check_square(square)
        if self._x >> square & 1:
            return X
        if self._o >> square & 1:
            return O
        return None

    def empty_squares(self) -> tuple[Square, ...]:
        """Every empty square, ascending (on a finished board too, unlike :meth:`legal_moves`)."""
        free = self._geometry.full & ~(self._x | self._o)
        return tuple(sq for sq in range(self._geometry.cells) if free >> sq & 1)

    # ------------------------------------------------------------------------------------------------- rules
    def to_move(self) -> Player:
        """The side whose turn it is: X when both have as many pieces, else O (also on a finished board)."""
        return X if _popcount(self._x) == _popcount(self._o) else O

    def winner(self) -> Player | None:
        """The side with k in a row, or None. (X is reported if an invalid board has both.)"""
        geo = self._geometry
        if geo.has_line(self._x):
            return X
        if geo.has_line(self._o):
            return O
        return None

    def is_full(self) -> bool:
        """Whether no square is empty."""
        return (self._x | self._o) == self._geometry.full

    def is_terminal(self) -> bool:
        """Whether the game is over: someone has k in a row or the board is full. Same as ``outcome() is not
        None``."""
        geo = self._geometry
        return (self._x | self._o) == geo.full or geo.has_line(self._x) or geo.has_line(self._o)

    def outcome(self) -> Outcome | None:
        """How the game ended, or None while it goes on."""
        win = self.winner()
        if win is not None:
            return Outcome(win, self._geometry.winning_lines(self._x if win == X else self._o))
        if self.is_full():
            return Outcome(None)
        return None

    def utility(self) -> int:
        """The position's value for X (black): +1 if X has a line, -1 if O has, else 0 (draw or running)."""
        win = self.winner()
        return 0 if win is None else 1 if win == X else -1

    def legal_moves(self) -> tuple[Square, ...]:
        """The empty squares, ascending; empty when the game is over."""
        if self.is_terminal():
            return ()
        return self.empty_squares()

    def play(self, square: Square) -> Board:
        """The board after the side to move puts a piece on ``square``; this board is unchanged.

        :raises IllegalMoveError: if ``square`` is not an integer square of this board, or is occupied.
        :raises GameOverError: if the game is already over.
        """
        self._check_square(square)
        bit = 1 << square
        if (self._x | self._o) & bit:
            raise IllegalMoveError(
                f"square {square} (number {square_number(square)}) is taken by {self.piece_at(square)}"
            )
        if self.is_terminal():
            raise GameOverError(f"the game is over ({self}): no more moves")
        if _popcount(self._x) == _popcount(self._o):
            return Board._from_masks(self._geometry, self._x | bit, self._o)
        return Board._from_masks(self._geometry, self._x, self._o | bit)

    def _check_square(self, square: object) -> None:
        cells = self._geometry.cells
        if isinstance(square, bool) or not isinstance(square, int):
            raise IllegalMoveError(f"a square must be an integer 0..{cells - 1}, got {square!r}")
        if not 0 <= square < cells:
            raise IllegalMoveError(f"square {square} is off the board: squares are 0..{cells - 1}")

    # -------------------------------------------------------------------------------------------- validity
    def problem(self) -> str | None:
        """Why this position cannot occur in a legal game, or None if it can."""
        geo = self._geometry
        nx, no = _popcount(self._x), _popcount(self._o)
        if nx not in (no, no + 1):
            return (
                f"X has {nx} pieces and O has {no}: X moves first, so X has as many pieces as O or one more"
            )
        x_wins, o_wins = geo.has_line(self._x), geo.has_line(self._o)
        if x_wins and o_wins:
            return "both X and O have a line: the game stops at the first one"
        if not (x_wins or o_wins):
            return None
        side, mask, wanted = (X, self._x, no + 1) if x_wins else (O, self._o, nx)
        if side == X and nx != wanted:
            return "X has a line but O has moved since: the game stops at X's winning move"
        if side == O and no != wanted:
            return "O has a line but X has moved since: the game stops at O's winning move"
        # The winning move is one square on every winning line; without it there must be no line left.
        common = mask
        for line in geo.lines:
            if mask & line == line:
                common &= line
        if not common:
            return f"{side}'s lines share no square: {side} cannot have completed them with one move"
        return None

    def is_valid(self) -> bool:
        """Whether this position can occur in a legal game from the empty board."""
        return self.problem() is None

    def validate(self) -> None:
        """:raises InvalidBoardError: if this position cannot occur in a legal game (says why)."""
        reason = self.problem()
        if reason is not None:
            raise InvalidBoardError(f"impossible position {self}: {reason}")

    # ------------------------------------------------------------------------------------------ conversions
    def __str__(self) -> str:
        x, o = self._x, self._o
        return "".join(
            X if x >> sq & 1 else O if o >> sq & 1 else EMPTY_CHAR for sq in range(self._geometry.cells)
        )

    def __repr__(self) -> str:
        geo = self._geometry
        if geo.is_default:
            return f"Board({str(self)!r})"
        return f"Board({str(self)!r}, rows={geo.rows}, cols={geo.cols}, k={geo.k})"

    def pretty(self, numbers: bool = True) -> str:
        """The board as a grid for people; empty squares show their number (1-based) if ``numbers``.

        >>> print(Board('X...O....').pretty())
         X | 2 | 3
        ---+---+---
         4 | O | 6
        ---+---+---
         7 | 8 | 9
        """
        geo = self._geometry
        width = len(str(geo.cells)) if numbers else 1
        text = str(self)
        cells = [(str(sq + 1) if numbers else " ") if ch == EMPTY_CHAR else ch for sq, ch in enumerate(text)]
        rows = [
            "|".join(f" {cell:>{width}} " for cell in cells[r * geo.cols : (r + 1) * geo.cols]).rstrip()
            for r in range(geo.rows)
        ]
        rule = "+".join("-" * (width + 2) for _ in range(geo.cols))
        return f"\n{rule}\n".join(rows)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Board):
            return NotImplemented
        return self._geometry is other._geometry and self._x == other._x and self._o == other._o

    def __hash__(self) -> int:
        return hash((self._geometry.rows, self._geometry.cols, self._geometry.k, self._x, self._o))

    def __copy__(self) -> Board:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> Board:
        return self

    def __reduce__(self) -> tuple[object, ...]:
        geo = self._geometry
        return (_unpickle, (geo.rows, geo.cols, geo.k, self._x, self._o))


def _unpickle(rows: int, cols: int, k: int, x: int, o: int) -> Board:
    return Board._from_masks(geometry(rows, cols, k), x, o)


def _parse(text: str, geo: Geometry) -> tuple[int, int]:
    if not isinstance(text, str):
        raise InvalidBoardError(f"board text must be a str, got {type(text).__name__}")
    chars = [ch for ch in text if ch not in _SEPARATORS]
    if len(chars) != geo.cells:
        raise InvalidBoardError(
            f"board text {text!r} has {len(chars)} squares; a {geo.rows} x {geo.cols} board needs "
            f"{geo.cells} characters 'X', 'O' or '.' row by row"
        )
    x = o = 0
    for sq, ch in enumerate(chars):
        if ch in "Xx":
            x |= 1 << sq
        elif ch in "Oo":
            o |= 1 << sq
        elif ch != EMPTY_CHAR:
            raise InvalidBoardError(f"board text {text!r}: bad character {ch!r}; use 'X', 'O' or '.'")
    return x, o


# Module-level rule functions for callers that prefer them to methods (the lead's API contract).


def to_move(board: Board) -> Player:
    """The side whose turn it is (see :meth:`Board.to_move`)."""
    return board.to_move()


def legal_moves(board: Board) -> tuple[Square, ...]:
    """The legal squares, ascending; empty when the game is over."""
    return board.legal_moves()


def play(board: Board, square: Square) -> Board:
    """The board after the side to move plays ``square`` (see :meth:`Board.play`)."""
    return board.play(square)


def winner(board: Board) -> Player | None:
    """The side with k in a row, or None."""
    return board.winner()


def is_terminal(board: Board) -> bool:
    """Whether the game is over."""
    return board.is_terminal()


def outcome(board: Board) -> Outcome | None:
    """How the game ended, or None while it goes on."""
    return board.outcome()


def utility(board: Board) -> int:
    """+1 if X has a line, -1 if O has, else 0 (see :meth:`Board.utility`)."""
    return board.utility()


def iter_boards(geo: Geometry = GEOMETRY_3X3) -> Iterator[Board]:
    """Every assignment of X, O and empty to the squares (3**cells boards, valid or not). Small boards only.

    :raises InvalidBoardError: if the board has more than 12 squares (over half a million boards).
    """
    if geo.cells > 12:
        raise InvalidBoardError(f"{geo.cells} squares: too many boards to list")
    for code in range(3**geo.cells):
        x = o = 0
        for sq in range(geo.cells):
            code, digit = divmod(code, 3)
            if digit == 1:
                x |= 1 << sq
            elif digit == 2:
                o |= 1 << sq
        yield Board._from_masks(geo, x, o)
