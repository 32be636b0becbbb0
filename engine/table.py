"""The complete 3 x 3 table: every reachable position's exact score, best moves and principal variation.

Built on first use by a memoised full-window negamax over the 5,478 reachable positions (no pruning, so
every position, not only those on the principal line, gets its exact depth-aware score). Building takes
about 13-15 ms (about 33 ms for import plus the first move in a fresh process) on the development machine,
an x86-64 server core under CPython 3.11; ``python bench/engine.py`` measures it. After that a move costs
one dictionary lookup (median about 2 microseconds for :func:`engine.choose_move`).

Scores follow :mod:`engine.search`: from the side to move's view, a win completed with ``P`` pieces on the
board is ``WIN_SCORE - P``, a draw 0.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Final, NamedTuple

from .board import GEOMETRY_3X3, Board, Square
from .errors import InvalidBoardError
from .search import win_score

#: Number of positions reachable from the empty 3 x 3 board in legal play (play stops at a line).
REACHABLE_POSITIONS: Final = 5478

_CELLS: Final = GEOMETRY_3X3.cells
_FULL: Final = GEOMETRY_3X3.full
_has_line = GEOMETRY_3X3.has_line


class Entry(NamedTuple):
    """What the table knows about one position."""

    #: exact depth-aware score for the side to move
    score: int
    #: every move achieving ``score``, ascending (empty on a finished board)
    best: tuple[Square, ...]
    #: a principal variation: the first best move, then the first best reply, ... to the end
    pv: tuple[Square, ...]
    #: every legal move with its score for the mover, ascending by square
    move_scores: tuple[tuple[Square, int], ...]


def key_of(x: int, o: int) -> int:
    """The table key of a 3 x 3 position given X's and O's masks (same as :attr:`Board.key`)."""
    return x | o << _CELLS


def build() -> dict[int, Entry]:
    """Compute the table from scratch: key -> :class:`Entry` for all 5,478 reachable positions."""
    table: dict[int, Entry] = {}

    def visit(x: int, o: int, pieces: int) -> int:
        key = x | o << _CELLS
        found = table.get(key)
        if found is not None:
            return found.score
        x_to_move = pieces % 2 == 0
        last_mover = o if x_to_move else x
        occupied = x | o
        if _has_line(last_mover):
            entry = Entry(-win_score(pieces), (), (), ())
        elif occupied == _FULL:
            entry = Entry(0, (), (), ())
        else:
            move_scores = []
            for sq in range(_CELLS):
                bit = 1 << sq
                if occupied & bit:
                    continue
                if x_to_move:
                    child = -visit(x | bit, o, pieces + 1)
                else:
                    child = -visit(x, o | bit, pieces + 1)
                move_scores.append((sq, child))
            score = max(s for _, s in move_scores)
            best = tuple(sq for sq, s in move_scores if s == score)
            first = 1 << best[0]
            child_key = (x | first) | o << _CELLS if x_to_move else x | (o | first) << _CELLS
            entry = Entry(score, best, (best[0], *table[child_key].pv), tuple(move_scores))
        table[key] = entry
        return entry.score

    visit(0, 0, 0)
    return table


_table: dict[int, Entry] | None = None
_lock = threading.Lock()


def table() -> Mapping[int, Entry]:
    """The table, built on first call (thread-safe), shared afterwards: a read-only view, so that no
    caller can change what every other caller reads."""
    global _table
    if _table is None:
        with _lock:
            if _table is None:
                _table = build()
    return MappingProxyType(_table)


def entry(board: Board) -> Entry:
    """The table entry of a 3 x 3 ``board``.

    :raises InvalidBoardError: if the board is not 3 x 3 with three in a row, or cannot occur in a legal game.
    """
    if board.geometry is not GEOMETRY_3X3:
        raise InvalidBoardError(f"the table covers 3 x 3 boards only, not {board.rows} x {board.cols}")
    found = (_table if _table is not None else table()).get(board.key)
    if found is None:
        board.validate()  # says why
        raise InvalidBoardError(f"position {board} is not reachable in a legal game")  # pragma: no cover
    return found


def entry_by_key(key: int) -> Entry:
    """The entry for a key known to be reachable (:attr:`Board.key`). Raises KeyError otherwise."""
    return (_table if _table is not None else table())[key]


def reachable_positions() -> Iterator[Board]:
    """Every position reachable from the empty 3 x 3 board in legal play, 5,478 in all, including finished
    ones; ordered by number of pieces, then by key (deterministic)."""
    keys = sorted(table(), key=lambda key: ((key & _FULL | key >> _CELLS).bit_count(), key))
    for key in keys:
        yield Board.from_masks(key & _FULL, key >> _CELLS, validate=False)
