"""Evaluations and move choice: the perfect policy and the difficulty levels.

On the 3 x 3 board every answer about a position comes from the complete table (:mod:`engine.table`), so
:func:`solve` and the perfect :func:`choose_move` cost a lookup. Depth-limited levels run a real
depth-limited alpha-beta search with the heuristic at the horizon; on 3 x 3 its result per (position,
depth) is memoised, so repeated games stay cheap. Other board shapes are searched on every call.

Levels (:data:`LEVELS`):

========  ===========  ============  ==============================================================
name      depth limit  mistake rate  what it feels like
========  ===========  ============  ==============================================================
easy      1            0.30          takes a win in one, otherwise shape only; often slips
medium    2            0.15          also blocks your immediate threats; sometimes slips
hard      4            0.05          sees forks coming; rarely slips
perfect   none         0.00          never loses, wins whenever it can, fastest win first
========  ===========  ============  ==============================================================

The depth limit counts plies including the move being chosen. The mistake rate is the probability that,
when the search ranks the moves into more than one group of equal score, the policy plays a move from the
second-best group instead of the best; such a move is flagged ``mistake=True``.
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass, field
from typing import Final

from . import table as _table_module
from .board import GEOMETRY_3X3, Board, Square
from .errors import EngineError, GameOverError, IllegalMoveError, UnknownLevelError
from .search import Searcher, is_mate_score, score_distance, score_value, win_score


@dataclass(frozen=True, slots=True)
class Level:
    """A difficulty level: how deep the policy looks and how often it slips on purpose."""

    #: the name people choose it by
    name: str
    #: plies searched, counting the move being chosen; None searches to the end (perfect knowledge)
    depth_limit: int | None
    #: probability of playing from the second-best group of moves when there is one (0 .. 1)
    mistake_rate: float
    #: one line for people
    description: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if self.depth_limit is not None and (
            isinstance(self.depth_limit, bool)
            or not isinstance(self.depth_limit, int)
            or self.depth_limit < 1
        ):
            raise UnknownLevelError(
                f"level {self.name!r}: depth_limit must be None or >= 1, got {self.depth_limit!r}"
            )
        if not 0.0 <= self.mistake_rate <= 1.0:
            raise UnknownLevelError(
                f"level {self.name!r}: mistake_rate must be in 0..1, got {self.mistake_rate!r}"
            )


EASY: Final = Level("easy", 1, 0.30, "takes a win in one, otherwise plays for shape; often slips")
MEDIUM: Final = Level("medium", 2, 0.15, "also blocks immediate threats; sometimes slips")
HARD: Final = Level("hard", 4, 0.05, "sees forks coming; rarely slips")
PERFECT: Final = Level("perfect", None, 0.0, "never loses, wins whenever it can, fastest win first")

#: The named levels, weakest first.
LEVELS: Final[dict[str, Level]] = {lvl.name: lvl for lvl in (EASY, MEDIUM, HARD, PERFECT)}


def get_level(level: str | Level) -> Level:
    """The :class:`Level` named ``level`` (case-insensitive), or ``level`` itself.

    :raises UnknownLevelError: for a name not in :data:`LEVELS`.
    """
    if isinstance(level, Level):
        return level
    found = LEVELS.get(level.strip().lower()) if isinstance(level, str) else None
    if found is None:
        raise UnknownLevelError(f"unknown level {level!r}: choose one of {', '.join(LEVELS)}")
    return found


@dataclass(frozen=True, slots=True)
class Evaluation:
    """What search knows about a position, from the side to move's point of view."""

    #: +1 win, 0 draw, -1 loss under perfect play; for a depth-limited search that proved nothing, 0
    value: int
    #: plies to the end under perfect play (to the winning move, or to the full board for a draw); None when
    #: a depth-limited search did not prove the result
    distance: int | None
    #: every move achieving the best score, ascending; empty on a finished board
    best_moves: tuple[Square, ...]
    #: principal variation: a best move, then the best reply, and so on (to the end, or to the depth limit)
    pv: tuple[Square, ...]
    #: positions visited by search for this answer (0 when it came straight from the 3 x 3 table; a memoised
    #: depth-limited result reports the count of the search that produced it)
    nodes: int
    #: the depth-aware score behind ``value`` (see :mod:`engine.search`)
    score: int
    #: whether ``value`` and ``distance`` are game-theoretic facts rather than a horizon estimate
    exact: bool = True
    #: every legal move with its score for the side to move, ascending by square
    move_scores: tuple[tuple[Square, int], ...] = ()


@dataclass(frozen=True, slots=True)
class MoveChoice:
    """A move chosen by :func:`choose_move`, with what is known about it (the mover's point of view)."""

    #: the square to play, 0-based (people's number is ``square + 1``)
    square: Square
    #: result after this move under perfect play by both sides: +1 win, 0 draw, -1 loss
    value: int
    #: plies from now to the end under perfect play after this move (None if unproven)
    distance: int | None
    #: principal variation starting with ``square``
    pv: tuple[Square, ...]
    #: positions visited by search to choose it (0 for the perfect policy on 3 x 3: a table lookup)
    nodes: int
    #: whether the level deliberately played from the second-best group of moves
    mistake: bool
    #: name of the level that chose it
    level: str
    #: depth-aware score of the move for the mover
    score: int
    #: whether value and distance are exact (always on 3 x 3)
    exact: bool = True

    @property
    def number(self) -> int:
        """The square as people number it (1-based)."""
        return self.square + 1


_default_rng = random.Random()

#: Boards with at least this many squares (larger than 7 x 7) search only near the pieces when the search is
#: depth-limited: a full-width search of gomoku's 225 squares is far too slow in Python.
NEIGHBOURHOOD_MIN_CELLS: Final = 50
#: How near: within two squares in any direction (the usual choice for gomoku).
NEIGHBOURHOOD_RADIUS: Final = 2


def _is_exact(score: int, pieces: int, depth: int | None, searcher: Searcher) -> bool:
    """Whether a root ``score`` is a game-theoretic fact: searched to the end; or a win or loss proven inside
    the horizon by a full-width search; or, with a restricted search, a win with the very next move."""
    if depth is None or depth >= searcher.geometry.cells - pieces:
        return True
    if searcher.radius is None:
        return is_mate_score(score)
    return score == win_score(pieces + 1)


def _searcher_for(board: Board, depth: int | None) -> Searcher:
    """A fresh searcher; on large boards with a depth limit short of the end, one that searches near the
    pieces only (see :class:`~engine.search.Searcher`)."""
    geo = board.geometry
    limited = depth is not None and depth < geo.cells - board.pieces
    if limited and geo.cells >= NEIGHBOURHOOD_MIN_CELLS:
        return Searcher(geo, radius=NEIGHBOURHOOD_RADIUS)
    return Searcher(geo)


def solve(board: Board, *, depth: int | None = None) -> Evaluation:
    """Evaluate ``board`` for the side to move, to the end (``depth=None``) or ``depth`` plies deep.

    On 3 x 3 a full solve is a table lookup. A finished board evaluates to its result with no moves.

    :raises InvalidBoardError: if the board cannot occur in a legal game.
    :raises EngineError: if ``depth`` is not None or a positive integer.
    """
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
        raise EngineError(f"depth must be None (to the end) or a positive number of plies, got {depth!r}")
    if board.geometry is GEOMETRY_3X3:
        remaining = 9 - board.pieces
        if depth is None or depth >= remaining:
            e = _table_module.entry(board)
            return Evaluation(
                value=score_value(e.score),
                distance=score_distance(e.score, board.pieces, 9),
                best_moves=e.best,
                pv=e.pv,
                nodes=0,
                score=e.score,
                exact=True,
                move_scores=e.move_scores,
            )
        _table_module.entry(board)  # validity
        move_scores, nodes = _limited_scores_3x3(board.key, depth)
        return _evaluation_from_scores(board, move_scores, nodes, depth, Searcher(board.geometry))
    board.validate()
    searcher = _searcher_for(board, depth)
    scores = searcher.root_scores(board, depth)
    return _evaluation_from_scores(board, tuple(sorted(scores.items())), searcher.nodes, depth, searcher)


def _evaluation_from_scores(
    board: Board,
    move_scores: tuple[tuple[Square, int], ...],
    nodes: int,
    depth: int | None,
    searcher: Searcher,
) -> Evaluation:
    geo = board.geometry
    pieces = board.pieces
    if not move_scores:  # finished board
        score = -win_score(pieces) if board.winner() is not None else 0
        return Evaluation(score_value(score), 0, (), (), max(nodes, 1), score, True, ())
    score = max(s for _, s in move_scores)
    best = tuple(sq for sq, s in move_scores if s == score)
    exact = _is_exact(score, pieces, depth, searcher)
    pv = _principal_variation(board, best[0], depth, searcher)
    return Evaluation(
        value=score_value(score),
        distance=score_distance(score, pieces, geo.cells) if exact else None,
        best_moves=best,
        pv=pv,
        nodes=nodes,
        score=score,
        exact=exact,
        move_scores=move_scores,
    )


def _principal_variation(
    board: Board, first: Square, depth: int | None, searcher: Searcher
) -> tuple[Square, ...]:
    """``first`` followed by the best reply at each ply, up to ``depth`` plies (None: to the end)."""
    pv = [first]
    current = board.play(first)
    remaining_depth = None if depth is None else depth - 1
    while not current.is_terminal() and (remaining_depth is None or remaining_depth > 0):
        if current.geometry is GEOMETRY_3X3 and remaining_depth is None:
            return (*pv, *_table_module.entry(current).pv)
        scores = searcher.root_scores(current, remaining_depth, best_only=True)
        top = max(scores.values())
        move = min(sq for sq, s in scores.items() if s == top)
        pv.append(move)
        current = current.play(move)
        remaining_depth = None if remaining_depth is None else remaining_depth - 1
    return tuple(pv)


@functools.cache
def _limited_scores_3x3(key: int, depth: int) -> tuple[tuple[tuple[Square, int], ...], int]:
    """Depth-limited scores of every move from the 3 x 3 position ``key``, and the nodes it took. Memoised:
    a fresh searcher each time, so the node count does not depend on what was searched before."""
    board = Board.from_masks(key & 0x1FF, key >> 9, validate=False)
    searcher = Searcher(GEOMETRY_3X3)
    scores = searcher.root_scores(board, depth)
    return tuple(sorted(scores.items())), searcher.nodes


def _pick(
    move_scores: tuple[tuple[Square, int], ...], mistake_rate: float, rng: random.Random
) -> tuple[Square, bool]:
    """A move from the best group, or with probability ``mistake_rate`` (when there is a second group) one
    from the second-best group. Returns (square, whether it was a deliberate mistake)."""
    top = max(s for _, s in move_scores)
    if mistake_rate > 0.0:
        lower = [s for _, s in move_scores if s < top]
        if lower and rng.random() < mistake_rate:
            second = max(lower)
            group = [sq for sq, s in move_scores if s == second]
            return (group[0] if len(group) == 1 else rng.choice(group)), True
    group = [sq for sq, s in move_scores if s == top]
    return (group[0] if len(group) == 1 else rng.choice(group)), False


def choose_move(
    board: Board,
    level: str | Level = "perfect",
    rng: random.Random | None = None,
    first_square: int | None = None,
) -> MoveChoice:
    """Choose a move for the side to move at difficulty ``level``.

    ``rng`` draws the random choice among equally good moves and the mistakes; pass a seeded
    ``random.Random`` for reproducible play (default: a module-wide unseeded generator).
    ``first_square`` (0-based) is played when the board is empty, whatever the level (contest task 4: the
    device's opening square is set by the operator; every opening square is a draw with perfect play).

    :raises InvalidBoardError: if the board cannot occur in a legal game.
    :raises GameOverError: if the game is over.
    :raises IllegalMoveError: if ``first_square`` is not a square of this board.
    :raises UnknownLevelError: for an unknown level name.

    >>> choose_move(Board('XX..O.O..')).square
    2
    """
    lvl = level if isinstance(level, Level) else get_level(level)
    gen = _default_rng if rng is None else rng
    geo = board.geometry
    if first_square is not None and (
        isinstance(first_square, bool)
        or not isinstance(first_square, int)
        or not 0 <= first_square < geo.cells
    ):
        raise IllegalMoveError(f"first_square must be a square 0..{geo.cells - 1}, got {first_square!r}")
    if geo is not GEOMETRY_3X3:
        return _choose_generic(board, lvl, gen, first_square)

    e = _table_module.entry(board)
    if not e.best:
        raise GameOverError(f"the game is over ({board}): there is no move to choose")
    nodes = 0
    mistake = False
    pieces = board.pieces
    if first_square is not None and pieces == 0:
        square = first_square
    elif lvl.mistake_rate == 0.0 and (lvl.depth_limit is None or lvl.depth_limit >= 9 - pieces):
        best = e.best
        square = best[0] if len(best) == 1 else gen.choice(best)
    elif lvl.depth_limit is None or lvl.depth_limit >= 9 - pieces:
        square, mistake = _pick(e.move_scores, lvl.mistake_rate, gen)
    else:
        move_scores, nodes = _limited_scores_3x3(board.key, lvl.depth_limit)
        square, mistake = _pick(move_scores, lvl.mistake_rate, gen)
    # The chosen move's true worth, from the table: the child's score negated.
    bit = 1 << square
    if pieces % 2 == 0:
        child = _table_module.entry_by_key((board.x_mask | bit) | board.o_mask << 9)
    else:
        child = _table_module.entry_by_key(board.x_mask | (board.o_mask | bit) << 9)
    score = -child.score
    return MoveChoice(
        square=square,
        value=score_value(score),
        distance=score_distance(score, pieces, 9),
        pv=(square, *child.pv),
        nodes=nodes,
        mistake=mistake,
        level=lvl.name,
        score=score,
        exact=True,
    )


def _choose_generic(board: Board, lvl: Level, gen: random.Random, first_square: int | None) -> MoveChoice:
    board.validate()
    if board.is_terminal():
        raise GameOverError(f"the game is over ({board}): there is no move to choose")
    depth = lvl.depth_limit
    searcher = _searcher_for(board, depth)
    pieces = board.pieces
    if first_square is not None and pieces == 0:
        square, mistake = first_square, False
        score = -searcher.search(board.play(square), None if depth is None else depth - 1)
    else:
        # Without mistakes only the best group matters, so the others need only be shown worse.
        scores = searcher.root_scores(board, depth, best_only=lvl.mistake_rate == 0.0)
        square, mistake = _pick(tuple(sorted(scores.items())), lvl.mistake_rate, gen)
        score = scores[square]
    exact = _is_exact(score, pieces, depth, searcher)
    return MoveChoice(
        square=square,
        value=score_value(score),
        distance=score_distance(score, pieces, board.geometry.cells) if exact else None,
        pv=_principal_variation(board, square, depth, searcher),
        nodes=searcher.nodes,
        mistake=mistake,
        level=lvl.name,
        score=score,
        exact=exact,
    )
