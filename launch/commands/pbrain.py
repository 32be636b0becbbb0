"""``sanzi pbrain``: the gomoku engine as a Gomocup brain on stdin/stdout (Piskvork's protocol).

Point a Gomocup manager (Piskvork, liskvork, GomocupJudge) at ``sanzi pbrain`` as the brain's command. Each
line read is handed to :class:`engine.gomoku.protocol.Brain`; its answers are written and flushed at once.
A malformed line, undecodable bytes, or a line that breaks the brain is answered with an ``ERROR`` (or
``UNKNOWN``) line and the brain reads on; ``END`` or the end of input exits with status 0.
"""

from __future__ import annotations

import argparse
import io
import sys
from typing import TextIO

from engine.gomoku.player import DEFAULT_LEVEL, LEVELS
from engine.gomoku.protocol import Brain


def serve(inp: TextIO, out: TextIO, brain: Brain) -> int:
    """Answer the manager's lines from ``inp`` on ``out`` until ``END`` or the end of input."""
    while True:
        line = inp.readline()
        if not line:
            return 0
        try:
            reply = brain.handle(line)
        except Exception as exc:
            out.write(f"ERROR internal error on {line.strip()[:60]!r}: {type(exc).__name__}: {exc}\n")
            out.flush()
            continue
        for text in reply.lines:
            out.write(text + "\n")
        out.flush()
        if reply.finished:
            return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--level",
        choices=list(LEVELS),
        default=DEFAULT_LEVEL,
        help=f"engine level (default {DEFAULT_LEVEL}); time per move comes from INFO timeout_turn",
    )
    parser.add_argument("--debug", action="store_true", help="send a DEBUG line with each move's search")


def run(args: argparse.Namespace) -> int:
    # Bytes that are not UTF-8 become replacement characters (and so an UNKNOWN or ERROR answer) instead of
    # an exception; CR LF, LF and CR all end a line. Answers are flushed line by line in serve().
    raw = getattr(sys.stdin, "buffer", None)
    stdin = (
        sys.stdin if raw is None else io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline=None)
    )
    return serve(stdin, sys.stdout, Brain(level=args.level, debug=args.debug))
