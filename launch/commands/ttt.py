"""``sanzi ttt``: play tic-tac-toe against the engine in the terminal.

Squares are typed as 1-9, laid out like a phone keypad (1 2 3 on the top row, 5 the centre); the board is
printed after every move with the numbers of the empty squares shown. ``?`` shows the engine's evaluation of
the position, ``h`` the help, ``q`` quits. Bad input is answered with a clear message and asked again.

The game itself is :func:`play_session`, which reads from and writes to the streams it is given, so it can be
driven by scripted input in tests.
"""

from __future__ import annotations

import argparse
import random
import sys
from typing import Final, TextIO

from engine import (
    LEVELS,
    Board,
    EngineError,
    Player,
    choose_move,
    other,
    solve,
    square_from_number,
    square_number,
)
from launch.terminal import EndOfInput, announce_result, ask, play_games

_SIDE_WORDS: Final[dict[str, Player]] = {
    "x": "X",
    "black": "X",
    "b": "X",
    "1": "X",
    "first": "X",
    "o": "O",
    "white": "O",
    "w": "O",
    "2": "O",
    "second": "O",
}
_QUIT: Final = frozenset({"q", "quit", "exit"})
_EVAL: Final = frozenset({"?", "e", "eval", "evaluation"})
_HELP: Final = frozenset({"h", "help"})

_KEYPAD: Final = Board().pretty(numbers=True)

_HELP_TEXT: Final = f"""\
Type the number of an empty square to play there; the squares are numbered like a phone keypad:
{_KEYPAD}
Other commands: ? shows the engine's evaluation, h this help, q quits."""


def ask_side(inp: TextIO, out: TextIO) -> Player:
    """Ask which side the person plays until the answer is understood. Default: X."""
    while True:
        answer = ask(inp, out, "Play X (black, moves first) or O (white)? [X] ").lower()
        if not answer:
            return "X"
        if answer in _QUIT:
            raise EndOfInput
        if answer in _SIDE_WORDS:
            return _SIDE_WORDS[answer]
        out.write(
            f"{answer!r} is not a side: type X (or black) to move first, O (or white) to move second.\n"
        )


def ask_level(inp: TextIO, out: TextIO) -> str:
    """Ask for a difficulty level (a name, or its number in the list) until understood. Default: perfect."""
    names = list(LEVELS)
    listing = ", ".join(f"{i}={name}" for i, name in enumerate(names, 1))
    while True:
        answer = ask(inp, out, f"Level ({listing})? [perfect] ").lower()
        if not answer:
            return "perfect"
        if answer in _QUIT:
            raise EndOfInput
        if answer in LEVELS:
            return answer
        if answer.isdigit() and 1 <= int(answer) <= len(names):
            return names[int(answer) - 1]
        out.write(f"{answer!r} is not a level: type one of {', '.join(names)} (or 1-{len(names)}).\n")


def describe_evaluation(board: Board, person: Player) -> str:
    """The engine's view of ``board`` for people: result with perfect play, best squares, main line."""
    evaluation = solve(board)
    mover = board.to_move()
    if mover == person:
        verdict = {1: "you win", 0: "a draw", -1: "you lose"}[evaluation.value]
    else:
        verdict = {1: "the engine wins", 0: "a draw", -1: "the engine loses"}[evaluation.value]
    plies = evaluation.distance
    timing = "" if plies is None else f" in {plies} move{'s' if plies != 1 else ''} (both sides counted)"
    best = " ".join(str(square_number(sq)) for sq in evaluation.best_moves)
    line = " ".join(str(square_number(sq)) for sq in evaluation.pv)
    return (
        f"Evaluation ({mover} to move): with perfect play, {verdict}{timing}.\n"
        f"  best squares for {mover}: {best}\n"
        f"  main line: {line}"
    )


def ask_move(inp: TextIO, out: TextIO, board: Board, person: Player) -> int:
    """Ask for the person's square until a legal one is given; returns it 0-based."""
    while True:
        answer = ask(inp, out, f"Your move as {person} (1-9, ? evaluation, h help, q quit): ").lower()
        if answer in _QUIT:
            raise EndOfInput
        if answer in _EVAL:
            out.write(describe_evaluation(board, person) + "\n")
            continue
        if answer in _HELP:
            out.write(_HELP_TEXT + "\n")
            continue
        if not answer:
            out.write("Type the number (1-9) of an empty square.\n")
            continue
        if not answer.isdigit():
            out.write(f"{answer!r} is not a square: type a number 1-9 as on a phone keypad, or h for help.\n")
            continue
        number = int(answer)
        if not 1 <= number <= 9:
            out.write(f"There is no square {number}: the squares are 1-9.\n")
            continue
        square = square_from_number(number)
        taken = board.piece_at(square)
        if taken is not None:
            free = " ".join(str(square_number(sq)) for sq in board.legal_moves())
            out.write(f"Square {number} is taken by {taken}; empty squares: {free}.\n")
            continue
        return square


def play_game(
    inp: TextIO,
    out: TextIO,
    *,
    person: Player,
    level: str,
    rng: random.Random,
    first_square: int | None = None,
) -> Player | None:
    """Play one game; returns the winner (or None for a draw).

    ``first_square`` is the engine's opening square as people number it (1-9), used when it moves first.

    :raises EndOfInput: if the input ends or the person quits.
    """
    board = Board()
    engine_side = other(person)
    out.write(f"\nYou play {person}, the engine plays {engine_side} at level {level}. X moves first.\n")
    opening = None if first_square is None else square_from_number(first_square)
    while not board.is_terminal():
        out.write("\n" + board.pretty(numbers=True) + "\n\n")
        if board.to_move() == person:
            board = board.play(ask_move(inp, out, board, person))
        else:
            choice = choose_move(board, level, rng, first_square=opening)
            board = board.play(choice.square)
            out.write(f"The engine ({engine_side}) plays {choice.number}.\n")
    out.write("\n" + board.pretty(numbers=False) + "\n\n")
    result = board.winner()
    announce_result(out, result, person, engine_side, "Draw.")
    return result


def play_session(
    inp: TextIO,
    out: TextIO,
    *,
    side: Player | None = None,
    level: str | None = None,
    rng: random.Random | None = None,
    first_square: int | None = None,
    once: bool = False,
) -> int:
    """The whole terminal session: ask what was not given, play games until the person stops.

    Returns the exit code (0; the end of input or ``q`` ends the session normally).
    """
    generator = rng if rng is not None else random.Random()
    out.write("sanzi ttt: tic-tac-toe against the engine. Squares are numbered like a phone keypad:\n")
    out.write(_KEYPAD + "\n\n")
    try:
        person = side if side is not None else ask_side(inp, out)
        chosen_level = level if level is not None else ask_level(inp, out)

        def one() -> Player | None:
            return play_game(
                inp, out, person=person, level=chosen_level, rng=generator, first_square=first_square
            )

        play_games(inp, out, person, one, once=once)
    except EndOfInput:
        pass
    out.write("Bye.\n")
    return 0


def _square_number_arg(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a square number 1-9") from None
    if not 1 <= value <= 9:
        raise argparse.ArgumentTypeError(f"{value} is not a square number 1-9")
    return value


def _side_arg(text: str) -> Player:
    side = _SIDE_WORDS.get(text.strip().lower())
    if side is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a side: use X (black, first) or O (white)")
    return side


def _level_arg(text: str) -> str:
    name = text.strip().lower()
    if name not in LEVELS:
        raise argparse.ArgumentTypeError(f"{text!r} is not a level: use one of {', '.join(LEVELS)}")
    return name


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--side", type=_side_arg, help="your side: X (black, moves first) or O; default: ask")
    parser.add_argument("--level", type=_level_arg, help=f"engine level: {', '.join(LEVELS)}; default: ask")
    parser.add_argument(
        "--first-square",
        type=_square_number_arg,
        metavar="N",
        help="the engine's opening square 1-9 when it moves first (contest task 4)",
    )
    parser.add_argument("--seed", type=int, help="seed the engine's random choices (reproducible games)")
    parser.add_argument("--once", action="store_true", help="play one game, then exit")


def run(args: argparse.Namespace) -> int:
    try:
        return play_session(
            sys.stdin,
            sys.stdout,
            side=args.side,
            level=args.level,
            rng=random.Random(args.seed),
            first_square=args.first_square,
            once=args.once,
        )
    except EngineError as exc:  # pragma: no cover - every input is checked before it reaches the engine
        print(f"sanzi ttt: {exc}", file=sys.stderr)
        return 1
