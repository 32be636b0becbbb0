"""Difficulty levels: names and parameters, what each depth limit sees, and the measured mistake rates."""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

from engine import (
    LEVELS,
    Board,
    GameOverError,
    IllegalMoveError,
    InvalidBoardError,
    Level,
    UnknownLevelError,
    choose_move,
    get_level,
    reachable_positions,
    solve,
)

NON_TERMINAL = [b for b in reachable_positions() if not b.is_terminal()]
EXACT_ONE_PLY = Level("one ply", depth_limit=1, mistake_rate=0.0)
EXACT_TWO_PLY = Level("two ply", depth_limit=2, mistake_rate=0.0)


def immediate_wins(board: Board, side: str) -> set[int]:
    """Empty squares that would complete a line for ``side``."""
    wins = set()
    for sq in board.empty_squares():
        text = str(board)
        trial = Board.from_string(text[:sq] + side + text[sq + 1 :], validate=False)
        if trial.winner() == side:
            wins.add(sq)
    return wins


def test_named_levels_and_their_documented_parameters() -> None:
    assert list(LEVELS) == ["easy", "medium", "hard", "perfect"]
    assert [(lvl.depth_limit, lvl.mistake_rate) for lvl in LEVELS.values()] == [
        (1, 0.30),
        (2, 0.15),
        (4, 0.05),
        (None, 0.0),
    ]
    assert get_level("Hard ") is LEVELS["hard"] and get_level(LEVELS["easy"]) is LEVELS["easy"]
    with pytest.raises(UnknownLevelError, match="choose one of easy, medium, hard, perfect"):
        get_level("impossible")
    with pytest.raises(UnknownLevelError):
        choose_move(Board(), "grandmaster")


@pytest.mark.parametrize(("depth", "rate"), [(0, 0.1), (-1, 0.0), (2, 1.5), (2, -0.1), (True, 0.0)])
def test_invalid_level_parameters_are_refused(depth: int, rate: float) -> None:
    with pytest.raises(UnknownLevelError):
        Level("bad", depth, rate)


def test_depth_one_takes_every_immediate_win() -> None:
    for board in NON_TERMINAL:
        wins = immediate_wins(board, board.to_move())
        if wins:
            assert choose_move(board, EXACT_ONE_PLY, random.Random(0)).square in wins, str(board)


def test_depth_two_also_blocks_a_single_threat() -> None:
    for board in NON_TERMINAL:
        mover = board.to_move()
        threats = immediate_wins(board, "O" if mover == "X" else "X")
        if not immediate_wins(board, mover) and len(threats) == 1:
            assert choose_move(board, EXACT_TWO_PLY, random.Random(0)).square in threats, str(board)


def test_a_certain_mistake_always_plays_the_second_best_group() -> None:
    always = Level("always wrong", depth_limit=None, mistake_rate=1.0)
    rng = random.Random(5)
    for board in NON_TERMINAL[::5]:
        scores = dict(solve(board).move_scores)
        distinct = sorted(set(scores.values()), reverse=True)
        choice = choose_move(board, always, rng)
        if len(distinct) > 1:
            assert choice.mistake and scores[choice.square] == distinct[1]
        else:
            assert not choice.mistake and scores[choice.square] == distinct[0]


@dataclass
class Tally:
    opportunities: int = 0
    mistakes: int = 0
    engine_losses: int = 0
    games: int = 0


def play_against_random(level: Level, games: int, seed: int) -> Tally:
    """Seeded games of ``level`` against a uniformly random opponent, alternating who starts."""
    tally = Tally()
    engine_rng, opponent_rng = random.Random(seed), random.Random(seed + 1)
    for game in range(games):
        engine_side = "X" if game % 2 == 0 else "O"
        board = Board()
        while not board.is_terminal():
            if board.to_move() == engine_side:
                used = solve(board, depth=level.depth_limit)  # the scores the level ranks its moves by
                groups = sorted({s for _, s in used.move_scores}, reverse=True)
                choice = choose_move(board, level, engine_rng)
                if len(groups) > 1:
                    tally.opportunities += 1
                    tally.mistakes += choice.mistake
                    if choice.mistake:
                        assert dict(used.move_scores)[choice.square] == groups[1]
                else:
                    assert not choice.mistake
                board = board.play(choice.square)
            else:
                board = board.play(opponent_rng.choice(board.legal_moves()))
        tally.games += 1
        tally.engine_losses += board.winner() not in (None, engine_side)
    return tally


@pytest.mark.parametrize("name", ["easy", "medium", "hard", "perfect"])
def test_mistake_rates_over_many_seeded_games(name: str) -> None:
    level = LEVELS[name]
    tally = play_against_random(level, games=600, seed=2024)
    assert tally.opportunities > 1000
    rate = tally.mistakes / tally.opportunities
    p = level.mistake_rate
    sigma = (p * (1 - p) / tally.opportunities) ** 0.5
    assert abs(rate - p) <= 4 * sigma + 1e-12, f"{name}: measured {rate:.3f}, configured {p}"
    if name == "perfect":
        assert tally.mistakes == 0 and tally.engine_losses == 0


def test_weaker_levels_lose_more_often() -> None:
    losses = {name: play_against_random(LEVELS[name], games=300, seed=7).engine_losses for name in LEVELS}
    assert losses["perfect"] == 0
    assert losses["easy"] > losses["hard"] >= losses["perfect"]


def test_levels_report_the_true_value_of_their_move_on_3x3() -> None:
    board = Board("X...O....")
    for name in LEVELS:
        choice = choose_move(board, name, random.Random(11))
        assert choice.exact and choice.level == name
        child = solve(board.play(choice.square))
        assert choice.value == -child.value and choice.pv[1:] == child.pv


def test_first_square_is_played_only_on_the_empty_board_and_checked() -> None:
    for name in LEVELS:
        assert choose_move(Board(), name, random.Random(1), first_square=8).square == 8
    assert choose_move(Board("XX..O.O.."), "perfect", first_square=8).square == 2
    for bad in (-1, 9, "5", True):
        with pytest.raises(IllegalMoveError, match="first_square"):
            choose_move(Board(), first_square=bad)  # type: ignore[arg-type]


def test_choose_move_refuses_finished_and_impossible_boards() -> None:
    with pytest.raises(GameOverError, match="over"):
        choose_move(Board("XXX.OO..."))
    with pytest.raises(InvalidBoardError, match="X has 2 pieces"):
        choose_move(Board.from_string("XX.......", validate=False))
