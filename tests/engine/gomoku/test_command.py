"""`sanzi gomoku`, driven by scripted input through its stream functions and through the real CLI."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.gomoku.board import GomokuBoard
from engine.gomoku.rules import BLACK, WHITE, GomokuError
from launch.commands import gomoku

REPO = Path(__file__).resolve().parents[3]
#: Every square of 15 x 15 row by row from the top left: the person always plays the first empty one.
EVERY_SQUARE = "".join(f"{col}{row}\n" for row in range(1, 16) for col in "abcdefghijklmno")


def session(script: str, **options: object) -> tuple[int, str]:
    out = io.StringIO()
    options.setdefault("level", "easy")
    options.setdefault("seconds", 30.0)  # easy stops at depth 2 long before: reproducible games
    code = gomoku.play_session(io.StringIO(script), out, **options)  # type: ignore[arg-type]
    return code, out.getvalue()


def test_squares_are_named_and_parsed_both_ways() -> None:
    board = GomokuBoard(15)
    assert gomoku.name(board, board.index(7, 7)) == "H8"
    assert gomoku.parse_move(board, "h8") == gomoku.parse_move(board, "H8") == board.index(7, 7)
    assert gomoku.parse_move(board, "7,7") == board.index(7, 7)
    assert gomoku.parse_move(board, "o15") == board.index(14, 14)
    for bad, message in (
        ("p1", "not a square"),
        ("h16", "off the"),
        ("h", "not a square"),
        ("1,x", "not x,y"),
    ):
        with pytest.raises(GomokuError, match=message):
            gomoku.parse_move(board, bad)
    board.play(board.index(0, 0))
    with pytest.raises(GomokuError, match="taken"):
        gomoku.parse_move(board, "a1")


def test_a_whole_game_against_the_engine_ends_with_a_result() -> None:
    code, text = session(EVERY_SQUARE, side=WHITE, once=True)
    assert code == 0
    assert "You play O (white), the engine plays X (black) at level easy" in text
    assert "The engine wins." in text  # playing along the top rows is no defence
    assert "Score: you 0, engine 1, draws 0." in text and text.rstrip().endswith("Bye.")
    assert "is taken" in text  # squares already used were refused and asked again


def test_bad_input_is_explained_and_asked_again_and_takeback_works() -> None:
    script = "purple\nx\n\nz9\nh99\nh8\nh\nu\nu\nh8\nq\n"
    code, text = session(script, side=None)
    assert code == 0
    assert "'purple' is not a side" in text
    assert "Type a square such as h8." in text
    assert "'z9' is not a square" in text and "7,98 is off the 15 x 15 board" in text
    assert "Type a move as column letter and row number" in text  # h: the help
    assert text.count("Taken back.") == 1 and "Nothing to take back." in text
    assert "[X]" in text  # the last move is marked


def test_the_engine_view_names_its_best_move() -> None:
    _, text = session("h8\n?\nq\n", side=BLACK)
    assert "Engine's view:" in text and "best move for the side to move:" in text


def test_the_real_command_runs_and_quits() -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "launch.cli",
            "gomoku",
            "--side",
            "o",
            "--level",
            "easy",
            "--size",
            "9",
            "--once",
        ],
        input=b"q\n",
        capture_output=True,
        cwd=REPO,
        env=env,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    out = proc.stdout.decode()
    assert "five in a row on 9 x 9" in out and "The engine (X (black)) plays E5." in out and "Bye." in out
    bad = subprocess.run(
        [sys.executable, "-m", "launch.cli", "gomoku", "--size", "3"],
        capture_output=True,
        cwd=REPO,
        env=env,
        timeout=60,
        check=False,
    )
    assert bad.returncode == 2 and "board size must be 5..32" in bad.stderr.decode()
