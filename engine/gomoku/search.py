"""Principal variation search for gomoku: iterative deepening, a transposition table on Zobrist keys,
killer and history move ordering, forced replies to fours, and a deadline checked as it goes.

Scores are from the side to move's point of view. A win found with the five on ply ``p`` from the root
scores ``WIN - p`` (faster wins score higher); heuristic values stay far below ``MATE_THRESHOLD``. Scores in
the table are stored relative to the node, so they are valid wherever the position recurs.

The search never plays a move it has not searched: if the clock runs out during an iteration, it returns
the best move of the deepest finished iteration, improved by any root move of the unfinished one that was
searched completely and proved better.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from .board import GomokuBoard, Square
from .clock import Deadline
from .patterns import OPEN_THREE
from .rules import other

WIN: Final = 10_000_000
#: Any score at least this large in magnitude is a proven win or loss.
MATE_THRESHOLD: Final = WIN - 10_000
#: Moves searched at the root and below (best first by the ordering); the rest are pruned.
ROOT_WIDTH: Final = 20
NODE_WIDTH: Final = 10
#: Transposition table entries kept between searches unless a memory limit says otherwise.
DEFAULT_MAX_ENTRIES: Final = 2_000_000
#: Deepest iteration tried.
MAX_DEPTH: Final = 30
#: Bonus for the side to move when it holds an open three: it moves first to make the open four.
TEMPO_OPEN_THREE: Final = 1_500
#: Check the clock every this many nodes (a power of two minus one, used as a mask).
_CLOCK_MASK: Final = 127
#: Ordering bonuses: the table's move, then killers; history adds its count.
_TT_MOVE_BONUS: Final = 1 << 40
_KILLER_BONUS: Final = 1 << 30

_EXACT: Final = 0
_LOWER: Final = 1
_UPPER: Final = 2


class SearchTimeout(Exception):
    """The deadline passed during an iteration (caught inside :meth:`Searcher.search`)."""


@dataclass
class SearchResult:
    """What an iterative-deepening search found."""

    #: the move to play (None only if there is no legal move)
    move: Square | None
    #: its score for the side to move (see the module docstring)
    score: int
    #: the deepest iteration completed
    depth: int
    #: positions visited
    nodes: int
    #: the principal variation from the transposition table (may be shorter than ``depth``)
    pv: list[Square] = field(default_factory=list)


@dataclass(slots=True)
class _Entry:
    depth: int
    flag: int
    score: int
    move: Square | None


class Searcher:
    """PVS over one board (which it changes and restores). Keep one per game: the table, killers and
    history carry over from move to move."""

    def __init__(self, board: GomokuBoard, *, root_width: int = ROOT_WIDTH, node_width: int = NODE_WIDTH):
        self.board = board
        self.root_width = root_width
        self.node_width = node_width
        self.table: dict[int, _Entry] = {}
        self.history: list[int] = [0] * board.cells_count
        self.killers: list[list[Square]] = [[] for _ in range(MAX_DEPTH * 4 + 8)]
        self.nodes = 0
        #: the table is emptied before a search when it holds more entries than this (memory limit)
        self.max_entries = DEFAULT_MAX_ENTRIES
        self._deadline: Deadline | None = None

    # ------------------------------------------------------------------------------------------ public
    def search(
        self, max_depth: int, deadline: Deadline | None = None, root_moves: list[Square] | None = None
    ) -> SearchResult:
        """Search ``max_depth`` plies deep at most, stopping at ``deadline``; always returns a move when
        one exists (the best first-ordered move if not even depth 1 finished). ``root_moves`` limits the
        moves considered at the root."""
        self.nodes = 0
        self._deadline = deadline
        if len(self.table) > self.max_entries:
            self.table.clear()
        self.killers = [[] for _ in range(len(self.killers))]
        moves = self._ordered(0, None, self.root_width, root_moves)
        if not moves:
            return SearchResult(None, 0, 0, 0)
        best_move, best_score, done = moves[0], 0, 0
        for depth in range(1, min(max_depth, MAX_DEPTH) + 1):
            try:
                score, move = self._root(depth, moves)
            except SearchTimeout as partial:
                if partial.args and partial.args[0] is not None:
                    best_move, best_score = partial.args
                break
            best_move, best_score, done = move, score, depth
            moves.remove(move)
            moves.insert(0, move)
            if score >= MATE_THRESHOLD:
                break  # a win: deeper search cannot improve on it
            # A "loss" seen through the pruned move lists may be escaped by a move cut at this depth: go on.
        return SearchResult(best_move, best_score, done, self.nodes, self.principal_variation(best_move))

    def principal_variation(self, first: Square | None, limit: int = 12) -> list[Square]:
        """The line the table expects, starting with ``first``."""
        board = self.board
        line: list[Square] = []
        move = first
        while move is not None and len(line) < limit and board.cells[move] == 0:
            line.append(move)
            board.play(move)
            entry = self.table.get(board.hash)
            move = entry.move if entry is not None else None
        for _ in line:
            board.undo()
        return line

    # -------------------------------------------------------------------------------------------- core
    def _root(self, depth: int, moves: list[Square]) -> tuple[int, Square]:
        board = self.board
        alpha, beta = -WIN - 1, WIN + 1
        best_move: Square | None = None
        best = -WIN - 1
        for i, move in enumerate(moves):
            board.play(move)
            try:
                if i == 0:
                    score = -self._pvs(depth - 1, -beta, -alpha, 1)
                else:
                    score = -self._pvs(depth - 1, -alpha - 1, -alpha, 1)
                    if alpha < score < beta:
                        score = -self._pvs(depth - 1, -beta, -alpha, 1)
            except SearchTimeout:
                board.undo()
                # Root moves searched completely at this depth are compared exactly: the best is safe to play.
                partial = SearchTimeout(best_move, best) if best_move is not None else SearchTimeout(None)
                raise partial from None
            board.undo()
            if score > best:
                best, best_move = score, move
            if score > alpha:
                alpha = score
        assert best_move is not None
        self.table[board.hash] = _Entry(depth, _EXACT, best, best_move)
        return best, best_move

    def _pvs(self, depth: int, alpha: int, beta: int, ply: int) -> int:
        board = self.board
        self.nodes += 1
        if self.nodes & _CLOCK_MASK == 0 and self._deadline is not None and self._deadline.passed():
            raise SearchTimeout(None)
        me = board.to_move
        opp = other(me)
        if board.has_five(opp):
            return -(WIN - ply)
        if board.win_squares(me):
            return WIN - ply - 1
        threats = board.win_squares(opp)
        if len(threats) >= 2:
            return -(WIN - ply - 2)
        if threats:
            (block,) = threats
            forced: list[Square] | None = [block]
        else:
            forced = None
            if depth <= 0:
                return self.evaluate()
        if ply >= len(self.killers) - 2:
            return self.evaluate()

        key = board.hash
        entry = self.table.get(key)
        tt_move = None
        if entry is not None:
            tt_move = entry.move
            if entry.depth >= depth:
                score = _from_table(entry.score, ply)
                if entry.flag == _EXACT:
                    return score
                if entry.flag == _LOWER and score >= beta:
                    return score
                if entry.flag == _UPPER and score <= alpha:
                    return score

        moves = forced if forced is not None else self._ordered(ply, tt_move, self.node_width)
        if not moves:
            return 0  # the board is full: a draw
        # A forced block does not use up depth (the reply to a four is not a choice).
        child_depth = depth if forced is not None else depth - 1
        original_alpha = alpha
        best, best_move = -WIN - 1, moves[0]
        for i, move in enumerate(moves):
            board.play(move)
            try:
                if i == 0:
                    score = -self._pvs(child_depth, -beta, -alpha, ply + 1)
                else:
                    score = -self._pvs(child_depth, -alpha - 1, -alpha, ply + 1)
                    if alpha < score < beta:
                        score = -self._pvs(child_depth, -beta, -alpha, ply + 1)
            finally:
                board.undo()
            if score > best:
                best, best_move = score, move
            if score > alpha:
                alpha = score
            if alpha >= beta:
                self._reward(ply, move, depth)
                break
        flag = _UPPER if best <= original_alpha else _LOWER if best >= beta else _EXACT
        self.table[key] = _Entry(depth, flag, _to_table(best, ply), best_move)
        return best

    def evaluate(self) -> int:
        """The static value for the side to move: its score less the opponent's, plus the tempo of an open
        three it can turn into an open four first."""
        board = self.board
        me = board.to_move
        opp = other(me)
        value = board.scores[me] - board.scores[opp]
        if board.count(me, OPEN_THREE):
            value += TEMPO_OPEN_THREE
        return value

    # ---------------------------------------------------------------------------------------- ordering
    def _ordered(
        self, ply: int, tt_move: Square | None, width: int, only: list[Square] | None = None
    ) -> list[Square]:
        board = self.board
        me = board.to_move
        opp = other(me)
        killers = self.killers[ply]
        history = self.history
        scored: list[tuple[int, Square]] = []
        cells = board.cells
        squares = board.candidates() if only is None else [sq for sq in only if cells[sq] == 0]
        for square in squares:
            # Attack (what the stone does for us) plus defence (what it would have done for them).
            value = board.move_gain(square, me) + (board.move_gain(square, opp) * 7 >> 3) + history[square]
            if square == tt_move:
                value += _TT_MOVE_BONUS
            elif square in killers:
                value += _KILLER_BONUS
            scored.append((-value, square))
        scored.sort()
        return [square for _, square in scored[:width]]

    def _reward(self, ply: int, move: Square, depth: int) -> None:
        killers = self.killers[ply]
        if move not in killers:
            killers.insert(0, move)
            del killers[2:]
        self.history[move] += depth * depth


def _to_table(score: int, ply: int) -> int:
    if score >= MATE_THRESHOLD:
        return score + ply
    if score <= -MATE_THRESHOLD:
        return score - ply
    return score


def _from_table(score: int, ply: int) -> int:
    if score >= MATE_THRESHOLD:
        return score - ply
    if score <= -MATE_THRESHOLD:
        return score + ply
    return score
