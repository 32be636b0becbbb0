"""The simulated person: policies against the engine, misbehaviours in a real World, corrections, the
terminal mode. A small referee stand-in (below) judges the world after each press."""

from __future__ import annotations

import io
import random
from typing import Any

import msgspec
import pytest

import engine
from messages import GameState
from services.simhuman import person as person_module
from services.simhuman.interactive import InputClosed, interactive_turn, parse_command, render_board
from services.simhuman.person import Act, MisbehaviourError, Person, Press, Say, Wait, parse_misbehaviours
from services.simhuman.policy import MistakePolicy, PolicyError, make_policy, winning_squares
from services.simworld.world import World

from .standin import MiniReferee

# --- policies


def play_game(device: str, person_policy: str, seed: int, first: int | None = None) -> tuple[str, str]:
    """Engine (perfect) as ``device`` ("X"/"O") against a person policy: (final board, winner or "")."""
    rng = random.Random(seed)
    policy = make_policy(person_policy)
    board = engine.Board()
    person_moves = 0
    while not board.is_terminal():
        if board.to_move() == device:
            square = engine.choose_move(board, "perfect", rng, first_square=first).square
        else:
            person_moves += 1
            square = policy.choose(str(board), board.to_move(), person_moves, rng) - 1
        board = board.play(square)
    return str(board), board.winner() or ""


@pytest.mark.parametrize("device", ["X", "O"])
def test_perfect_person_never_loses_against_the_engine(device: str) -> None:
    for seed in range(40):
        _, winner = play_game(device, "perfect", seed)
        assert winner != device


@pytest.mark.parametrize(("device", "at"), [("X", 1), ("X", 2), ("O", 2), ("O", 3)])
def test_mistake_n_loses_against_the_engine(device: str, at: int) -> None:
    for seed in range(20):
        _, winner = play_game(device, f"mistake:{at}", seed)
        assert winner == device, seed


def test_mistake_is_made_at_move_n_when_a_losing_move_exists() -> None:
    policy = make_policy("mistake:1")
    assert isinstance(policy, MistakePolicy)
    # device X took the centre; every edge reply by O loses
    square = policy.choose("....X....", "O", 1, random.Random(0))
    assert square in (2, 4, 6, 8) and policy.made and policy.mistake_square == square


def test_greedy_wins_then_blocks() -> None:
    policy = make_policy("greedy")
    assert policy.choose("XX.OO....", "O", 3, random.Random(0)) == 6  # win beats block
    assert policy.choose("XX..O....", "O", 2, random.Random(0)) == 3  # block
    assert winning_squares("XX.......", "X") == [3]


def test_random_policy_plays_empty_squares() -> None:
    policy = make_policy("random")
    rng = random.Random(5)
    for _ in range(20):
        assert policy.choose("XOX.O.X..", "O", 3, rng) in (4, 6, 8, 9)


@pytest.mark.parametrize("bad", ["perfectly", "mistake", "mistake:0", "mistake:x", "greedy:2"])
def test_bad_policy_names_are_clear_errors(bad: str) -> None:
    with pytest.raises(PolicyError):
        make_policy(bad)


def test_misbehaviour_specs() -> None:
    assert parse_misbehaviours(["two-pieces", "hand-in-view:3"]) == {"two-pieces": None, "hand-in-view": 3}
    with pytest.raises(MisbehaviourError, match="known"):
        parse_misbehaviours(["three-pieces"])
    with pytest.raises(MisbehaviourError):
        parse_misbehaviours(["two-pieces:0"])


# --- a referee stand-in


def run_plan(world: World, referee: MiniReferee, steps: list[Any]) -> None:
    for step in steps:
        match step:
            case Act(action=action):
                world.apply(action)
            case Press():
                referee.judge()
            case Wait() | Say():
                pass


def person_for(config: Any, **kw: Any) -> Person:
    cfg = msgspec.structs.replace(config.simhuman, **kw)
    return Person(cfg, speed=100.0)


def play_with_referee(
    config: Any, device: str, max_rounds: int = 40, **kw: Any
) -> tuple[MiniReferee, Person]:
    world = World(config.simworld, config.table)
    referee = MiniReferee(world, device)
    if device == "X":
        referee.device_move()
    person = person_for(config, **kw)
    for _ in range(max_rounds):
        state = referee.state()
        if state.result:
            break
        steps = person.on_state(state)
        assert steps, f"the person did nothing on {state}"
        assert person.on_state(state) == []  # never twice for the same turn
        run_plan(world, referee, steps)
        world.check()
    return referee, person


@pytest.mark.parametrize("device", ["X", "O"])
def test_a_whole_game_perfect_person_draws_or_wins(config: Any, device: str) -> None:
    referee, _ = play_with_referee(config, device, policy="perfect")
    assert referee.result in ("draw", "person-won")
    assert referee.world.board_string() == referee.logical


def test_a_whole_game_with_every_misbehaviour_then_corrected(config: Any) -> None:
    referee, person = play_with_referee(
        config,
        "X",
        policy="perfect",
        misbehave=[
            "two-pieces",
            "wrong-colour:2",
            "button-without-move:3",
            "move-device-piece:3",
            "hand-in-view:4",
            "remove-device-piece:4",
        ],
    )
    assert referee.result in ("draw", "person-won")
    assert sorted(person.done) == sorted(
        [
            "two-pieces",
            "wrong-colour",
            "button-without-move",
            "move-device-piece",
            "hand-in-view",
            "remove-device-piece",
        ]
    )
    assert referee.illegal_moves == 3  # two-pieces, wrong-colour, button-without-move
    assert referee.cheats == 2  # moved and removed device pieces, restored
    assert True in referee.hand_at_press  # hand-in-view pressed with the hand over the board
    assert referee.world.board_string() == referee.logical
    assert not referee.world.hand.present


# --- each misbehaviour's world


def first_turn(config: Any, misbehave: str) -> tuple[World, MiniReferee, list[Any]]:
    """The device (X) has played two moves, the person (O) one; the person's next turn with
    ``misbehave`` due now. Returns the world after the plan (before any press is judged)."""
    world = World(config.simworld, config.table)
    referee = MiniReferee(world, "X")
    for square, piece in ((1, "X"), (5, "O"), (9, "X")):
        world.place("black" if piece == "X" else "white", square)
        referee._play(square, piece)
    person = person_for(config, misbehave=[misbehave])
    steps = person.on_state(referee.state())
    assert person.done == [misbehave]
    presses = [i for i, s in enumerate(steps) if isinstance(s, Press)]
    assert len(presses) == 1
    before_press = steps[: presses[0]]
    for step in before_press:
        if isinstance(step, Act):
            world.apply(step.action)
    world.check()
    return world, referee, steps[presses[0] :]


def test_two_pieces_world(config: Any) -> None:
    world, _, _ = first_turn(config, "two-pieces")
    board = world.board_string()
    assert board.count("O") == 3 and board.count("X") == 2 and board[0] == "X" and board[8] == "X"


def test_wrong_colour_world(config: Any) -> None:
    world, _, _ = first_turn(config, "wrong-colour")
    board = world.board_string()
    assert board.count("X") == 3 and board.count("O") == 1


def test_move_device_piece_world(config: Any) -> None:
    world, _, _ = first_turn(config, "move-device-piece")
    board = world.board_string()
    assert board.count("X") == 2 and board.count("O") == 1
    assert board[0] != "X" or board[8] != "X"  # one of the device's pieces left its square


def test_remove_device_piece_world(config: Any) -> None:
    world, _, _ = first_turn(config, "remove-device-piece")
    board = world.board_string()
    assert board.count("X") == 1 and board.count("O") == 1
    assert sum(p.colour == "black" and world.where(p) == "supply" for p in world.pieces) == 4


def test_button_without_move_world(config: Any) -> None:
    world, _, _ = first_turn(config, "button-without-move")
    assert world.board_string() == "X...O...X"


def test_hand_in_view_world(config: Any) -> None:
    world, _, after = first_turn(config, "hand-in-view")
    board = world.board_string()
    assert board.count("O") == 2 and board.count("X") == 2
    assert world.hand.present  # at the press
    rest = [s for s in after if isinstance(s, Act)]
    assert rest and rest[-1].action.kind == "hand" and not rest[-1].action.present


def test_delays_scale_with_speed(config: Any) -> None:
    slow = Person(msgspec.structs.replace(config.simhuman, seed=1), speed=1.0)
    fast = Person(msgspec.structs.replace(config.simhuman, seed=1), speed=10.0)
    state = GameState(
        revision=1,
        game_id="g",
        phase="waiting-for-person",
        lamp=True,
        device_colour="black",
        board="X........",
        moves=[1],
    )
    s_waits = [s.seconds for s in slow.on_state(state) if isinstance(s, Wait)]
    f_waits = [s.seconds for s in fast.on_state(state) if isinstance(s, Wait)]
    assert s_waits == pytest.approx([w * 10 for w in f_waits])
    assert s_waits[0] == pytest.approx(config.simhuman.think_s, rel=0.31)


def test_not_my_turn_does_nothing(config: Any) -> None:
    person = person_for(config)
    for phase in ("device-to-move", "command-sent", "waiting-for-stable", "idle"):
        assert person.on_state(GameState(revision=1, phase=phase, device_colour="black")) == []
    assert person.on_state(GameState(revision=2, phase="waiting-for-person", lamp=False)) == []


# --- the terminal


def test_parse_command() -> None:
    assert parse_command("5\n") == ("place", [5])
    assert parse_command("m 1 2") == ("move", [1, 2])
    assert parse_command("r 3") == ("remove", [3])
    assert parse_command("\n") == ("press", [])
    assert parse_command("0") is None and parse_command("m 1") is None and parse_command("x") is None


def test_interactive_turn_with_injected_streams(config: Any) -> None:
    person = person_for(config, policy="you")
    state = GameState(
        revision=1,
        game_id="g",
        phase="waiting-for-person",
        lamp=True,
        device_colour="black",
        board="X........",
        moves=[1],
    )
    out = io.StringIO()
    steps = interactive_turn(person, state, io.StringIO("12\n5\n\n").readline, out.write)
    acts = [s.action for s in steps if isinstance(s, Act)]
    assert [(a.kind, a.colour, a.to_square) for a in acts] == [("place", "white", 5)]
    assert isinstance(steps[-1], Press)
    assert "? type a square" in out.getvalue()
    assert render_board("X...O....").splitlines()[0] == " X | 2 | 3"
    with pytest.raises(InputClosed):
        interactive_turn(person, state, io.StringIO("").readline, out.write)


def test_a_stale_illegal_reason_on_a_new_turn_is_not_a_rejection(config: Any) -> None:
    person = person_for(config, misbehave=["button-without-move"])
    state = GameState(
        revision=1,
        game_id="g",
        phase="waiting-for-person",
        lamp=True,
        device_colour="black",
        board="X........",
        moves=[1],
        illegal="two-pieces",
        illegal_moves=1,
    )
    steps = person.on_state(state)
    assert person.done == ["button-without-move"]  # a fresh turn: the misbehaviour is committed
    assert not any(isinstance(s, Act) for s in steps)


def test_a_rejected_legal_move_is_pressed_again_without_moving_twice(config: Any) -> None:
    person = person_for(config)
    base = dict(
        game_id="g",
        phase="waiting-for-person",
        lamp=True,
        device_colour="black",
        board="X........",
        moves=[1],
    )
    first = person.on_state(GameState(revision=1, **base))
    assert sum(isinstance(s, Act) and s.action.kind == "place" for s in first) == 1
    again = person.on_state(GameState(revision=3, illegal="stable-timeout", illegal_moves=1, **base))
    assert not any(isinstance(s, Act) and s.action.kind == "place" for s in again)
    assert isinstance(again[-1], Press)
    # nothing to correct: the device misread, so the person waits a moment (real seconds, not scaled
    # by the speed factor) before pressing again, giving a passing misreading time to clear
    assert Wait(config.simhuman.repress_s) in again


def test_a_person_presses_again_when_the_lamp_still_asks_a_few_seconds_later(config: Any) -> None:
    person = person_for(config, repress_s=2.0)
    turn = dict(game_id="g", phase="waiting-for-person", lamp=True, device_colour="black", board="X........")
    state = GameState(revision=1, moves=[1], **turn)
    assert person.press_again(state, 5.0) == []  # nothing pressed in this turn yet
    assert isinstance(person.on_state(state)[-1], Press)
    assert person.press_again(state, 1.0) == []  # not yet a few seconds
    again = person.press_again(GameState(revision=2, moves=[1], **turn), 2.5)
    assert [type(s) for s in again] == [Say, Press]  # the same turn, the lamp still on: once more
    # the referee took the press (lamp off), or the turn moved on: no more pressing
    assert (
        person.press_again(GameState(revision=3, moves=[1], **{**turn, "phase": "waiting-for-stable"}), 9)
        == []
    )
    assert person.press_again(GameState(revision=4, moves=[1, 2, 3], **turn), 9.0) == []
    # a press that keeps getting lost is made again, but not forever
    presses = sum(bool(person.press_again(state, 9.0)) for _ in range(50))
    assert presses == person_module.MAX_REPRESSES_PER_TURN - 1
