"""The CS50 AI "tictactoe" API, on the engine.

A board is a list of three rows, each a list of three cells holding :data:`X`, :data:`O` or :data:`EMPTY`
(``None``); an action is a ``(row, col)`` tuple with ``row`` and ``col`` in ``0..2``. The functions behave as
the CS50 specification says, with the engine's perfect play behind :func:`minimax`:

>>> board = initial_state()
>>> player(board)
'X'
>>> board = result(board, (1, 1))
>>> board[1][1], player(board), len(actions(board))
('X', 'O', 8)
>>> minimax([[X, X, EMPTY], [O, O, EMPTY], [EMPTY, EMPTY, EMPTY]])
(0, 2)
>>> utility([[X, X, X], [O, O, EMPTY], [EMPTY, EMPTY, EMPTY]])
1

Differences from a textbook solution, all within the specification: :func:`result` raises
:class:`~engine.errors.IllegalMoveError` (a ``ValueError``) for an occupied cell or an index outside ``0..2``
(negatives included, since Python would otherwise index from the end); malformed boards raise
:class:`~engine.errors.InvalidBoardError`; :func:`minimax` answers from the complete table, picks the fastest
win (or slowest loss), and breaks ties by the lowest cell, so it is deterministic.
"""

from __future__ import annotations

from typing import Final

from . import table as _table
from .board import GEOMETRY_3X3, Board
from .errors import IllegalMoveError, InvalidBoardError

X: Final = "X"
O: Final = "O"  # noqa: E741 - the CS50 API's name
EMPTY: Final = None

SIZE: Final = 3

Cell = str | None
Action = tuple[int, int]


def initial_state() -> list[list[Cell]]:
    """The starting board: every cell empty."""
    return [[EMPTY] * SIZE for _ in range(SIZE)]


def _masks(board: list[list[Cell]]) -> tuple[int, int]:
    """X's and O's squares as bit masks (square = 3 * row + col).

    :raises InvalidBoardError: unless ``board`` is three lists of three cells, each X, O or EMPTY.
    """
    if not isinstance(board, list | tuple) or len(board) != SIZE:
        raise InvalidBoardError(f"a board is a list of {SIZE} rows, got {board!r}")
    x = o = 0
    for r, row in enumerate(board):
        if not isinstance(row, list | tuple) or len(row) != SIZE:
            raise InvalidBoardError(f"row {r} must be a list of {SIZE} cells, got {row!r}")
        for c, cell in enumerate(row):
            if cell == X:
                x |= 1 << (SIZE * r + c)
            elif cell == O:
                o |= 1 << (SIZE * r + c)
            elif cell is not EMPTY:
                raise InvalidBoardError(f"cell ({r}, {c}) holds {cell!r}; use X, O or EMPTY (None)")
    return x, o


def to_board(board: list[list[Cell]], *, validate: bool = True) -> Board:
    """The engine's :class:`~engine.board.Board` for a list-of-lists board.

    :raises InvalidBoardError: on a malformed board, or (if ``validate``) one that cannot occur in a game.
    """
    x, o = _masks(board)
    return Board.from_masks(x, o, GEOMETRY_3X3, validate=validate)


def from_board(board: Board) -> list[list[Cell]]:
    """A fresh list-of-lists board for a 3 x 3 :class:`~engine.board.Board`."""
    if board.geometry is not GEOMETRY_3X3:
        raise InvalidBoardError(f"only 3 x 3 boards convert, not {board.rows} x {board.cols}")
    text = str(board)
    return [[None if ch == "." else ch for ch in text[r * SIZE : (r + 1) * SIZE]] for r in range(SIZE)]


def player(board: list[list[Cell]]) -> str:
    """The player who has the next turn: X on the initial board, then alternately O and X.

    (On a finished board the answer follows the same count rule.)
    """
    x, o = _masks(board)
    return X if x.bit_count() <= o.bit_count() else O


def actions(board: list[list[Cell]]) -> set[Action]:
    """Every empty cell as a ``(row, col)`` action (on a finished board too, as CS50 allows)."""
    x, o = _masks(board)
    occupied = x | o
    return {divmod(sq, SIZE) for sq in range(SIZE * SIZE) if not occupied >> sq & 1}


def result(board: list[list[Cell]], action: Action) -> list[list[Cell]]:
    """The board after the player to move takes ``action``; ``board`` itself is left unchanged (deep copy).

    :raises IllegalMoveError: if ``action`` is not a pair of integers in ``0..2`` or names an occupied cell.
    :raises InvalidBoardError: on a malformed board.
    """
    _masks(board)
    try:
        row, col = action
    except (TypeError, ValueError):
        raise IllegalMoveError(f"an action is a (row, col) pair, got {action!r}") from None
    for name, value in (("row", row), ("col", col)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise IllegalMoveError(f"{name} must be an integer 0..{SIZE - 1}, got {value!r}")
        if not 0 <= value < SIZE:
            raise IllegalMoveError(f"{name} {value} is off the board: use 0..{SIZE - 1}")
    if board[row][col] is not EMPTY:
        raise IllegalMoveError(f"cell ({row}, {col}) is taken by {board[row][col]}")
    new = [list(r) for r in board]
    new[row][col] = player(board)
    return new


def winner(board: list[list[Cell]]) -> str | None:
    """X or O if that player has three in a row, else None."""
    x, o = _masks(board)
    if GEOMETRY_3X3.has_line(x):
        return X
    if GEOMETRY_3X3.has_line(o):
        return O
    return None


def terminal(board: list[list[Cell]]) -> bool:
    """Whether the game is over: a winner, or every cell filled."""
    x, o = _masks(board)
    return (x | o) == GEOMETRY_3X3.full or GEOMETRY_3X3.has_line(x) or GEOMETRY_3X3.has_line(o)


def utility(board: list[list[Cell]]) -> int:
    """1 if X has won, -1 if O has won, 0 otherwise (meant for finished boards)."""
    return {X: 1, O: -1, None: 0}[winner(board)]


def minimax(board: list[list[Cell]]) -> Action | None:
    """An optimal action for the player to move, or None if the board is terminal.

    Optimal means the best game-theoretic result, the fastest win or the slowest loss; among equals, the
    lowest cell (row by row).

    :raises InvalidBoardError: on a malformed board, or a non-terminal one that cannot occur in a game.
    """
    if terminal(board):
        return None
    entry = _table.entry(to_board(board))
    return divmod(entry.best[0], SIZE)
