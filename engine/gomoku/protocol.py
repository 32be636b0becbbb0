"""The Gomocup brain protocol (Piskvork's "new protocol"), as a pure state machine: a line in, lines out.

The manager sends one command per line; the brain answers as the protocol says:

=====================  =================================================================================
``START n``            a new empty n x n board: ``OK``, or ``ERROR message`` for an unsupported size
``RECTSTART w,h``      the same for a w x h board
``RESTART``            a new empty board of the same size: ``OK``
``BEGIN``              the brain opens the game: its move ``x,y``
``TURN x,y``           the opponent played x,y: the brain's move ``x,y``
``BOARD`` ... ``DONE``  a whole position, one ``x,y,field`` line per stone (1 own, 2 opponent, 3 a stone of
                       a continuous game that blocks both), then the brain's move
``INFO key value``     no answer; ``timeout_turn``, ``timeout_match``, ``time_left`` (ms), ``max_memory``
                       (bytes) and ``rule`` (bit 1 exactly five; bit 4 renju, unsupported) are used
``TAKEBACK x,y``       remove the stone at x,y: ``OK``
``PLAY x,y``           the brain must play x,y: it does and answers ``x,y``
``ABOUT``              ``name="...", version="...", author="..."``
``END``                no answer; the brain exits
=====================  =================================================================================

Coordinates are ``x,y`` from 0, x the column. Any other command is answered ``UNKNOWN``; a malformed or
impossible command (bad numbers, an occupied square, a move before ``START``) is answered ``ERROR`` with
the reason, and the brain carries on. Inside ``BOARD``, a bad stone line is reported and skipped; a command
other than ``DONE`` drops the unfinished position (with an ``ERROR``) and is obeyed.

Problems found in ``INFO`` lines are held back until the next command
that is not ``INFO`` (the manager does not read answers to ``INFO``), then sent as ``MESSAGE`` lines.

Each move is chosen within ``timeout_turn`` less a safety margin (:func:`engine.gomoku.clock.turn_budget`),
counted from the moment the command arrived.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Final

from .board import GomokuBoard, Square
from .clock import Clock, turn_budget
from .player import DEFAULT_LEVEL, GomokuPlayer
from .rules import BLACK, WALL, WHITE, GomokuError, Rule, check_size, other, rule_from_bits

ABOUT: Final = 'name="sanzi-gomoku", version="0.1", author="sanzi engineers"'
#: Protocol values of a BOARD line's field.
FIELD_OWN: Final = 1
FIELD_OPPONENT: Final = 2
FIELD_WALL: Final = 3
#: Bytes a transposition table entry costs, roughly, for turning ``max_memory`` into a table size.
_BYTES_PER_ENTRY: Final = 400
#: Longest command echoed back in an error message.
_ECHO_LIMIT: Final = 60


class ProtocolError(Exception):
    """A command that is known but malformed or impossible now (answered ``ERROR``)."""


@dataclass
class Limits:
    """What the manager said about time and memory (``None``: not said)."""

    timeout_turn_ms: int | None = None
    timeout_match_ms: int | None = None
    time_left_ms: int | None = None
    max_memory_bytes: int | None = None


@dataclass
class Reply:
    """The brain's answer to one line: lines to write (in order) and whether to exit."""

    lines: list[str] = field(default_factory=list)
    finished: bool = False


class Brain:
    """One brain: feed it the manager's lines with :meth:`handle` and write back what it returns."""

    def __init__(self, level: str = DEFAULT_LEVEL, clock: Clock = time.perf_counter, debug: bool = False):
        self.level = level
        self.clock = clock
        self.debug = debug
        self.limits = Limits()
        self.rule = Rule.FREESTYLE
        self.board: GomokuBoard | None = None
        self.player: GomokuPlayer | None = None
        self._board_lines: list[tuple[int, int, int]] | None = None
        self._held: list[str] = []

    # ------------------------------------------------------------------------------------------ input
    def handle(self, line: str) -> Reply:
        """Process one line from the manager. Never raises on bad input: it becomes an ``ERROR`` line."""
        received = self.clock()
        text = line.strip()
        if not text:
            return Reply()
        words = text.split(None, 1)
        command = words[0].upper()
        argument = words[1].strip() if len(words) > 1 else ""
        reply = Reply()
        if self._board_lines is not None and command != "DONE":
            if command not in _HANDLERS:
                return self._board_line(text)
            # A command inside BOARD: the manager gave up on the position. Say so and obey the command.
            self._board_lines = None
            reply.lines.append(f"ERROR BOARD ended by {command} without DONE; the position was dropped")
        if command != "INFO":
            reply.lines.extend(self._held)
            self._held.clear()
        handler = _HANDLERS.get(command)
        if handler is None:
            reply.lines.append(f"UNKNOWN command {_echo(text)} is not supported")
            return reply
        try:
            handler(self, argument, received, reply)
        except ProtocolError as exc:
            reply.lines.append(f"ERROR {exc}")
        except GomokuError as exc:
            reply.lines.append(f"ERROR {exc}")
        return reply

    # ----------------------------------------------------------------------------------------- commands
    def _start(self, argument: str, received: float, reply: Reply) -> None:
        size = _integer(argument, "START needs the board size, e.g. START 15")
        self._new_board(check_size(size), check_size(size))
        reply.lines.append("OK")

    def _rectstart(self, argument: str, received: float, reply: Reply) -> None:
        width, height = _pair(argument, "RECTSTART needs width,height, e.g. RECTSTART 20,15")
        self._new_board(check_size(width), check_size(height))
        reply.lines.append("OK")

    def _restart(self, argument: str, received: float, reply: Reply) -> None:
        board = self._need_board()
        self._new_board(board.width, board.height)
        reply.lines.append("OK")

    def _begin(self, argument: str, received: float, reply: Reply) -> None:
        self._need_board()
        self._move(received, reply)

    def _turn(self, argument: str, received: float, reply: Reply) -> None:
        board = self._need_board()
        x, y = _pair(argument, "TURN needs the opponent's move x,y, e.g. TURN 7,7")
        board.play(board.index(x, y))
        self._move(received, reply)

    def _play(self, argument: str, received: float, reply: Reply) -> None:
        board = self._need_board()
        x, y = _pair(argument, "PLAY needs the move x,y, e.g. PLAY 7,7")
        board.play(board.index(x, y))
        reply.lines.append(f"{x},{y}")

    def _board(self, argument: str, received: float, reply: Reply) -> None:
        self._need_board()
        self._board_lines = []

    def _done(self, argument: str, received: float, reply: Reply) -> None:
        if self._board_lines is None:
            raise ProtocolError("DONE without BOARD")
        stones, self._board_lines = self._board_lines, None
        board = self._need_board()
        own = sum(1 for *_, f in stones if f == FIELD_OWN)
        opponent = sum(1 for *_, f in stones if f == FIELD_OPPONENT)
        me = WHITE if own < opponent else BLACK  # black has as many stones as white, or one more
        fresh = GomokuBoard(board.width, board.height, self.rule)
        colours = {FIELD_OWN: me, FIELD_OPPONENT: other(me), FIELD_WALL: WALL}
        for x, y, f in stones:
            square = fresh.index(x, y)
            fresh.check_empty(square)
            fresh.place(square, colours[f])
        fresh.set_to_move(me)
        self._use(fresh)
        self._move(received, reply)

    def _board_line(self, text: str) -> Reply:
        assert self._board_lines is not None
        parts = text.split(",")
        try:
            x, y, f = (int(p) for p in parts)
        except ValueError:
            return Reply([f"ERROR BOARD line {_echo(text)} is not x,y,field; ignored"])
        board = self._need_board()
        if f not in (FIELD_OWN, FIELD_OPPONENT, FIELD_WALL) or not (
            0 <= x < board.width and 0 <= y < board.height
        ):
            return Reply([f"ERROR BOARD line {_echo(text)}: field must be 1-3 and x,y on the board; ignored"])
        self._board_lines.append((x, y, f))
        return Reply()

    def _takeback(self, argument: str, received: float, reply: Reply) -> None:
        board = self._need_board()
        x, y = _pair(argument, "TAKEBACK needs the square x,y, e.g. TAKEBACK 7,7")
        square = board.index(x, y)
        if board.cells[square] == 0:
            raise ProtocolError(f"no stone at {x},{y} to take back")
        if board.history and board.history[-1][0] == square:
            board.undo()
        else:
            # Not the last stone: rebuild without it, keeping the order of the others.
            fresh = GomokuBoard(board.width, board.height, self.rule)
            for sq, colour in board.history:
                if sq != square:
                    fresh.place(sq, colour)
            fresh.set_to_move(board.cells[square])
            self._use(fresh)
        reply.lines.append("OK")

    def _info(self, argument: str, received: float, reply: Reply) -> None:
        parts = argument.split(None, 1)
        if len(parts) != 2:
            self._held.append(f"MESSAGE INFO {_echo(argument)} needs a key and a value; ignored")
            return
        key, value = parts[0].lower(), parts[1].strip()
        numeric = {"timeout_turn", "timeout_match", "time_left", "max_memory", "rule", "game_type"}
        if key not in numeric:
            return  # evaluate, folder and keys of later versions: not needed
        try:
            number = int(value)
        except ValueError:
            self._held.append(f"MESSAGE INFO {key} {_echo(value)} is not a number; ignored")
            return
        if key == "timeout_turn":
            self.limits.timeout_turn_ms = number
        elif key == "timeout_match":
            self.limits.timeout_match_ms = number
        elif key == "time_left":
            self.limits.time_left_ms = number
        elif key == "max_memory":
            self.limits.max_memory_bytes = number
            if self.player is not None:
                self.player.searcher.max_entries = self._table_entries()
        elif key == "rule":
            try:
                rule = rule_from_bits(number)
            except GomokuError as exc:
                self._held.append(f"MESSAGE {exc}; playing exactly five")
                rule = Rule.STANDARD
            if rule != self.rule:
                self.rule = rule
                if self.board is not None:
                    fresh = GomokuBoard(self.board.width, self.board.height, rule)
                    for sq, colour in self.board.history:
                        fresh.place(sq, colour)
                    fresh.set_to_move(self.board.to_move)
                    self._use(fresh)

    def _about(self, argument: str, received: float, reply: Reply) -> None:
        reply.lines.append(ABOUT)

    def _end(self, argument: str, received: float, reply: Reply) -> None:
        reply.finished = True

    # ------------------------------------------------------------------------------------------ helpers
    def _need_board(self) -> GomokuBoard:
        if self.board is None:
            raise ProtocolError("no board yet: send START first")
        return self.board

    def _new_board(self, width: int, height: int) -> None:
        self._board_lines = None
        self._use(GomokuBoard(width, height, self.rule))

    def _use(self, board: GomokuBoard) -> None:
        self.board = board
        if self.player is None:
            self.player = GomokuPlayer(board, self.level, self.clock)
        else:
            self.player.reset(board)
        self.player.searcher.max_entries = self._table_entries()

    def _table_entries(self) -> int:
        memory = self.limits.max_memory_bytes
        if not memory:
            return 2_000_000
        return max(10_000, memory // 2 // _BYTES_PER_ENTRY)

    def _move(self, received: float, reply: Reply) -> None:
        board = self._need_board()
        assert self.player is not None
        if not board.candidates():
            raise ProtocolError("the board is full: no move left")
        budget = turn_budget(self.limits.timeout_turn_ms, self.limits.time_left_ms)
        remaining = budget - (self.clock() - received)
        decision = self.player.choose(max(0.0, remaining))
        square: Square = decision.move
        board.play(square)
        if self.debug:
            reply.lines.append(
                f"DEBUG {decision.reason} depth={decision.depth} nodes={decision.nodes} "
                f"score={decision.score} time={decision.elapsed:.3f}s"
            )
        x, y = board.xy(square)
        reply.lines.append(f"{x},{y}")


def _integer(text: str, usage: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise ProtocolError(f"{usage} (got {_echo(text)})") from None


def _pair(text: str, usage: str) -> tuple[int, int]:
    parts = text.split(",")
    if len(parts) != 2:
        raise ProtocolError(f"{usage} (got {_echo(text)})")
    return _integer(parts[0], usage), _integer(parts[1], usage)


def _echo(text: str) -> str:
    return repr(text if len(text) <= _ECHO_LIMIT else text[:_ECHO_LIMIT] + "...")


_HANDLERS: Final = {
    "START": Brain._start,
    "RECTSTART": Brain._rectstart,
    "RESTART": Brain._restart,
    "BEGIN": Brain._begin,
    "TURN": Brain._turn,
    "PLAY": Brain._play,
    "BOARD": Brain._board,
    "DONE": Brain._done,
    "TAKEBACK": Brain._takeback,
    "INFO": Brain._info,
    "ABOUT": Brain._about,
    "END": Brain._end,
}
