"""``sanzi gomoku``: play five in a row against the engine in the terminal.

The board (15 x 15 unless ``--size``) is printed with columns lettered from ``A`` and rows numbered from 1 at
the top; a move is typed as column and row (``h8``, ``H8``) or as the protocol's ``x,y`` from 0 (``7,7``).
``?`` shows the engine's view of the position, ``u`` takes back your last move and the engine's reply,
``h`` the help, ``q`` quits. Bad input is answered with a clear message and asked again.

The game itself is :func:`play_session`, which reads from and writes to the streams it is given, so tests
drive it with scripted input (as for ``sanzi ttt``).
"""

from __future__ import annotations

import argparse
import sys
from typing import Final, TextIO

from engine.gomoku.board import GomokuBoard, Square
from engine.gomoku.player import DEFAULT_LEVEL, LEVELS, GomokuPlayer
from engine.gomoku.rules import BLACK, DEFAULT_SIZE, MAX_SIZE, MIN_SIZE, WHITE, Color, GomokuError, Rule
from engine.gomoku.threats import ThreatSearch, ThreatTimeout
from launch.terminal import EndOfInput, announce_result, ask, play_games

_COLUMNS: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef"
_SIDE_WORDS: Final[dict[str, Color]] = {
    "x": BLACK,
    "black": BLACK,
    "b": BLACK,
    "first": BLACK,
    "1": BLACK,
    "o": WHITE,
    "white": WHITE,
    "w": WHITE,
    "second": WHITE,
    "2": WHITE,
}
_NAMES: Final = {BLACK: "X (black)", WHITE: "O (white)"}
_QUIT: Final = frozenset({"q", "quit", "exit"})
_EVAL: Final = frozenset({"?", "e", "eval"})
_HELP: Final = frozenset({"h", "help"})
_UNDO: Final = frozenset({"u", "undo", "takeback"})
#: Seconds the engine's view (``?``) may spend on each side's VCF.
_VIEW_SECONDS: Final = 0.5

_HELP_TEXT: Final = """\
Type a move as column letter and row number (h8) or as x,y from 0 (7,7). Five in a row wins.
Other commands: ? the engine's view, u take back your last move, h this help, q quit."""


def name(board: GomokuBoard, square: Square) -> str:
    """A square as people write it: column letter and row number from the top (``H8`` is the centre of
    15 x 15)."""
    x, y = board.xy(square)
    return f"{_COLUMNS[x]}{y + 1}"


def parse_move(board: GomokuBoard, text: str) -> Square:
    """The square named by ``text`` (``h8`` or ``7,7``).

    :raises GomokuError: saying what is wrong (not a square, off the board, taken).
    """
    text = text.strip()
    if "," in text:
        parts = text.split(",")
        try:
            x, y = (int(p) for p in parts)
        except ValueError:
            raise GomokuError(f"{text!r} is not x,y: type two numbers from 0, e.g. 7,7") from None
    else:
        letter, digits = text[:1].upper(), text[1:]
        if not letter or letter not in _COLUMNS.upper()[: board.width] or not digits.isdigit():
            last = _COLUMNS[board.width - 1]
            raise GomokuError(f"{text!r} is not a square: type a column A-{last} and a row 1-{board.height}")
        x, y = _COLUMNS.upper().index(letter), int(digits) - 1
    square = board.index(x, y)
    board.check_empty(square)
    return square


def render(board: GomokuBoard, last: Square | None = None) -> str:
    """The board for people: X black, O white, ``.`` empty; the last move in brackets."""
    marks = {0: ".", BLACK: "X", WHITE: "O", 3: "#"}
    rows = ["    " + " ".join(_COLUMNS[x] for x in range(board.width))]
    for y in range(board.height):
        row = board.cells[y * board.width : (y + 1) * board.width]
        chars = list(" " + " ".join(marks[c] for c in row) + " ")
        if last is not None and last // board.width == y:
            x = last % board.width
            chars[2 * x], chars[2 * x + 2] = "[", "]"
        rows.append(f"{y + 1:>3}" + "".join(chars).rstrip())
    return "\n".join(rows)


def describe(board: GomokuBoard, person: Color) -> str:
    """The engine's view: who has a forced win by fours, and what the search prefers."""
    lines = []
    for color, who in ((person, "you"), (3 - person, "the engine")):
        search = ThreatSearch(board, max_nodes=50_000)
        try:
            win = search.vcf(color)
        except ThreatTimeout:
            win = None
        if win:
            lines.append(f"  {who}: a win by fours: {' '.join(name(board, sq) for sq in win)}")
        else:
            lines.append(f"  {who}: no win by fours found")
    helper = GomokuPlayer(board, "medium")
    decision = helper.choose(_VIEW_SECONDS)
    lines.append(f"  best move for the side to move: {name(board, decision.move)} ({decision.reason})")
    return "Engine's view:\n" + "\n".join(lines)


def ask_side(inp: TextIO, out: TextIO) -> Color:
    """Ask which side the person plays until understood. Default: X (black, first)."""
    while True:
        answer = ask(inp, out, "Play X (black, moves first) or O (white)? [X] ").lower()
        if not answer:
            return BLACK
        if answer in _QUIT:
            raise EndOfInput
        if answer in _SIDE_WORDS:
            return _SIDE_WORDS[answer]
        out.write(f"{answer!r} is not a side: type X (black, first) or O (white).\n")


def ask_move(inp: TextIO, out: TextIO, board: GomokuBoard, person: Color) -> Square | None:
    """The person's move, or None to take back. Asks again until a legal move or a command is given."""
    while True:
        answer = ask(inp, out, f"Your move as {_NAMES[person]} (e.g. h8; ? u h q): ")
        low = answer.lower()
        if low in _QUIT:
            raise EndOfInput
        if low in _HELP:
            out.write(_HELP_TEXT + "\n")
            continue
        if low in _EVAL:
            out.write(describe(board, person) + "\n")
            continue
        if low in _UNDO:
            return None
        if not answer:
            out.write("Type a square such as h8.\n")
            continue
        try:
            return parse_move(board, answer)
        except GomokuError as exc:
            out.write(f"{exc}.\n")


def play_game(
    inp: TextIO, out: TextIO, *, person: Color, level: str, size: int, rule: Rule, seconds: float | None
) -> Color | None:
    """Play one game; returns the winner's colour, or None for a draw.

    :raises EndOfInput: if the input ends or the person quits.
    """
    board = GomokuBoard(size, rule=rule)
    engine = GomokuPlayer(board, level)
    engine_side = 3 - person
    out.write(
        f"\nYou play {_NAMES[person]}, the engine plays {_NAMES[engine_side]} at level {level} "
        f"({rule.value}: {'exactly' if rule.exact else 'five or more'} five in a row wins).\n"
    )
    last: Square | None = None
    while board.winner() is None and board.candidates():
        out.write("\n" + render(board, last) + "\n\n")
        if board.to_move == person:
            move = ask_move(inp, out, board, person)
            if move is None:
                mine = [i for i, (_, c) in enumerate(board.history) if c == person]
                if not mine:
                    out.write("Nothing to take back.\n")
                    continue
                while len(board.history) > mine[-1]:
                    board.undo()
                last = board.history[-1][0] if board.history else None
                out.write("Taken back.\n")
                continue
            board.play(move)
            last = move
        else:
            decision = engine.choose(seconds)
            board.play(decision.move)
            last = decision.move
            note = {"vcf": " (a forced win by fours)", "vct": " (a forced win)"}.get(decision.reason, "")
            out.write(f"The engine ({_NAMES[engine_side]}) plays {name(board, decision.move)}{note}.\n")
    out.write("\n" + render(board, last) + "\n\n")
    result = board.winner()
    announce_result(out, result, person, engine_side, "Draw: the board is full.")
    return result


def play_session(
    inp: TextIO,
    out: TextIO,
    *,
    side: Color | None = None,
    level: str = DEFAULT_LEVEL,
    size: int = DEFAULT_SIZE,
    rule: Rule = Rule.FREESTYLE,
    seconds: float | None = None,
    once: bool = False,
) -> int:
    """The whole terminal session: ask what was not given, play games until the person stops. Returns 0."""
    out.write(f"sanzi gomoku: five in a row on {size} x {size} against the engine.\n{_HELP_TEXT}\n")
    try:
        person = side if side is not None else ask_side(inp, out)

        def one() -> Color | None:
            return play_game(inp, out, person=person, level=level, size=size, rule=rule, seconds=seconds)

        play_games(inp, out, person, one, once=once)
    except EndOfInput:
        pass
    out.write("Bye.\n")
    return 0


def _side_arg(text: str) -> Color:
    side = _SIDE_WORDS.get(text.strip().lower())
    if side is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a side: use X (black, first) or O (white)")
    return side


def _size_arg(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a board size") from None
    if not MIN_SIZE <= value <= min(MAX_SIZE, len(_COLUMNS)):
        raise argparse.ArgumentTypeError(f"board size must be {MIN_SIZE}..{MAX_SIZE}, got {value}")
    return value


def _seconds_arg(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0.01 <= value <= 600:
        raise argparse.ArgumentTypeError(f"seconds per move must be 0.01..600, got {value}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--side", type=_side_arg, help="your side: X (black, moves first) or O; default: ask")
    parser.add_argument("--level", choices=list(LEVELS), default=DEFAULT_LEVEL, help="engine level")
    parser.add_argument("--size", type=_size_arg, default=DEFAULT_SIZE, help="board side (default 15)")
    parser.add_argument(
        "--rule", choices=[r.value for r in Rule], default=Rule.FREESTYLE.value, help="which rows win"
    )
    parser.add_argument("--seconds", type=_seconds_arg, help="engine's time per move (default: the level's)")
    parser.add_argument("--once", action="store_true", help="play one game, then exit")


def run(args: argparse.Namespace) -> int:
    return play_session(
        sys.stdin,
        sys.stdout,
        side=args.side,
        level=args.level,
        size=args.size,
        rule=Rule(args.rule),
        seconds=args.seconds,
        once=args.once,
    )
