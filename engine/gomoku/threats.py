"""Threat-space search: VCF (victory by continuous fours) and VCT (victory by continuous threats).

Both return *proofs*, not scores: a winning line for the attacker, or None.

**VCF.** The attacker plays only fours. A four leaves the defender one square to stop a five (two or more
squares: the defender cannot stop it), so each defender move is forced and the search is a narrow tree of
attacker choices. If the defender has a four of its own when the attacker is to move, the attacker must block
it, and only a block that is itself a four keeps the sequence going. A line returned by :func:`find_vcf` is
checked move by move: every defender reply in it is the only one that does not lose at once.

**VCT.** The attacker may also play open threes (and fours). A three is a threat when, were the defender to
pass, the attacker would win by VCF; call that VCF line *P*. A defender move away from everything *P*
touches cannot stop *P*, so the defender's replies that need searching are found exactly: every empty
square in the zone of *P* (its squares and the squares within four along a line of them) plus every square
that gives the defender a four now, after which replaying *P* fails. Each of those replies must again lose
to a VCT (or VCF); every other reply loses to *P* itself. The win is therefore proven against every reply,
within the depth searched.

The searches share a :class:`ThreatSearch` holding the budget (nodes, clock) and the memo of failed
positions (by Zobrist hash, which includes the side to move and so the attacker).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from .board import GomokuBoard, Square
from .rules import EMPTY, Color, other

#: Default limits: fours in a VCF line, threats in a VCT line.
VCF_MAX_FOURS: Final = 20
VCT_MAX_THREATS: Final = 3
#: How many of the attacker's threes a VCT node tries (best first by static gain), to bound the tree.
VCT_MAX_THREES: Final = 10
#: Reach of a square's influence along a line: a five spans five squares.
_ZONE_REACH: Final = 4


class ThreatTimeout(Exception):
    """The search's node or time budget ran out (caught by the caller, which then knows nothing)."""


@dataclass
class ThreatSearch:
    """Budget and memo of one threat search. ``clock`` returns seconds; ``deadline`` is on that clock."""

    board: GomokuBoard
    max_nodes: int = 200_000
    deadline: float | None = None
    clock: Callable[[], float] | None = None
    nodes: int = 0
    _failed_vcf: dict[int, int] = field(default_factory=dict)
    _failed_vct: dict[int, int] = field(default_factory=dict)

    def _tick(self) -> None:
        self.nodes += 1
        if self.nodes > self.max_nodes:
            raise ThreatTimeout
        clock, deadline = self.clock, self.deadline
        if deadline is not None and clock is not None and self.nodes & 63 == 0 and clock() > deadline:
            raise ThreatTimeout

    # ------------------------------------------------------------------------------------------- VCF
    def vcf(self, attacker: Color, max_fours: int = VCF_MAX_FOURS) -> list[Square] | None:
        """A VCF for ``attacker`` moving now, or None if none is found within ``max_fours`` fours: the moves
        of both sides in order (see :func:`verify_vcf`), ending with the attacker's five or open four.

        :raises ThreatTimeout: if the budget runs out.
        """
        board = self.board
        wins = board.win_squares(attacker)
        if wins:
            return [min(wins)]
        return self._vcf(attacker, max_fours)

    def _vcf(self, attacker: Color, fours_left: int) -> list[Square] | None:
        # The attacker is to move and has no five-square (checked by the caller).
        board = self.board
        defender = other(attacker)
        threats = board.win_squares(defender)
        if len(threats) > 1 or fours_left <= 0:
            return None
        memo_key = board.hash ^ attacker
        if self._failed_vcf.get(memo_key, -1) >= fours_left:
            return None
        self._tick()
        moves = board.four_squares(attacker)
        if threats:
            moves &= threats
        for move in _ordered(board, moves, attacker):
            line = self._after_four(attacker, move, fours_left)
            if line is not None:
                return line
        self._failed_vcf[memo_key] = fours_left
        return None

    def _after_four(self, attacker: Color, move: Square, fours_left: int) -> list[Square] | None:
        """The VCF starting with the attacker's four on ``move``, or None. The board is restored even when
        the budget runs out inside."""
        board = self.board
        board.place(move, attacker)
        try:
            wins = board.win_squares(attacker)
            if len(wins) >= 2 or board.has_five(attacker):
                return [move]
            if len(wins) != 1:
                return None
            (reply,) = wins
            board.place(reply, other(attacker))
            try:
                if board.has_five(other(attacker)):
                    return None
                line = self._vcf(attacker, fours_left - 1)
            finally:
                board.remove()
            return None if line is None else [move, reply, *line]
        finally:
            board.remove()

    # ------------------------------------------------------------------------------------------- VCT
    def vct(
        self, attacker: Color, max_threats: int = VCT_MAX_THREATS, max_fours: int = VCF_MAX_FOURS
    ) -> list[Square] | None:
        """A VCT for ``attacker`` moving now, or None: the principal line, starting with the attacker's
        move. After a three it continues with the defender's first relevant reply; it stops after the three
        when no reply needs a search of its own (each loses to the same VCF).

        :raises ThreatTimeout: if the budget runs out.
        """
        line = self.vcf(attacker, max_fours)
        if line is not None:
            return line
        return self._vct(attacker, max_threats, max_fours)

    def _vct(self, attacker: Color, threats_left: int, max_fours: int) -> list[Square] | None:
        board = self.board
        defender = other(attacker)
        if threats_left <= 0:
            return None
        memo_key = board.hash ^ attacker
        if self._failed_vct.get(memo_key, -1) >= threats_left:
            return None
        self._tick()
        counter = board.win_squares(defender)
        if counter:
            # The defender's four must be blocked. The block is no threat, but the attacker's standing threes
            # may still win against whatever the defender does with the tempo.
            line = None
            if len(counter) == 1:
                (block,) = counter
                board.place(block, attacker)
                try:
                    line = self._refute_all(attacker, threats_left, max_fours)
                finally:
                    board.remove()
            if line is None:
                self._failed_vct[memo_key] = threats_left
                return None
            return [block, *line]
        threes = _ordered(board, board.three_squares(attacker), attacker)[:VCT_MAX_THREES]
        for move in threes:
            board.place(move, attacker)
            try:
                line = self._refute_all(attacker, threats_left, max_fours)
            finally:
                board.remove()
            if line is not None:
                return [move, *line]
        self._failed_vct[memo_key] = threats_left
        return None

    def _refute_all(self, attacker: Color, threats_left: int, max_fours: int) -> list[Square] | None:
        """The defender is to move after the attacker's three: the attacker's winning line against the first
        relevant reply if every reply loses, else None."""
        board = self.board
        defender = other(attacker)
        if board.win_squares(defender):
            return None  # the defender would win at once
        proof = self.vcf(attacker, max_fours)  # as if the defender passed
        if proof is None:
            return None  # not a threat
        first: list[Square] | None = None
        for reply in self.relevant_replies(attacker, proof):
            board.place(reply, defender)
            try:
                if board.has_five(defender):
                    return None
                line = self.vct(attacker, threats_left - 1, max_fours)
            finally:
                board.remove()
            if line is None:
                return None
            if first is None:
                first = [reply, *line]
        return first if first is not None else []

    def relevant_replies(self, attacker: Color, proof: list[Square]) -> list[Square]:
        """The defender's replies after which the attacker's VCF ``proof`` (played as if the defender had
        passed) no longer wins: exactly the replies that need a search of their own."""
        board = self.board
        defender = other(attacker)
        zone: set[Square] = set(board.four_squares(defender))
        width, height = board.width, board.height
        for square in proof:
            x0, y0 = board.xy(square)
            for dx, dy in ((1, 0), (0, 1), (1, 1), (-1, 1)):
                for step in range(-_ZONE_REACH, _ZONE_REACH + 1):
                    x, y = x0 + dx * step, y0 + dy * step
                    if 0 <= x < width and 0 <= y < height:
                        zone.add(y * width + x)
        cells = board.cells
        return [sq for sq in sorted(zone) if cells[sq] == EMPTY and not _replays(board, attacker, proof, sq)]


def _replays(board: GomokuBoard, attacker: Color, proof: list[Square], blocker: Square) -> bool:
    """Whether the VCF ``proof`` still wins, move for move, after the defender puts a stone on ``blocker``."""
    board.place(blocker, other(attacker))
    try:
        return not board.has_five(other(attacker)) and verify_vcf(board, attacker, proof)
    finally:
        board.remove()


def _ordered(board: GomokuBoard, moves: set[Square], color: Color) -> list[Square]:
    """``moves`` best first by how much a ``color`` stone there raises its static score (ties by square)."""
    gains: list[tuple[int, Square]] = []
    for move in moves:
        before = board.scores[color]
        board.place(move, color)
        gains.append((before - board.scores[color], move))
        board.remove()
    gains.sort()
    return [move for _, move in gains]


def verify_vcf(board: GomokuBoard, attacker: Color, line: list[Square]) -> bool:
    """Whether ``line`` is a VCF for ``attacker`` to move here: attacker moves (even places) each a four, a
    five or a block of the defender's only four that is itself a four; defender moves (odd places) each the
    only square that stops the five; the last attacker move makes a five or a four with two winning
    squares. The board is left unchanged."""
    defender = other(attacker)
    placed = 0
    try:
        for i in range(0, len(line), 2):
            move = line[i]
            if board.cells[move] != EMPTY:
                return False
            if move in board.win_squares(attacker):
                return True
            threats = board.win_squares(defender)
            if len(threats) > 1 or (threats and move not in threats):
                return False
            board.place(move, attacker)
            placed += 1
            wins = board.win_squares(attacker)
            if len(wins) >= 2:
                return True
            if len(wins) != 1 or i + 1 >= len(line) or line[i + 1] not in wins:
                return False
            board.place(line[i + 1], defender)
            placed += 1
            if board.has_five(defender):
                return False
        return False
    finally:
        for _ in range(placed):
            board.remove()
