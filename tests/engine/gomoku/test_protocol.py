"""The Gomocup protocol: conversations in process with :class:`Brain` (the bulk), and through a real
``python -m launch.cli pbrain`` subprocess, malformed lines and undecodable bytes included."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from engine.gomoku.protocol import ABOUT, Brain

REPO = Path(__file__).resolve().parents[3]
MOVE = re.compile(r"^(\d+),(\d+)$")


class FakeClock:
    """A clock that advances a fixed step each time it is read: searches run a bounded, reproducible number
    of steps, and the time a turn used is known exactly."""

    def __init__(self, step: float = 0.01) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def talk(brain: Brain, *lines: str) -> list[str]:
    out: list[str] = []
    for line in lines:
        out.extend(brain.handle(line).lines)
    return out


def move_of(text: str) -> tuple[int, int]:
    match = MOVE.match(text)
    assert match, f"not a move: {text!r}"
    return int(match.group(1)), int(match.group(2))


def test_start_begin_turn_and_about() -> None:
    brain = Brain(clock=FakeClock())
    assert talk(brain, "DONE", "START 15")[-1] == "OK"
    assert talk(brain, "BOARD", "1,1,1", "START 15") == [
        "ERROR BOARD ended by START without DONE; the position was dropped",
        "OK",
    ]
    assert talk(brain, "INFO timeout_turn 300", "INFO timeout_match 0", "INFO max_memory 83886080") == []
    assert brain.limits.timeout_turn_ms == 300 and brain.limits.max_memory_bytes == 83886080
    assert talk(brain, "BEGIN") == ["7,7"]
    (reply,) = talk(brain, "TURN 8,8")
    x, y = move_of(reply)
    assert (x, y) not in ((7, 7), (8, 8)) and 0 <= x < 15 and 0 <= y < 15
    assert talk(brain, "ABOUT") == [ABOUT]
    assert brain.handle("END").finished


def test_the_brain_takes_a_five_and_blocks_a_four() -> None:
    brain = Brain(clock=FakeClock())
    talk(brain, "START 15", "INFO timeout_turn 200")
    stones = ["BOARD", "3,3,1", "4,3,1", "5,3,1", "6,3,1", "3,9,2", "4,9,2", "5,9,2", "6,9,2", "DONE"]
    assert talk(brain, *stones) in (["2,3"], ["7,3"])
    talk(brain, "RESTART")
    block = ["BOARD", "3,3,2", "4,3,2", "5,3,2", "6,3,2", "2,3,1", "9,9,1", "10,10,1", "DONE"]
    assert talk(brain, *block) == ["7,3"]


def test_each_answer_comes_within_timeout_turn() -> None:
    clock = FakeClock()
    brain = Brain(clock=clock)
    talk(brain, "START 15", "INFO timeout_turn 300", "BEGIN")
    for _ in range(5):
        assert brain.board is not None
        x, y = brain.board.xy(brain.board.candidates()[-1])
        before = clock.now
        (reply,) = talk(brain, f"TURN {x},{y}")
        move_of(reply)
        assert clock.now - before < 0.3  # by the brain's own clock, which is all it can see
    before = clock.now
    talk(brain, "INFO timeout_turn 0", "TURN 1,1")
    assert clock.now - before < 0.1  # "0 = play as fast as possible": a 50 ms budget


def test_board_with_continuous_game_fields_and_takeback() -> None:
    brain = Brain(clock=FakeClock())
    talk(brain, "START 20", "INFO rule 2", "INFO timeout_turn 200")
    reply = talk(brain, "BOARD", "10,10,1", "10,11,2", "11,11,3", "9,10,2", "DONE")
    x, y = move_of(reply[-1])
    assert (x, y) not in ((10, 10), (10, 11), (11, 11), (9, 10))
    assert talk(brain, f"TAKEBACK {x},{y}") == ["OK"]
    assert talk(brain, "TAKEBACK 10,10") == ["OK"]  # not the last stone: the board is rebuilt without it
    assert brain.board is not None and brain.board.cells[brain.board.index(10, 10)] == 0
    assert talk(brain, "PLAY 12,12") == ["12,12"]


def test_malformed_and_unknown_lines_get_an_answer_and_the_brain_stays_up() -> None:
    brain = Brain(clock=FakeClock())
    assert talk(brain, "BEGIN") == ["ERROR no board yet: send START first"]
    assert talk(brain, "") == []
    assert talk(brain, "START fifteen")[0].startswith("ERROR START needs the board size")
    assert talk(brain, "START 4")[0].startswith("ERROR board side must be")
    assert talk(brain, "DONE", "START 15")[-1] == "OK"
    assert talk(brain, "BOARD", "1,1,1", "START 15") == [
        "ERROR BOARD ended by START without DONE; the position was dropped",
        "OK",
    ]
    assert talk(brain, "INFO timeout_turn 200") == []
    assert talk(brain, "TURN 7")[0].startswith("ERROR TURN needs")
    assert talk(brain, "TURN 15,0") == ["ERROR 15,0 is off the 15 x 15 board"]
    assert talk(brain, "TURN -1,3") == ["ERROR -1,3 is off the 15 x 15 board"]
    assert talk(brain, "SWAP2BOARD")[0].startswith("UNKNOWN")
    assert talk(brain, "HELLO there")[0].startswith("UNKNOWN")
    assert talk(brain, "DONE") == ["ERROR DONE without BOARD"]
    assert talk(brain, "TAKEBACK 3,3") == ["ERROR no stone at 3,3 to take back"]
    assert talk(brain, "x" * 10_000)[0].startswith("UNKNOWN")
    # Inside BOARD: bad lines are reported and skipped, the good ones kept.
    out = talk(brain, "BOARD", "7,7,1", "7,7", "1,2,9", "8,8,2", "DONE")
    assert out[0].startswith("ERROR BOARD line '7,7'") and out[1].startswith("ERROR BOARD line '1,2,9'")
    move_of(out[2])
    assert talk(brain, "TURN 8,8") == ["ERROR 8,8 is taken"]
    # INFO problems are held until the next command that is not INFO (the manager does not read them).
    infos = ("INFO timeout_turn soon", "INFO rule 4", "INFO folder /tmp", "INFO unknown_key 1")
    assert talk(brain, *infos) == []
    held = talk(brain, "ABOUT")
    assert held[0].startswith("MESSAGE INFO timeout_turn 'soon'") and "renju" in held[1] and held[2] == ABOUT
    assert talk(brain, "start 15") == ["OK"]  # commands are not case-sensitive


def test_exactly_five_rule_ignores_an_overline_square() -> None:
    brain = Brain(clock=FakeClock())
    talk(brain, "START 15", "INFO rule 1", "INFO timeout_turn 200")
    # Own stones X X X X . X : the gap would make six, which does not win under exactly-five.
    own = ["0,0,1", "1,0,1", "2,0,1", "3,0,1", "5,0,1"]
    opponent = ["0,5,2", "2,7,2", "4,9,2", "9,9,2", "7,12,2"]
    out = talk(brain, "BOARD", *own, *opponent, "DONE")
    assert out[-1] != "4,0"


def run_brain(stdin: bytes, timeout: float = 60) -> tuple[int, list[str], str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run(
        [sys.executable, "-m", "launch.cli", "pbrain"],
        input=stdin,
        capture_output=True,
        cwd=REPO,
        env=env,
        timeout=timeout,
        check=False,
    )
    return proc.returncode, proc.stdout.decode().splitlines(), proc.stderr.decode()


def test_a_conversation_with_the_real_process() -> None:
    script = (
        b"START 15\r\nINFO timeout_turn 200\r\nINFO rule 0\r\nABOUT\r\nBEGIN\r\n"
        b"\xff\xfe\x00garbage\r\nTURN 7\r\nTURN 8,8\r\nBOARD\r\n7,7,1\r\nnot a line\r\n8,8,2\r\nDONE\r\n"
        b"TAKEBACK 8,8\r\nRESTART\r\nEND\r\n"
    )
    code, lines, stderr = run_brain(script)
    assert code == 0, stderr
    assert lines[0] == "OK"
    assert lines[1] == ABOUT
    assert lines[2] == "7,7"
    assert lines[3].startswith("UNKNOWN")  # undecodable bytes: answered, not a crash
    assert lines[4].startswith("ERROR TURN needs")
    move_of(lines[5])
    assert lines[6].startswith("ERROR BOARD line 'not a line'")
    move_of(lines[7])
    assert lines[8:] == ["OK", "OK"]
    assert "Traceback" not in stderr


def test_the_process_exits_cleanly_when_input_ends_without_end() -> None:
    # Lines ended by CR alone and by LF alone are lines too.
    code, lines, stderr = run_brain(b"START 15\rINFO timeout_turn 100\rBEGIN\n")
    assert (code, lines) == (0, ["OK", "7,7"]), stderr


def test_random_garbage_never_breaks_the_brain() -> None:
    import random

    rng = random.Random(16)
    words = [
        "START",
        "RECTSTART",
        "RESTART",
        "BEGIN",
        "TURN",
        "BOARD",
        "DONE",
        "INFO",
        "TAKEBACK",
        "PLAY",
        "END",
    ]
    args = ["", "15", "7,7", "-3,2", "99999999999999999999", "a,b", "1,2,3", ",", "timeout_turn 40", "rule 7"]
    brain = Brain(clock=FakeClock(0.02))
    talk(brain, "START 9", "INFO timeout_turn 40")
    for _ in range(400):
        line = (
            f"{rng.choice(words)} {rng.choice(args)}"
            if rng.random() < 0.8
            else f"{rng.randint(0, 9)},{rng.randint(0, 9)},{rng.randint(0, 4)}"
        )
        reply = brain.handle(line)
        for text in reply.lines:
            assert text.split(" ", 1)[0] in ("OK", "ERROR", "UNKNOWN", "MESSAGE") or MOVE.match(text), text
    assert talk(brain, "DONE", "START 15")[-1] == "OK"
    assert talk(brain, "BOARD", "1,1,1", "START 15") == [
        "ERROR BOARD ended by START without DONE; the position was dropped",
        "OK",
    ]
