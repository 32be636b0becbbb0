"""Asking a person at the terminal: the one prompt helper of the interactive games (`sanzi ttt`,
`sanzi gomoku`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, TextIO

#: answers that mean yes.
YES: Final = frozenset({"y", "yes"})


class EndOfInput(Exception):
    """The input stream ended (or the person quit): the session stops quietly."""


def ask(inp: TextIO, out: TextIO, prompt: str) -> str:
    """Write ``prompt``, read one line and return it stripped.

    :raises EndOfInput: when the input has ended.
    """
    out.write(prompt)
    out.flush()
    line = inp.readline()
    if not line:
        out.write("\n")
        raise EndOfInput
    return line.strip()


def announce_result(out: TextIO, winner: object, person: object, engine: object, draw: str) -> None:
    """Tell the person who won the game that just ended (``winner``: ``person``, ``engine`` or
    neither, which is the ``draw`` sentence)."""
    if winner == person:
        out.write("You win!\n")
    elif winner == engine:
        out.write("The engine wins.\n")
    else:
        out.write(draw + "\n")


def play_games(
    inp: TextIO, out: TextIO, person: object, play_one: Callable[[], object], *, once: bool
) -> None:
    """Play games (``play_one`` plays one and returns its winner, None for a draw) until the person
    does not want another (or ``once``), printing the running score after each.

    :raises EndOfInput: when the input ends at the question.
    """
    score = {"you": 0, "engine": 0, "draws": 0}
    while True:
        result = play_one()
        score["draws" if result is None else "you" if result == person else "engine"] += 1
        out.write(f"Score: you {score['you']}, engine {score['engine']}, draws {score['draws']}.\n")
        if once or ask(inp, out, "Play again? [y/N] ").lower() not in YES:
            return
