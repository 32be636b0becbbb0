"""Search for any m x n, k-in-a-row board: negamax with alpha-beta, a transposition table keyed by the
position's symmetry class, depth-aware scores, and a heuristic evaluation for depth-limited search.

Scores are integers from the point of view of the side to move:

* a win that ends the game with ``P`` pieces on the board scores ``WIN_SCORE - P``, a loss ``-(WIN_SCORE -
  P)``. ``P`` is an absolute ply count, so the score of a position does not depend on the path that led to
  it (safe to share through the transposition table), and a faster win or a slower loss scores higher;
* a draw scores 0;
* a heuristic estimate at the search horizon lies strictly inside ``±HEURISTIC_LIMIT``, far below any win.

>>> from engine.board import Board
>>> searcher = Searcher(Board().geometry)
>>> scores = searcher.root_scores(Board('XX..O.O..'))
>>> max(scores, key=scores.get), score_value(scores[2]), score_distance(scores[2], 4)
(2, 1, 1)
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Final

from .board import Board, Geometry, Square

#: A win ending with P pieces on the board scores WIN_SCORE - P (P is at most MAX_SIDE**2 = 1024).
WIN_SCORE: Final = 1_000_000
#: Any score at least this large in magnitude is a proven win or loss.
MATE_THRESHOLD: Final = WIN_SCORE - 2048
#: Heuristic estimates are clamped strictly inside this bound.
HEURISTIC_LIMIT: Final = 100_000
#: A bound larger than any score.
INFINITY: Final = WIN_SCORE + 1

#: Weight of an open line holding c of one side's pieces and none of the other's: 10**c favours lines close
#: to completion (a two-in-a-row on 3 x 3 outweighs any number of single pieces on open lines).
_LINE_BASE: Final = 10
#: Weight per line through an occupied square: the centre of 3 x 3 (4 lines) beats a corner (3) beats an
#: edge (2), the usual opening preference.
_SQUARE_WEIGHT: Final = 1

# Transposition table bound flags.
_EXACT: Final = 0
_LOWER: Final = 1
_UPPER: Final = 2

#: A transform is applied chunk by chunk through lookup tables of this many bits (512 entries each).
_CHUNK_BITS: Final = 9


def score_value(score: int) -> int:
    """+1, 0 or -1: the proven result of ``score`` for the side to move (0 also for a heuristic estimate)."""
    if score >= MATE_THRESHOLD:
        return 1
    if score <= -MATE_THRESHOLD:
        return -1
    return 0


def is_mate_score(score: int) -> bool:
    """Whether ``score`` is a proven win or loss."""
    return abs(score) >= MATE_THRESHOLD


def score_distance(score: int, pieces: int, cells: int | None = None) -> int | None:
    """Plies from a position with ``pieces`` on the board to the end, under perfect play, given its exact
    ``score``: to the winning move for a win or loss; to the full board (``cells``) for a draw. None for a
    draw when ``cells`` is not given."""
    if is_mate_score(score):
        return WIN_SCORE - abs(score) - pieces
    return None if cells is None else cells - pieces


def win_score(pieces_at_end: int) -> int:
    """The score of a win completed with ``pieces_at_end`` pieces on the board."""
    return WIN_SCORE - pieces_at_end


def evaluate(me: int, opp: int, geo: Geometry) -> int:
    """A heuristic score of a non-final position for the side to move, whose pieces are ``me``.

    Counts open lines (lines holding pieces of one side only), weighted by how full they are, plus a small
    bonus for occupying squares on many lines (centre, then corners). Symmetric: ``evaluate(me, opp) ==
    -evaluate(opp, me)``. Clamped inside ``±HEURISTIC_LIMIT``.
    """
    total = 0
    for line in geo.lines:
        mine = me & line
        theirs = opp & line
        if mine and not theirs:
            total += _LINE_BASE ** mine.bit_count()
        elif theirs and not mine:
            total -= _LINE_BASE ** theirs.bit_count()
    weights = geo.square_weight
    for sq in _squares(me):
        total += _SQUARE_WEIGHT * weights[sq]
    for sq in _squares(opp):
        total -= _SQUARE_WEIGHT * weights[sq]
    return max(-HEURISTIC_LIMIT + 1, min(HEURISTIC_LIMIT - 1, total))


def _squares(mask: int) -> Iterable[Square]:
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def transforms(geo: Geometry) -> tuple[tuple[Square, ...], ...]:
    """The board's symmetries as permutations ``perm[square] -> square``: the 8 rotations and reflections
    of a square board, the 4 of a rectangle. The identity comes first."""
    rows, cols = geo.rows, geo.cols
    maps = [
        lambda r, c: (r, c),
        lambda r, c: (r, cols - 1 - c),
        lambda r, c: (rows - 1 - r, c),
        lambda r, c: (rows - 1 - r, cols - 1 - c),
    ]
    if rows == cols:
        n = rows
        maps += [
            lambda r, c: (c, r),
            lambda r, c: (c, n - 1 - r),
            lambda r, c: (n - 1 - c, r),
            lambda r, c: (n - 1 - c, n - 1 - r),
        ]
    perms = []
    for fn in maps:
        perm = []
        for sq in range(geo.cells):
            r, c = fn(*divmod(sq, cols))
            perm.append(r * cols + c)
        perms.append(tuple(perm))
    return tuple(dict.fromkeys(perms))


@functools.cache
def _transform_tables(geo: Geometry) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """For each symmetry, for each 9-bit chunk of a mask, a 512-entry table of that chunk's image."""
    tables = []
    for perm in transforms(geo):
        chunks = []
        for start in range(0, geo.cells, _CHUNK_BITS):
            width = min(_CHUNK_BITS, geo.cells - start)
            chunk_table = []
            for bits in range(1 << width):
                image = 0
                for i in range(width):
                    if bits >> i & 1:
                        image |= 1 << perm[start + i]
                chunk_table.append(image)
            chunks.append(tuple(chunk_table))
        tables.append(tuple(chunks))
    return tuple(tables)


def apply_transform(mask: int, chunks: tuple[tuple[int, ...], ...]) -> int:
    """The image of ``mask`` under one symmetry, given that symmetry's chunk tables."""
    image = 0
    chunk_mask = (1 << _CHUNK_BITS) - 1
    for i, table in enumerate(chunks):
        image |= table[mask >> (i * _CHUNK_BITS) & chunk_mask]
    return image


def canonical_key(me: int, opp: int, geo: Geometry) -> int:
    """The smallest key ``image(me) << cells | image(opp)`` over the board's symmetries: equal for every
    position in one symmetry class, so one transposition-table entry serves all of them."""
    cells = geo.cells
    if cells <= _CHUNK_BITS:
        return min(t[0][me] << cells | t[0][opp] for t in _transform_tables(geo))
    return min(apply_transform(me, t) << cells | apply_transform(opp, t) for t in _transform_tables(geo))


class Searcher:
    """Negamax with alpha-beta over one geometry, keeping its transposition table between calls.

    Not thread-safe (the table and the node counter are shared); use one per thread.
    ``symmetry=False`` keys the table by the position itself (for tests and measurements).

    ``radius`` (None: off) restricts the moves searched to empty squares within that many squares (in any
    direction) of a piece already on the board, the centre on an empty board: the usual way to make
    depth-limited search practical on gomoku-sized boards. It never hides a win in one or the block of one
    (a square completing a line always touches that line's pieces), but it can hide quieter moves, so
    results found with it are not proofs.
    """

    def __init__(self, geo: Geometry, *, symmetry: bool = True, radius: int | None = None) -> None:
        self.geometry = geo
        self.symmetry = symmetry
        self.radius = radius
        self._near: tuple[int, ...] = ()
        if radius is not None:
            if radius < 1:
                raise ValueError(f"radius must be None or >= 1, got {radius}")
            cols = geo.cols
            self._near = tuple(
                sum(
                    1 << (r * cols + c)
                    for r in range(max(0, sq // cols - radius), min(geo.rows, sq // cols + radius + 1))
                    for c in range(max(0, sq % cols - radius), min(cols, sq % cols + radius + 1))
                )
                for sq in range(geo.cells)
            )
            centre = (geo.rows // 2) * cols + cols // 2
            self._opening = 1 << centre
        #: positions visited since construction (or since the caller last reset it)
        self.nodes = 0
        #: key -> (depth searched, bound flag, score)
        self.table: dict[int, tuple[int, int, int]] = {}
        # Move ordering: squares on more lines first (the centre, then corners on 3 x 3).
        self._order = tuple(sorted(range(geo.cells), key=lambda sq: (-geo.square_weight[sq], sq)))

    def root_scores(
        self, board: Board, depth: int | None = None, *, best_only: bool = False
    ) -> dict[Square, int]:
        """The score of every move searched from ``board`` (the mover's view), ``depth`` plies deep
        including the move itself (None: to the end): every legal move, or with ``radius`` the nearby ones.

        Each move gets an exact score within that depth; with ``best_only``, only the moves that tie for the
        best do, and the others get an upper bound below the best (cheaper: they are searched with a null
        window above it). A finished board has no moves (``{}``).
        """
        geo = self.geometry
        pieces = board.pieces
        me, opp = (board.x_mask, board.o_mask) if pieces % 2 == 0 else (board.o_mask, board.x_mask)
        remaining = geo.cells - pieces
        limit = remaining if depth is None else min(depth, remaining)
        scores: dict[Square, int] = {}
        self.nodes += 1
        if board.is_terminal():
            return scores
        moves = self._moves(me, opp)
        best = -INFINITY
        for sq in self._order:
            if not moves >> sq & 1:
                continue
            # Full window, or (best_only, once a best is known) a window that only resolves moves >= best.
            beta = -(best - 1) if best_only and best > -INFINITY else INFINITY
            value = -self._negamax(opp, me | 1 << sq, sq, pieces + 1, limit - 1, -INFINITY, beta)
            scores[sq] = value
            best = max(best, value)
        return dict(sorted(scores.items()))

    def _moves(self, me: int, opp: int) -> int:
        """Mask of the moves to search: every empty square, or with a radius those near a piece."""
        geo = self.geometry
        occupied = me | opp
        free = geo.full & ~occupied
        if self.radius is None:
            return free
        if not occupied:
            return self._opening
        near = 0
        mask = occupied
        while mask:
            low = mask & -mask
            near |= self._near[low.bit_length() - 1]
            mask ^= low
        return (near & free) or free

    def search(self, board: Board, depth: int | None = None) -> int:
        """The negamax score of ``board`` for the side to move, ``depth`` plies deep (None: to the end)."""
        geo = self.geometry
        pieces = board.pieces
        me, opp = (board.x_mask, board.o_mask) if pieces % 2 == 0 else (board.o_mask, board.x_mask)
        if geo.has_line(opp):
            self.nodes += 1
            return -win_score(pieces)
        remaining = geo.cells - pieces
        limit = remaining if depth is None else min(depth, remaining)
        return self._negamax(me, opp, -1, pieces, limit, -INFINITY, INFINITY)

    def _negamax(
        self, me: int, opp: int, last: Square, pieces: int, depth: int, alpha: int, beta: int
    ) -> int:
        """Score for the side to move (pieces ``me``) after the opponent played ``last`` (-1: unknown)."""
        self.nodes += 1
        geo = self.geometry
        if last >= 0:
            for line in geo.lines_through[last]:
                if opp & line == line:
                    return -win_score(pieces)
        if pieces == geo.cells:
            return 0
        if depth <= 0:
            return evaluate(me, opp, geo)
        # Mate-distance bounds: nothing here can beat winning with the next move or lose sooner than the move
        # after it, so a window outside those bounds is already decided.
        best_possible = win_score(pieces + 1)
        if alpha >= best_possible:
            return best_possible
        worst_possible = -win_score(pieces + 2)
        if beta <= worst_possible:
            return worst_possible
        depth = min(depth, geo.cells - pieces)
        key = canonical_key(me, opp, geo) if self.symmetry else me << geo.cells | opp
        entry = self.table.get(key)
        if entry is not None and entry[0] >= depth:
            _, flag, value = entry
            if flag == _EXACT:
                return value
            if flag == _LOWER and value >= beta:
                return value
            if flag == _UPPER and value <= alpha:
                return value
        original_alpha = alpha
        free = self._moves(me, opp)
        # A move that completes a line ends the search at once: the fastest possible win.
        for sq in self._order:
            if free >> sq & 1:
                mine = me | 1 << sq
                for line in geo.lines_through[sq]:
                    if mine & line == line:
                        return best_possible
        best = -INFINITY
        for sq in self._order:
            if not free >> sq & 1:
                continue
            value = -self._negamax(opp, me | 1 << sq, sq, pieces + 1, depth - 1, -beta, -alpha)
            if value > best:
                best = value
                if value > alpha:
                    alpha = value
                    if alpha >= beta:
                        break
        if best <= original_alpha:
            flag = _UPPER
        elif best >= beta:
            flag = _LOWER
        else:
            flag = _EXACT
        self.table[key] = (depth, flag, best)
        return best
