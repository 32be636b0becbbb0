"""`sanzi ttt`, driven by scripted input through its stream-based functions and through the real CLI."""

from __future__ import annotations

import io
import random
import subprocess
import sys
from pathlib import Path

import pytest

from launch.cli import main
from launch.commands import ttt

REPO = Path(__file__).resolve().parents[2]
#: Typing every square in order, again and again: each turn the person plays the lowest empty square
#: (taken ones are refused and asked again).
LOWEST_FREE = "1\n2\n3\n4\n5\n6\n7\n8\n9\n" * 5


def session(script: str, **options: object) -> tuple[int, str]:
    out = io.StringIO()
    options.setdefault("rng", random.Random(1))
    code = ttt.play_session(io.StringIO(script), out, **options)  # type: ignore[arg-type]
    return code, out.getvalue()


def test_a_whole_game_as_x_against_perfect_never_won_by_the_person() -> None:
    code, text = session(LOWEST_FREE, side="X", level="perfect", once=True)
    assert code == 0
    assert "You play X, the engine plays O at level perfect." in text
    assert "You win!" not in text and ("The engine wins." in text or "Draw." in text)
    assert "Score: you 0" in text and text.rstrip().endswith("Bye.")
    # The board is printed with the numbers of the empty squares.
    assert " 1 | 2 | 3\n---+---+---\n 4 | 5 | 6\n---+---+---\n 7 | 8 | 9" in text


def test_engine_opens_on_the_set_square_when_the_person_plays_o() -> None:
    _, text = session(LOWEST_FREE, side="O", level="perfect", first_square=7, once=True)
    first_engine_line = next(line for line in text.splitlines() if line.startswith("The engine"))
    assert first_engine_line == "The engine (X) plays 7."


def test_bad_input_re_prompts_with_a_clear_message() -> None:
    script = "abc\n0\n10\n\n5\n5\nh\nq\n"
    _, text = session(script, side="X", level="perfect")
    assert "'abc' is not a square: type a number 1-9" in text
    assert "There is no square 0: the squares are 1-9." in text
    assert "There is no square 10" in text
    assert "Type the number (1-9) of an empty square." in text
    assert "Square 5 is taken by X; empty squares:" in text
    assert "numbered like a phone keypad" in text and "? shows the engine's evaluation" in text
    assert text.rstrip().endswith("Bye.")


def test_evaluation_on_request() -> None:
    _, text = session("?\nq\n", side="X", level="perfect")
    assert "Evaluation (X to move): with perfect play, a draw in 9 moves" in text
    assert "best squares for X: 1 2 3 4 5 6 7 8 9" in text and "main line:" in text


def test_evaluation_says_when_the_person_is_lost() -> None:
    # Person as O answers the engine's centre opening with an edge (square 2): a lost position for O.
    _, text = session("2\n?\nq\n", side="O", level="perfect", first_square=5)
    assert "Evaluation (O to move): with perfect play, you lose in" in text


def test_side_and_level_are_asked_for_and_bad_answers_re_asked() -> None:
    script = "purple\nwhite\nsuperhuman\n2\n" + LOWEST_FREE
    _, text = session(script, once=True)
    assert "'purple' is not a side" in text and "'superhuman' is not a level" in text
    assert "You play O, the engine plays X at level medium." in text


class Person(io.TextIOBase):
    """Input that answers the prompt just written to ``out``: moves cycle 1-9 (taken squares are refused and
    asked again), the play-again question takes the next of ``again``, anything else gets an empty line."""

    def __init__(self, out: io.StringIO, again: list[str]) -> None:
        self.out, self.again, self.square = out, again, 0

    def readline(self, size: int = -1) -> str:
        prompt = self.out.getvalue().rsplit("\n", 1)[-1]
        if prompt.startswith("Your move"):
            self.square = self.square % 9 + 1
            return f"{self.square}\n"
        if prompt.startswith("Play again"):
            return f"{self.again.pop(0)}\n"
        return "\n"


def test_defaults_on_empty_answers_and_play_again() -> None:
    out = io.StringIO()
    assert ttt.play_session(Person(out, ["y", "n"]), out, rng=random.Random(1)) == 0
    text = out.getvalue()
    assert text.count("You play X, the engine plays O at level perfect.") == 2
    assert "Score: you 0, engine" in text and text.count("Play again?") == 2


def test_end_of_input_anywhere_ends_the_session_cleanly() -> None:
    for script in ("", "x\n", "x\neasy\n", "x\neasy\n5\n"):
        code, text = session(script)
        assert code == 0 and text.rstrip().endswith("Bye.")


def test_cli_runs_the_game_with_its_options(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(LOWEST_FREE))
    assert (
        main(["ttt", "--side", "white", "--level", "hard", "--first-square", "1", "--seed", "4", "--once"])
        == 0
    )
    text = capsys.readouterr().out
    assert "You play O, the engine plays X at level hard." in text and "The engine (X) plays 1." in text


@pytest.mark.parametrize(
    "argv", [["--first-square", "0"], ["--side", "red"], ["--level", "god"], ["--seed", "x"]]
)
def test_cli_refuses_bad_options(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["ttt", *argv])
    assert exit_info.value.code == 2
    assert "error" in capsys.readouterr().err


def test_real_process_with_piped_input() -> None:
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "launch.cli",
            "ttt",
            "--side",
            "x",
            "--level",
            "easy",
            "--seed",
            "1",
            "--once",
        ],
        input=LOWEST_FREE,
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert "level easy" in completed.stdout and completed.stdout.rstrip().endswith("Bye.")
