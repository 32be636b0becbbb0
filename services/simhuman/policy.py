"""How the simulated person chooses a square: perfect, random, greedy, mistake:N (pure, seeded).

Boards are 9-character strings ("X" black, "O" white, "."); squares are 1..9 as on the bus. Each policy
is called with the person's own move count (1 for their first move of the game) and a seeded generator.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Final

import engine

#: a real person at the terminal chooses (``sanzi sim --human you``; see :mod:`.interactive`).
INTERACTIVE_POLICY: Final = "you"
#: a real person clicking in the browser console chooses (``sanzi sim --human web``): the simulated
#: person stands aside, and the page places the pieces and presses the button.
WEB_POLICY: Final = "web"
POLICY_NAMES: Final = ("perfect", "random", "greedy", "mistake:N", INTERACTIVE_POLICY, WEB_POLICY)
#: the policies in which a real person chooses: at the terminal or in the browser console.
PERSON_POLICIES: Final = frozenset({INTERACTIVE_POLICY, WEB_POLICY})


class PolicyError(ValueError):
    """An unknown policy name or a malformed ``mistake:N``."""


def empty_squares(board: str) -> list[int]:
    """Empty squares, 1..9."""
    return [i + 1 for i, c in enumerate(board) if c == "."]


def winning_squares(board: str, piece: str) -> list[int]:
    """Empty squares (1..9) where ``piece`` would complete a line."""
    found = []
    for sq in empty_squares(board):
        i = sq - 1
        after = board[:i] + piece + board[i + 1 :]
        if any(
            all(after[j] == piece for j in line) and i in line for line in engine.GEOMETRY_3X3.line_squares
        ):
            found.append(sq)
    return found


@dataclass
class Policy:
    """A move chooser. ``name`` is the spec it was made from."""

    name: str

    def choose(self, board: str, piece: str, move_index: int, rng: random.Random) -> int:
        """The square (1..9) to play for ``piece`` on ``board`` at the person's ``move_index``-th move.

        :raises PolicyError: when there is no empty square.
        """
        raise NotImplementedError


class PerfectPolicy(Policy):
    def choose(self, board: str, piece: str, move_index: int, rng: random.Random) -> int:
        _need_move(board)
        return engine.choose_move(engine.Board(board), "perfect", rng).number


class RandomPolicy(Policy):
    def choose(self, board: str, piece: str, move_index: int, rng: random.Random) -> int:
        return rng.choice(_need_move(board))


class GreedyPolicy(Policy):
    """Win if possible, else block the opponent's win, else a random empty square."""

    def choose(self, board: str, piece: str, move_index: int, rng: random.Random) -> int:
        empty = _need_move(board)
        wins = winning_squares(board, piece)
        if wins:
            return rng.choice(wins)
        blocks = winning_squares(board, "O" if piece == "X" else "X")
        if blocks:
            return rng.choice(blocks)
        return rng.choice(empty)


@dataclass
class MistakePolicy(Policy):
    """Perfect play, except one losing move at the person's move ``at`` (a move after which the opponent
    wins with perfect play). When no move loses at move ``at`` (e.g. the first move of the game), the
    mistake is made at the first later move where one does."""

    at: int = 1
    made: bool = field(default=False)
    #: the square of the mistake once made (for tests and logs).
    mistake_square: int | None = field(default=None)

    def losing_moves(self, board: str) -> list[int]:
        """Squares after which the side to move (the person) loses with perfect play."""
        b = engine.Board(board)
        losing = []
        for sq in empty_squares(board):
            child = b.play(sq - 1)
            if not child.is_terminal() and engine.solve(child).value == 1:
                losing.append(sq)
        return losing

    def choose(self, board: str, piece: str, move_index: int, rng: random.Random) -> int:
        _need_move(board)
        if not self.made and move_index >= self.at:
            losing = self.losing_moves(board)
            if losing:
                self.made = True
                self.mistake_square = rng.choice(losing)
                return self.mistake_square
        return engine.choose_move(engine.Board(board), "perfect", rng).number


class InteractivePolicy(Policy):
    """Policy "you" or "web": a real person chooses, at the terminal (see :mod:`.interactive`) or by
    clicking in the browser console (the simulated person then does nothing); never asked here."""

    def choose(self, board: str, piece: str, move_index: int, rng: random.Random) -> int:
        raise PolicyError(f"policy {self.name!r}: a real person chooses the square")


def _need_move(board: str) -> list[int]:
    empty = empty_squares(board)
    if not empty:
        raise PolicyError(f"no empty square on {board}")
    return empty


def make_policy(spec: str) -> Policy:
    """``"perfect"``, ``"random"``, ``"greedy"`` or ``"mistake:N"`` (N >= 1) -> a :class:`Policy`.

    ``"you"`` and ``"web"`` give an :class:`InteractivePolicy` (the terminal, or the browser, chooses).

    :raises PolicyError: for anything else.
    """
    name, _, arg = spec.strip().partition(":")
    if name == "perfect" and not arg:
        return PerfectPolicy(spec)
    if name == "random" and not arg:
        return RandomPolicy(spec)
    if name in PERSON_POLICIES and not arg:
        return InteractivePolicy(spec)
    if name == "greedy" and not arg:
        return GreedyPolicy(spec)
    if name == "mistake":
        try:
            at = int(arg)
        except ValueError:
            raise PolicyError(f"mistake needs the move number, e.g. mistake:2; got {spec!r}") from None
        if at < 1:
            raise PolicyError(f"mistake:N counts the person's moves from 1; got {spec!r}")
        return MistakePolicy(spec, at=at)
    raise PolicyError(f"unknown policy {spec!r}; choose one of {', '.join(POLICY_NAMES)}")
