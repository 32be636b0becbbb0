"""Five in a row on the console's page, through aiohttp's test client: a game with the real engine, every
bad input (a 4xx with the reason, and the game unchanged), a five found with its row, the standard rule's
overline, and a second request while the engine thinks (409, with the console still answering)."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import pytest

from engine.gomoku.board import GomokuBoard
from engine.gomoku.player import Decision
from engine.gomoku.rules import BLACK, Rule
from services.console import server
from services.console.gomoku import GomokuGame, winning_line

from .conftest import Rig, eventually

JSON = {"Content-Type": "application/json"}
#: the longest a test waits for the held engine (it is released long before).
HOLD_S = 10.0


async def post(rig: Rig, path: str, body: Any, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    data = body if isinstance(body, str | bytes) else json.dumps(body)
    async with rig.client.post(path, data=data, headers=headers or JSON) as res:
        return res.status, await res.json()


async def state(rig: Rig) -> Any:
    async with rig.client.get("/api/gomoku/state") as res:
        assert res.status == 200
        return await res.json()


def game_of(rig: Rig) -> GomokuGame:
    return rig.client.app[server.GOMOKU]


def passive(game: GomokuGame) -> Decision:
    """An engine that never defends nor makes a five: the first empty square of the top rows on every
    other column."""
    return Decision(next(sq for sq, c in enumerate(game.board.cells) if c == 0 and sq % 2 == 0), "test")


def count(view: Any, mark: str) -> int:
    return sum(row.count(mark) for row in view["board"])


async def test_the_page_is_served_and_linked_from_the_console(rig: Rig) -> None:
    async with rig.client.get("/gomoku") as res:
        assert res.status == 200 and 'id="gomoku-board"' in await res.text()
    async with rig.client.get("/static/gomoku.js") as res:
        assert res.status == 200
    async with rig.client.get("/") as res:
        assert 'href="/gomoku"' in await res.text()


async def test_a_new_game_and_a_move_get_the_engines_reply(rig: Rig) -> None:
    status, view = await post(rig, "/api/gomoku/new", {"level": "easy"})
    assert status == 200
    assert (view["size"], view["rule"], view["level"], view["person"]) == (15, "freestyle", "easy", "X")
    assert view["board"] == ["." * 15] * 15 and view["your_turn"] and view["result"] is None
    status, view = await post(rig, "/api/gomoku/move", {"x": 7, "y": 7})
    assert status == 200, view
    assert view["board"][7][7] == "X" and count(view, "O") == 1 and count(view, "X") == 1
    reply = view["engine_move"]
    assert view["moves"] == [[7, 7], [reply["x"], reply["y"]]]
    assert view["board"][reply["y"]][reply["x"]] == "O"
    assert view["your_turn"] and not view["thinking"] and view["to_move"] == "X"
    assert await state(rig) == view


async def test_the_engine_opens_when_the_person_plays_o(rig: Rig) -> None:
    status, view = await post(rig, "/api/gomoku/new", {"side": "O", "size": 9, "rule": "standard"})
    assert status == 200
    assert (view["person"], view["engine"], view["rule"]) == ("O", "X", "standard")
    assert view["moves"] == [[4, 4]] and view["board"][4] == "....X...." and view["your_turn"]


@pytest.mark.parametrize(
    ("path", "body", "status", "reason"),
    [
        ("/api/gomoku/move", {"x": 15, "y": 0}, 400, "15,0 is off the 15 x 15 board"),
        ("/api/gomoku/move", {"x": 0, "y": -1}, 400, "0,-1 is off"),
        ("/api/gomoku/move", {"x": 7, "y": 7}, 409, "7,7 is taken"),
        ("/api/gomoku/move", {"x": "a", "y": 1}, 400, "Expected `int`"),
        ("/api/gomoku/move", {"x": 1}, 400, "missing required field `y`"),
        ("/api/gomoku/move", {"x": 1, "y": 1, "z": 1}, 400, "unknown field `z`"),
        ("/api/gomoku/move", "{x", 400, "not JSON"),
        ("/api/gomoku/move", "[1, 2]", 400, "Expected `object`"),
        ("/api/gomoku/new", {"rule": "renju"}, 400, "unknown rule 'renju'"),
        ("/api/gomoku/new", {"level": "perfect"}, 400, "unknown level 'perfect'"),
        ("/api/gomoku/new", {"size": 4}, 400, "board side must be an integer 5..32"),
        ("/api/gomoku/new", {"side": "Z"}, 400, "Invalid enum value 'Z'"),
    ],
)
async def test_bad_input_is_refused_with_its_reason_and_changes_nothing(
    rig: Rig, monkeypatch: pytest.MonkeyPatch, path: str, body: Any, status: int, reason: str
) -> None:
    game = game_of(rig)
    monkeypatch.setattr(game, "think", lambda: passive(game))
    await post(rig, "/api/gomoku/new", {"level": "easy"})
    await post(rig, "/api/gomoku/move", {"x": 7, "y": 7})
    before = await state(rig)
    got, answer = await post(rig, path, body)
    assert (got, answer["ok"]) == (status, False) and reason in answer["error"], answer
    assert await state(rig) == before


async def test_a_post_that_is_not_json_is_refused(rig: Rig) -> None:
    before = await state(rig)
    async with rig.client.post("/api/gomoku/move", data="x=1&y=2", headers={}) as res:
        assert res.status == 415
    assert await state(rig) == before


async def test_a_five_ends_the_game_with_its_row(rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    game = game_of(rig)
    monkeypatch.setattr(game, "think", lambda: passive(game))
    await post(rig, "/api/gomoku/new", {"level": "easy"})
    for i in range(5):  # a diagonal from (3, 4) down to the right
        status, view = await post(rig, "/api/gomoku/move", {"x": 3 + i, "y": 4 + i})
        assert status == 200
    assert view["result"] == {"winner": "X", "line": [[3 + i, 4 + i] for i in range(5)]}
    assert len(view["moves"]) == 9 and not view["your_turn"]  # the engine did not move after the five
    status, answer = await post(rig, "/api/gomoku/move", {"x": 0, "y": 14})
    assert status == 409 and "the game is over" in answer["error"]


@pytest.mark.parametrize(("rule", "wins"), [(Rule.FREESTYLE, True), (Rule.STANDARD, False)])
def test_the_winning_line_of_an_overline_follows_the_rule(rule: Rule, wins: bool) -> None:
    board = GomokuBoard(9, rule=rule)
    row = [board.index(6 - i, i) for i in range(6)]  # an anti-diagonal of six, its middle stone last
    for square in row[:3] + row[4:] + row[3:4]:
        board.place(square, BLACK)
    assert winning_line(board, row[3]) == (row if wins else [])
    assert (board.winner() == BLACK) is wins


async def test_six_in_a_row_does_not_win_under_the_standard_rule(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = game_of(rig)
    monkeypatch.setattr(game, "think", lambda: passive(game))
    await post(rig, "/api/gomoku/new", {"rule": "standard"})
    for x in (0, 1, 2, 4, 5, 3):
        status, view = await post(rig, "/api/gomoku/move", {"x": x, "y": 7})
        assert status == 200, view
    assert view["board"][7].startswith("XXXXXX") and view["result"] is None and view["your_turn"]


async def test_a_second_request_while_the_engine_thinks_is_409_and_the_console_stays_live(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = game_of(rig)
    await post(rig, "/api/gomoku/new", {"level": "easy"})
    release = threading.Event()

    def held() -> Decision:
        assert release.wait(HOLD_S), "the test never released the engine"
        return passive(game)

    monkeypatch.setattr(game, "think", held)
    first = asyncio.create_task(post(rig, "/api/gomoku/move", {"x": 7, "y": 7}))
    try:
        await eventually(lambda: game.thinking, "the engine thinking")
        status, answer = await post(rig, "/api/gomoku/move", {"x": 8, "y": 8})
        assert status == 409 and "the engine is thinking" in answer["error"]
        status, answer = await post(rig, "/api/gomoku/new", {})
        assert status == 409 and "the engine is thinking" in answer["error"]
        view = await state(rig)  # the loop answers while the worker thread thinks
        assert view["thinking"] and not view["your_turn"] and view["moves"] == [[7, 7]]
        async with rig.client.get("/api/state") as res:
            assert res.status == 200
    finally:
        release.set()
    status, view = await first
    assert status == 200 and view["moves"] == [[7, 7], [0, 0]] and view["your_turn"]


async def test_an_engine_that_fails_leaves_the_game_playable_from_a_new_one(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = game_of(rig)
    await post(rig, "/api/gomoku/new", {"level": "easy"})

    def broken() -> Decision:
        raise RuntimeError("the engine broke")

    monkeypatch.setattr(game, "think", broken)
    async with rig.client.post("/api/gomoku/move", json={"x": 7, "y": 7}) as res:
        assert res.status == 500
    assert not game.thinking
    status, answer = await post(rig, "/api/gomoku/move", {"x": 8, "y": 8})
    assert status == 409 and "it is not your turn" in answer["error"]
    monkeypatch.undo()
    status, view = await post(rig, "/api/gomoku/new", {"level": "easy"})
    assert status == 200 and view["your_turn"]
