"""Exhaustive checks of perfect play over every reachable 3 x 3 position, against an independent minimax.

The oracle below shares no code with the engine: strings, a hand-written list of lines, plain recursion.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterator

import pytest

from engine import REACHABLE_POSITIONS, Board, choose_move, reachable_positions, solve

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


def oracle_mover(s: str) -> str:
    return "X" if s.count("X") == s.count("O") else "O"


def oracle_won(s: str, side: str) -> bool:
    return any(all(s[i] == side for i in line) for line in LINES)


def preference(result: tuple[int, int]) -> tuple[int, int]:
    """Order results for the mover: higher value first; among wins the shortest, among losses the longest."""
    value, distance = result
    return (value, -distance if value > 0 else distance)


@functools.cache
def oracle(s: str) -> tuple[int, int]:
    """(value for the side to move, plies to the end) with perfect play by both sides."""
    mover = oracle_mover(s)
    last = "O" if mover == "X" else "X"
    if oracle_won(s, last):
        return (-1, 0)
    if "." not in s:
        return (0, 0)
    return max((oracle_move(s, i) for i in range(9) if s[i] == "."), key=preference)


def oracle_move(s: str, square: int) -> tuple[int, int]:
    """(value for the mover, plies to the end) of playing ``square`` from ``s``, then perfect play."""
    child = s[:square] + oracle_mover(s) + s[square + 1 :]
    value, distance = oracle(child)
    return (-value, distance + 1)


def oracle_best(s: str) -> set[int]:
    best = oracle(s)
    return {i for i in range(9) if s[i] == "." and preference(oracle_move(s, i)) == preference(best)}


def enumerate_oracle() -> set[str]:
    """Every reachable position by playing out all games with strings (independent of the engine)."""
    seen: set[str] = set()
    stack = ["." * 9]
    while stack:
        s = stack.pop()
        if s in seen:
            continue
        seen.add(s)
        if oracle_won(s, "X") or oracle_won(s, "O") or "." not in s:
            continue
        mover = oracle_mover(s)
        stack.extend(s[:i] + mover + s[i + 1 :] for i in range(9) if s[i] == ".")
    return seen


ALL = list(reachable_positions())
NON_TERMINAL = [b for b in ALL if not b.is_terminal()]


def test_reachable_positions_are_exactly_the_5478_of_legal_play() -> None:
    strings = [str(b) for b in ALL]
    assert len(strings) == len(set(strings)) == REACHABLE_POSITIONS == 5478
    assert set(strings) == enumerate_oracle()
    assert sum(1 for b in ALL if b.is_terminal()) == 958  # finished positions (wins and full boards)


def test_solve_matches_the_oracle_everywhere() -> None:
    for board in ALL:
        s = str(board)
        value, distance = oracle(s)
        evaluation = solve(board)
        assert (evaluation.value, evaluation.distance) == (value, distance), s
        assert set(evaluation.best_moves) == (oracle_best(s) if not board.is_terminal() else set()), s
        assert evaluation.exact


def test_principal_variation_plays_out_the_value() -> None:
    for board in NON_TERMINAL:
        evaluation = solve(board)
        assert len(evaluation.pv) == evaluation.distance
        assert evaluation.pv[0] in evaluation.best_moves
        end = board
        for square in evaluation.pv:
            end = end.play(square)  # raises if any pv move were illegal
        assert end.is_terminal()
        expected = {1: board.to_move(), -1: "O" if board.to_move() == "X" else "X", 0: None}[evaluation.value]
        assert end.winner() == expected


def test_perfect_move_never_lowers_the_value_and_wins_fastest() -> None:
    rng = random.Random(20240729)
    for board in NON_TERMINAL:
        s = str(board)
        value, distance = oracle(s)
        choice = choose_move(board, "perfect", rng)
        child_value, child_distance = oracle_move(s, choice.square)
        assert child_value == value, f"{s}: move {choice.square} lowers {value} to {child_value}"
        if value == 1:  # from every won position, the fewest plies to the win
            assert child_distance == distance
            wins = [oracle_move(s, i) for i in range(9) if s[i] == "." and oracle_move(s, i)[0] == 1]
            assert distance == min(d for _, d in wins)
        if value == -1:  # and from a lost one, the slowest loss
            assert child_distance == distance
        assert (choice.value, choice.distance) == (child_value, child_distance)
        assert not choice.mistake and choice.nodes == 0
        assert choice.pv[0] == choice.square and len(choice.pv) == child_distance


def test_random_choice_covers_every_best_move() -> None:
    board = Board()
    rng = random.Random(7)
    seen = {choose_move(board, "perfect", rng).square for _ in range(400)}
    assert seen == set(range(9))  # every opening draws, so all nine are equally good
    again = [choose_move(board, "perfect", random.Random(99)).square for _ in range(5)]
    assert len(set(again)) == 1  # same seed, same choice


def game_tree(engine_side: str, start: Board | None = None) -> Iterator[Board]:
    """Every finished position reachable when ``engine_side`` plays any of its best moves (every choice the
    random tie-break can make) and the opponent plays every legal move."""
    seen: set[Board] = set()
    stack = [start if start is not None else Board()]
    while stack:
        board = stack.pop()
        if board in seen:
            continue
        seen.add(board)
        if board.is_terminal():
            yield board
            continue
        if board.to_move() == engine_side:
            moves = solve(board).best_moves
        else:
            moves = board.legal_moves()
        stack.extend(board.play(m) for m in moves)


@pytest.mark.parametrize("engine_side", ["X", "O"])
def test_perfect_policy_never_loses_against_any_sequence_of_replies(engine_side: str) -> None:
    opponent = "O" if engine_side == "X" else "X"
    finals = list(game_tree(engine_side))
    assert finals
    assert all(board.winner() != opponent for board in finals)
    # Against every reply it also wins sometimes: the opponent's mistakes are punished.
    assert any(board.winner() == engine_side for board in finals)


@pytest.mark.parametrize("number", range(1, 10))
def test_task4_first_square_then_any_losing_reply_the_device_wins(number: int) -> None:
    first = number - 1
    opening = choose_move(Board(), "perfect", random.Random(number), first_square=first)
    assert opening.square == first and opening.value == 0
    after_first = Board().play(first)
    losing_replies = [r for r in after_first.legal_moves() if oracle(str(after_first.play(r)))[0] == 1]
    assert losing_replies, f"every opening has a losing reply; none found after square {number}"
    for reply in losing_replies:
        finals = list(game_tree("X", after_first.play(reply)))
        assert finals and all(board.winner() == "X" for board in finals), (number, reply)


def test_the_shared_table_cannot_be_changed_by_a_caller() -> None:
    from engine import table

    shared = table.table()
    with pytest.raises(TypeError):
        shared[0] = shared[0]  # type: ignore[index]
    assert len(shared) == REACHABLE_POSITIONS
