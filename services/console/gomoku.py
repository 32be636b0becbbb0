"""Five in a row against the engine on the console's page (``/gomoku``): the game, with no I/O.

:class:`GomokuGame` holds one game (the board, the rule, the level, the person's side, the moves, the
result) and checks every request against it; the endpoints in :mod:`services.console.server` only decode
JSON and run the engine's turn in a worker thread. The engine searches a board of its own (a twin kept
move for move), never the one the page is shown, so a state read while it thinks sees the position as it
was played, not the search's trial stones.

Only one engine move is computed at a time: :attr:`GomokuGame.thinking` is set and cleared on the event
loop, and while it is set every change is refused (:class:`~services.console.core.Conflict`, a 409).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal

import msgspec

from engine.gomoku.board import DIRECTIONS, GomokuBoard, Square
from engine.gomoku.patterns import has_five
from engine.gomoku.player import LEVELS, Decision, GomokuPlayer
from engine.gomoku.rules import BLACK, DEFAULT_SIZE, EMPTY, WHITE, Color, GomokuError, Rule, check_size

from .core import BadRequest, Conflict

#: The page's level unless it asks for another: one second a move (``hard`` takes three, on a device whose
#: cores also run the robot).
PAGE_LEVEL: Final = "medium"
_MARKS: Final = {EMPTY: ".", BLACK: "X", WHITE: "O"}
_SIDES: Final = {"X": BLACK, "O": WHITE}


class NewRequest(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """``POST /api/gomoku/new``: a fresh game; the person plays ``side`` (X, black, moves first)."""

    size: int = DEFAULT_SIZE
    rule: str = Rule.FREESTYLE.value
    level: str = PAGE_LEVEL
    side: Literal["X", "O"] = "X"


class MoveRequest(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """``POST /api/gomoku/move``: the person's stone on column ``x``, row ``y`` (from 0, top left)."""

    x: int
    y: int


@dataclass(frozen=True, slots=True)
class EngineMove:
    """The engine's last move and how it was found (shown on the page)."""

    square: Square
    reason: str
    depth: int
    nodes: int
    seconds: float


def winning_line(board: GomokuBoard, square: Square) -> list[Square]:
    """The winning row through ``square`` (the stones of the run, in order), or [] if it makes none.

    A five can only appear with the stone that completes it, so the last move's four directions are all
    that needs looking at; the engine's own test of a run (:func:`engine.gomoku.patterns.has_five`) decides
    whether it wins under the board's rule (longer than five: only under freestyle).
    """
    color = board.cells[square]
    if color not in (BLACK, WHITE):
        return []
    x0, y0 = board.xy(square)
    for dx, dy in DIRECTIONS:
        ahead, behind = _run(board, x0, y0, dx, dy, color), _run(board, x0, y0, -dx, -dy, color)
        run = [*behind[::-1], square, *ahead]
        if has_five(len(run), (1 << len(run)) - 1, board.rule.exact):
            return run
    return []


def _run(board: GomokuBoard, x: int, y: int, dx: int, dy: int, color: Color) -> list[Square]:
    """The squares of ``color`` in a row from (x, y), not counting it, stepping by (dx, dy)."""
    out: list[Square] = []
    x, y = x + dx, y + dy
    while 0 <= x < board.width and 0 <= y < board.height and board.cells[y * board.width + x] == color:
        out.append(y * board.width + x)
        x, y = x + dx, y + dy
    return out


class GomokuGame:
    """One game against the engine. Methods that change it run on the event loop; :meth:`think` alone runs
    in a worker thread, and only while :attr:`thinking` is set."""

    def __init__(self) -> None:
        self.thinking = False
        self.new(NewRequest())

    # ------------------------------------------------------------------------------------------ changes
    def new(self, req: NewRequest) -> None:
        """Start a fresh game as ``req`` says.

        :raises BadRequest: on a bad size, rule or level. :raises Conflict: while the engine thinks.
        """
        self._check_idle()
        try:
            size = check_size(req.size)
            rule = Rule(req.rule)
        except GomokuError as exc:
            raise BadRequest(str(exc)) from None
        except ValueError:
            raise BadRequest(
                f"unknown rule {req.rule!r}: use one of {', '.join(r.value for r in Rule)}"
            ) from None
        if req.level not in LEVELS:
            raise BadRequest(f"unknown level {req.level!r}: use one of {', '.join(LEVELS)}")
        self.board = GomokuBoard(size, rule=rule)
        self._twin = GomokuBoard(size, rule=rule)
        self.engine = GomokuPlayer(self._twin, req.level)
        self.level = req.level
        self.person: Color = _SIDES[req.side]
        self.engine_move: EngineMove | None = None
        self.line: list[Square] = []

    def play(self, req: MoveRequest) -> None:
        """The person's stone on (``req.x``, ``req.y``).

        :raises BadRequest: off the board. :raises Conflict: the square is taken, the game is over, the
            engine is thinking or it is not the person's turn.
        """
        self._check_idle()
        if not (0 <= req.x < self.board.width and 0 <= req.y < self.board.height):
            raise BadRequest(f"{req.x},{req.y} is off the {self.board.width} x {self.board.height} board")
        if self.over:
            raise Conflict("the game is over: start a new one")
        if self.board.to_move != self.person:
            raise Conflict("it is not your turn: the engine is to move")
        square = self.board.index(req.x, req.y)
        if self.board.cells[square] != EMPTY:
            raise Conflict(f"{req.x},{req.y} is taken")
        self._place(square)

    def begin_thinking(self) -> bool:
        """Claim the engine's turn: True if the engine is to move and now thinking (call :meth:`think` in a
        worker thread, then :meth:`finish`); False if it has nothing to do."""
        if self.thinking or self.over or self.board.to_move == self.person:
            return False
        self.thinking = True
        return True

    def think(self) -> Decision:
        """The engine's choice within its level's time (blocking: runs in a worker thread, on the twin)."""
        return self.engine.choose()

    def finish(self, decision: Decision | None) -> None:
        """Play the engine's ``decision`` (None: it failed, nothing is played) and end its turn."""
        try:
            if decision is not None:
                self._place(decision.move)
                self.engine_move = EngineMove(
                    decision.move, decision.reason, decision.depth, decision.nodes, decision.elapsed
                )
        finally:
            self.thinking = False

    def _place(self, square: Square) -> None:
        self.board.play(square)
        self._twin.play(square)
        self.line = winning_line(self.board, square)

    def _check_idle(self) -> None:
        if self.thinking:
            raise Conflict("the engine is thinking: wait for its move")

    # -------------------------------------------------------------------------------------------- views
    @property
    def over(self) -> bool:
        """Whether someone has five or the board is full."""
        return self.board.winner() is not None or EMPTY not in self.board.cells

    def view(self) -> dict[str, Any]:
        """The game as the page shows it (``GET /api/gomoku/state``)."""
        board = self.board
        winner = board.winner()
        result: dict[str, Any] | None = None
        if winner is not None:
            result = {"winner": _MARKS[winner], "line": [list(board.xy(sq)) for sq in self.line]}
        elif EMPTY not in board.cells:
            result = {"winner": None, "line": []}
        engine = self.engine_move
        return {
            "ok": True,
            "size": board.width,
            "rule": board.rule.value,
            "level": self.level,
            "person": _MARKS[self.person],
            "engine": _MARKS[3 - self.person],
            "to_move": _MARKS[board.to_move],
            "your_turn": result is None and board.to_move == self.person and not self.thinking,
            "thinking": self.thinking,
            "board": str(board).splitlines(),
            "moves": [list(board.xy(sq)) for sq, _ in board.history],
            "engine_move": None
            if engine is None
            else {
                "x": board.xy(engine.square)[0],
                "y": board.xy(engine.square)[1],
                "reason": engine.reason,
                "depth": engine.depth,
                "nodes": engine.nodes,
                "ms": round(engine.seconds * 1000, 1),
            },
            "result": result,
        }
