"""Choosing a move: immediate wins and blocks, then VCF, then the opponent's VCF, then VCT, then PVS.

Each stage has a share of the turn's time (:mod:`engine.gomoku.clock`); a proof from a threat search is
played as is, otherwise the principal variation search decides. A move is always returned before the
deadline on any position with an empty square: every stage stops when its share runs out, and the search
falls back on the best move found so far.

Levels:

========  =====  ======  ==================================================================
name      depth  time s  what it does
========  =====  ======  ==================================================================
easy      2      0.2     wins and blocks fours, a shallow search; no threat search
medium    4      1.0     also finds VCF wins and defends against the opponent's VCF
hard      12     3.0     also VCT wins, a deeper search
========  =====  ======  ==================================================================
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from .board import GomokuBoard, Square
from .clock import VCF_SHARE, VCT_SHARE, Clock, Deadline
from .rules import Color, GomokuError, other
from .search import Searcher
from .threats import ThreatSearch, ThreatTimeout


@dataclass(frozen=True, slots=True)
class GomokuLevel:
    """How hard the engine tries."""

    name: str
    #: deepest PVS iteration
    max_depth: int
    #: default seconds per move (callers such as the protocol may pass their own)
    seconds: float
    #: whether to look for VCF wins and the opponent's VCF
    vcf: bool
    #: whether to look for VCT wins
    vct: bool


LEVELS: Final = {
    "easy": GomokuLevel("easy", 2, 0.2, vcf=False, vct=False),
    "medium": GomokuLevel("medium", 4, 1.0, vcf=True, vct=False),
    "hard": GomokuLevel("hard", 12, 3.0, vcf=True, vct=True),
}
DEFAULT_LEVEL: Final = "hard"


def get_level(name: str) -> GomokuLevel:
    """The level called ``name``.

    :raises GomokuError: naming the known levels.
    """
    try:
        return LEVELS[name]
    except KeyError:
        raise GomokuError(f"unknown level {name!r}: use one of {', '.join(LEVELS)}") from None


@dataclass
class Decision:
    """A chosen move and how it was found."""

    move: Square
    #: "opening", "win", "block", "vcf", "defend", "vct" or "search"
    reason: str
    #: search score for the mover (0 for threat proofs)
    score: int = 0
    #: PVS depth completed (0 when a threat stage decided)
    depth: int = 0
    #: positions visited by all stages
    nodes: int = 0
    #: the expected line, starting with ``move``
    line: list[Square] = field(default_factory=list)
    #: seconds spent
    elapsed: float = 0.0


class GomokuPlayer:
    """Plays one side of games on ``board`` (shared with the caller, restored after each decision)."""

    def __init__(self, board: GomokuBoard, level: str = DEFAULT_LEVEL, clock: Clock = time.perf_counter):
        self.board = board
        self.level = get_level(level)
        self.clock = clock
        self.searcher = Searcher(board)

    def reset(self, board: GomokuBoard) -> None:
        """Forget what was learnt and play on ``board`` from now on."""
        self.board = board
        self.searcher = Searcher(board)

    def choose(self, seconds: float | None = None) -> Decision:
        """The move for the side to move, found within ``seconds`` (the level's time if None).

        :raises GomokuError: if the board has no empty square.
        """
        start = self.clock()
        deadline = Deadline(start + (self.level.seconds if seconds is None else seconds), self.clock)
        decision = self._choose(deadline)
        decision.elapsed = self.clock() - start
        return decision

    def _choose(self, deadline: Deadline) -> Decision:
        board, level = self.board, self.level
        me = board.to_move
        opp = other(me)
        candidates = board.candidates()
        if not candidates:
            raise GomokuError("the board is full: no move to choose")
        if board.stones() == 0:
            return Decision(candidates[0], "opening", line=[candidates[0]])
        wins = board.win_squares(me)
        if wins:
            move = min(wins)
            return Decision(move, "win", line=[move])
        threats = board.win_squares(opp)
        if threats:
            move = min(threats)
            return Decision(move, "block", line=[move])
        nodes = 0
        defences: list[Square] | None = None
        if level.vcf:
            threat = ThreatSearch(board, deadline=deadline.share(VCF_SHARE).at, clock=self.clock)
            line = _try(threat.vcf, me)
            nodes += threat.nodes
            if line:
                return Decision(line[0], "vcf", nodes=nodes, line=line)
            # The opponent's VCF, as if we passed: our move must break it.
            threat = ThreatSearch(board, deadline=deadline.share(VCF_SHARE).at, clock=self.clock)
            their_line = _try(threat.vcf, opp)
            nodes += threat.nodes
            if their_line:
                defences = self._defences(opp, their_line, deadline)
        if level.vct:
            threat = ThreatSearch(board, deadline=deadline.share(VCT_SHARE).at, clock=self.clock)
            line = _try(threat.vct, me)  # sound even against their VCF: their fours are replies it searches
            nodes += threat.nodes
            if line:
                return Decision(line[0], "vct", nodes=nodes, line=line)
        if defences is not None and len(defences) == 1:
            return Decision(defences[0], "defend", nodes=nodes, line=defences[:1])
        result = self.searcher.search(level.max_depth, deadline, root_moves=defences)
        assert result.move is not None
        return Decision(
            result.move,
            "search" if defences is None else "defend",
            score=result.score,
            depth=result.depth,
            nodes=nodes + result.nodes,
            line=result.pv or [result.move],
        )

    def _defences(self, opp: Color, their_line: list[Square], deadline: Deadline) -> list[Square]:
        """Our moves after which the opponent's VCF ``their_line`` and any other VCF of theirs fail (our own
        fours included, which they must answer); if none does, the squares of their line, to resist."""
        board = self.board
        me = other(opp)
        options = set(their_line[::2]) | set(their_line[1::2]) | board.four_squares(me)
        kept: list[Square] = []
        per_move = deadline.share(VCF_SHARE)
        for move in sorted(options):
            if board.cells[move] != 0:
                continue
            board.play(move)
            try:
                threat = ThreatSearch(board, deadline=per_move.at, clock=self.clock, max_nodes=20_000)
                if _try(threat.vcf, opp) is None:
                    kept.append(move)
            finally:
                board.undo()
        return kept or [m for m in their_line[::2] if board.cells[m] == 0][:1] or board.candidates()[:1]


def _try(search: Callable[[Color], list[Square] | None], color: Color) -> list[Square] | None:
    """Run a threat search, treating a timeout as "nothing found"."""
    try:
        return search(color)
    except ThreatTimeout:
        return None
