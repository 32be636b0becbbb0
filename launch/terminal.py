"""Asking a person at the terminal: the one prompt helper of the interactive games (`sanzi ttt`,
`sanzi gomoku`)."""

from __future__ import annotations

from typing import TextIO


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
