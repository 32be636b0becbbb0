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
