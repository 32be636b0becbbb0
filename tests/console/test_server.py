"""The console's endpoints through aiohttp's test client, on a real bus: every endpoint, bad input (a 4xx
with the reason, and nothing sent), the token, cross-site requests, and static files that cannot be
read from outside their folder."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from aiohttp import WSMsgType, WSServerHandshakeError, web

from services.common import config as config_module
from services.console import server
from services.console.service import ConsoleService
from services.console.token import ConsoleRefused, binding_problem, make_token, resolve_token

from .conftest import REFUSAL, Rig, console_rig, eventually, send_frame

JSON = {"Content-Type": "application/json"}


async def post(rig: Rig, path: str, body: Any, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    data = body if isinstance(body, str | bytes) else json.dumps(body)
    async with rig.client.post(path, data=data, headers=headers or JSON) as res:
        return res.status, await res.json()


async def test_state_follows_the_referee_and_keeps_the_contract(rig: Rig) -> None:
    async with rig.client.get("/api/state") as res:
        assert res.status == 200
        state = await res.json()
    assert {"phase", "board", "task"} <= set(state)
    assert state["referee_heard"] is False and state["sim"] is True
    await rig.peers.publish_state(phase="waiting-for-person", task=5, board="X...O....", game_id="g1")
    await eventually(lambda: rig.console.core.state is not None, "the console heard referee.state")
    async with rig.client.get("/api/state") as res:
        state = await res.json()
    assert (state["phase"], state["board"], state["task"]) == ("waiting-for-person", "X...O....", 5)
    async with rig.client.get("/api/timeline") as res:
        texts = [e["text"] for e in await res.json()]
    assert "game g1: task 5" in texts
    async with rig.client.get("/api/health") as res:
        health = await res.json()
    assert {t["topic"] for t in health["topics"]} >= {"referee.state", "sim.world"}
    async with rig.client.get("/api/stats") as res:
        assert (await res.json())["clients"] == []


async def test_operator_commands_reach_the_referee_and_its_refusal_is_shown(rig: Rig) -> None:
    status, body = await post(rig, "/api/operator", {"action": "task", "task": 5})
    assert (status, body["ok"], body["game_id"]) == (200, True, "g1")
    status, body = await post(rig, "/api/operator", {"action": "task", "task": 3, "squares": [1, 5, 9, 3]})
    assert status == 409 and body == {"ok": False, "error": f"the referee refused: {REFUSAL}"}
    status, _ = await post(rig, "/api/operator", {"action": "level", "level": "hard"})
    assert status == 200
    status, _ = await post(rig, "/api/operator", {"action": "stop"})
    assert status == 200
    assert [c.action for c in rig.peers.commands] == ["task", "task", "level", "stop"]
    assert rig.peers.commands[1].squares == [1, 5, 9, 3]
    await eventually(
        lambda: any(e.kind == "refused" for e in rig.console.core.timeline), "the refusal in the timeline"
    )


@pytest.mark.parametrize(
    ("body", "status", "reason"),
    [
        ({"action": "task", "task": 9}, 400, "a task is a number 1..6"),
        ({"action": "task"}, 400, "a task is a number 1..6"),
        ({"action": "task", "task": 2, "squares": [0, 5, 9, 3]}, 400, "square 1..9"),
        ({"action": "task", "task": 2, "squares": [1, 1, 9, 3]}, 400, "repeat"),
        ({"action": "task", "task": 2, "squares": "1,5"}, 400, "Expected `array`"),
        ({"action": "task", "task": 2, "squares": [1, 5, 9, 3], "colours": "bxww"}, 400, "letters b and w"),
        ({"action": "task", "task": 4, "first": 10}, 400, "first square"),
        ({"action": "level", "level": "godlike"}, 400, "level must be one of"),
        ({"action": "dance"}, 400, "Invalid enum value 'dance'"),
        ({"action": "stop", "force": True}, 400, "unknown field `force`"),
        ("{not json", 400, "not JSON"),
    ],
)
async def test_bad_operator_input_is_refused_and_nothing_is_sent(
    rig: Rig, body: Any, status: int, reason: str
) -> None:
    got, answer = await post(rig, "/api/operator", body)
    assert got == status and answer["ok"] is False and reason in answer["error"], answer
    assert rig.peers.commands == []


async def test_requests_must_be_json_from_this_site(rig: Rig) -> None:
    body = json.dumps({"action": "stop"})
    status, answer = await post(rig, "/api/operator", body, {"Content-Type": "text/plain"})
    assert status == 415 and "JSON" in answer["error"]
    status, answer = await post(rig, "/api/operator", body, {**JSON, "Origin": "http://evil.example"})
    assert status == 403 and "another site" in answer["error"]
    status, answer = await post(rig, "/api/operator", "x" * (server.MAX_BODY + 10))
    assert status == 413
    assert rig.peers.commands == []


async def test_another_site_cannot_drive_or_watch(rig: Rig) -> None:
    """A name of another site resolving here (DNS rebinding) is refused; so is a WebSocket opened by a
    page of another site."""
    async with rig.client.get("/api/state", headers={"Host": "evil.example:8080"}) as res:
        assert res.status == 403 and "evil.example" in (await res.json())["error"]
    async with rig.client.get("/api/state", headers={"Host": f"localhost:{rig.client.port}"}) as res:
        assert res.status == 200
    with pytest.raises(WSServerHandshakeError) as err:
        await rig.client.ws_connect("/ws", headers={"Origin": "http://evil.example"})
    assert err.value.status == 403
    async with rig.client.ws_connect("/ws", headers={"Origin": f"http://127.0.0.1:{rig.client.port}"}) as ws:
        assert json.loads((await ws.receive(timeout=5)).data)["type"]


async def test_the_simulated_person_acts_on_the_table(rig: Rig) -> None:
    await rig.peers.publish_state(phase="waiting-for-person", task=5, person_colour="black", game_id="g1")
    await eventually(lambda: rig.console.core.state is not None, "the console heard referee.state")
    status, answer = await post(rig, "/api/sim/place", {"square": 5})
    assert status == 200 and answer["ok"], answer
    assert rig.console.core.world is not None and rig.console.core.world.board[4] == "X"
    status, _ = await post(rig, "/api/sim/move", {"from_square": 5, "to_square": 1})
    assert status == 200
    status, _ = await post(rig, "/api/sim/remove", {"square": 1})
    assert status == 200
    assert [a.kind for a in rig.peers.actions] == ["place", "move", "remove"]
    status, _ = await post(rig, "/api/sim/button", {})
    assert status == 200
    await eventually(lambda: rig.peers.buttons == [True, False], "a press and a release on sim.button")
    status, _ = await post(rig, "/api/sim/speed", {"speed": 2.5})
    assert status == 200 and rig.peers.actions[-1].kind == "speed" and rig.peers.actions[-1].speed == 2.5
    status, answer = await post(rig, "/api/sim/human", {"policy": "mistake:2", "misbehave": ["two-pieces"]})
    assert status == 200 and answer["policy"] == "mistake:2"
    await eventually(lambda: len(rig.peers.setups) == 1, "the person's new policy on sim.human")
    await eventually(lambda: rig.console.core.human_policy == "mistake:2", "the console shows the policy")


@pytest.mark.parametrize(
    ("path", "body", "status", "reason"),
    [
        ("/api/sim/place", {"square": 10}, 400, "square 1..9"),
        ("/api/sim/place", {"square": "5"}, 400, "Expected `int`"),
        ("/api/sim/place", {"square": 2, "colour": "red"}, 400, "Invalid enum value 'red'"),
        ("/api/sim/place", {"square": 3}, 409, "square 3 is not empty"),
        ("/api/sim/move", {"from_square": 3, "to_square": 3}, 400, "the same square"),
        ("/api/sim/move", {"from_square": 1, "to_square": 2}, 409, "square 1 is empty"),
        ("/api/sim/move", {"from_square": 3, "to_square": 7}, 409, "square 7 is not empty"),
        ("/api/sim/remove", {"square": 2}, 409, "square 2 is empty"),
        ("/api/sim/remove", {}, 400, "missing required field `square`"),
        ("/api/sim/button", {"twice": True}, 400, "takes no arguments"),
        ("/api/sim/human", {"policy": "clever"}, 400, "clever"),
        ("/api/sim/speed", {"speed": 0}, 400, "speed must be a factor from 0.1 to 100"),
        ("/api/sim/speed", {"speed": "fast"}, 400, "Expected `float`"),
        ("/api/sim/human", {"policy": "perfect", "misbehave": ["juggle"]}, 400, "unknown misbehaviour"),
    ],
)
async def test_bad_simulator_input_is_refused_and_the_table_is_unchanged(
    rig: Rig, path: str, body: Any, status: int, reason: str
) -> None:
    rig.peers.board = "..X...O.."
    await rig.peers.publish_world()
    await eventually(
        lambda: rig.console.core.world is not None and rig.console.core.world.board == "..X...O..",
        "the table",
    )
    got, answer = await post(rig, path, body)
    assert got == status and answer["ok"] is False and reason in answer["error"], answer
    await asyncio.sleep(0)
    assert rig.peers.actions == [] and rig.peers.buttons == [] and rig.peers.setups == []
    assert rig.peers.board == "..X...O.."


async def test_simulator_actions_are_refused_on_hardware(bus: Any) -> None:
    async with console_rig(bus, sim=False) as rig:
        status, answer = await post(rig, "/api/sim/place", {"square": 5})
        assert status == 409 and "hardware" in answer["error"]
        status, _ = await post(rig, "/api/sim/button", {})
        assert status == 409
        assert rig.peers.actions == [] and rig.peers.buttons == []


async def test_the_camera_with_its_overlay(rig: Rig) -> None:
    async with rig.client.get("/camera.jpg") as res:
        assert res.status == 503
    await send_frame(rig, 1)
    newest = rig.console.pairer.newest
    assert newest is not None and newest.obs is not None and newest.obs.frame_id == 1
    async with rig.client.get("/camera.jpg") as res:
        assert res.status == 200 and res.content_type == "image/jpeg"
        assert (await res.read())[:2] == b"\xff\xd8"


async def test_a_page_gets_state_and_frames_and_a_slow_one_only_the_newest(rig: Rig) -> None:
    """One frame in flight per page; frames arriving meanwhile replace each other and the next one
    sent, after the page says it showed the first, is the newest."""
    async with rig.client.ws_connect("/ws") as ws:
        kinds: set[str] = set()
        while not {"game", "health", "timeline"} <= kinds:
            msg = await ws.receive(timeout=5)
            assert msg.type is WSMsgType.TEXT
            kinds.add(json.loads(msg.data)["type"])
        await send_frame(rig, 1)
        first = await _next_frame(ws)
        flow = next(iter(rig.console.clients)).flow
        # what the frame loop offers when its encoding of a frame ends after the page took another:
        # a frame already older than the next pair, which must not go before the newest
        assert rig.console._jpeg is not None
        flow.offer(*rig.console._jpeg)
        for i in range(2, 7):  # the page does not acknowledge: these wait, each replacing the last
            await send_frame(rig, i)
        newest = rig.console.pairer.seq
        assert flow.sent == 1 and flow.in_flight == first  # nothing more went, nothing was queued
        await eventually(lambda: flow.waiting is None, "the stale frame dropped")
        await ws.send_str(json.dumps({"type": "shown", "seq": first}))
        assert await _next_frame(ws) == newest
        await ws.send_str("not an acknowledgement")  # ignored, the page stays connected
        await ws.send_str(json.dumps({"type": "shown", "seq": newest}))
        await eventually(lambda: flow.shown == 2, "both frames acknowledged")
        assert flow.stats(0)["latency_ms_p50"] is not None


async def _next_frame(ws: Any) -> int:
    while True:
        msg = await ws.receive(timeout=5)
        if msg.type is WSMsgType.BINARY:
            assert msg.data[4:6] == b"\xff\xd8"
            return int(struct.unpack(">I", msg.data[:4])[0])


async def test_static_files_stay_in_their_folder(rig: Rig) -> None:
    async with rig.client.get("/") as res:
        assert res.status == 200 and "sanzi console" in await res.text()
    for name in ("app.js", "style.css", "index.html"):
        async with rig.client.get(f"/static/{name}") as res:
            assert res.status == 200, name
    for path in (
        "/static/../server.py",
        "/static/%2e%2e/server.py",
        "/static/..%2fserver.py",
        "/static/%2e%2e%2f%2e%2e%2fconfig.py",
        "/static//etc/passwd",
        "/static/nothing.js",
    ):
        async with rig.client.get(path) as res:
            assert res.status in (400, 403, 404), path
            assert "ConsoleService" not in await res.text()


async def test_the_token_is_required_on_every_request(bus: Any) -> None:
    async with console_rig(bus, token="s3cret-token") as rig:
        for path in ("/", "/api/state", "/camera.jpg", "/static/app.js", "/ws"):
            async with rig.client.get(path) as res:
                assert res.status == 401, path
        async with rig.client.get("/api/state", headers={"Authorization": "Bearer wrong"}) as res:
            assert res.status == 401
        status, _ = await post(rig, "/api/operator", {"action": "stop"})
        assert status == 401 and rig.peers.commands == []
        async with rig.client.get("/api/state", headers={"Authorization": "Bearer s3cret-token"}) as res:
            assert res.status == 200
        status, _ = await post(
            rig, "/api/operator", {"action": "stop"}, {**JSON, "Authorization": "Bearer s3cret-token"}
        )
        assert status == 200
        async with rig.client.get("/?token=s3cret-token") as res:  # the page's first load sets a cookie
            assert res.status == 200 and server.COOKIE in res.cookies
        async with rig.client.get("/static/app.js") as res:  # its own files then come with the cookie
            assert res.status == 200
        async with rig.client.ws_connect("/ws?token=s3cret-token") as ws:
            assert json.loads((await ws.receive(timeout=5)).data)["type"]


def test_beyond_loopback_only_with_a_token(tmp_path: Any) -> None:
    assert binding_problem("127.0.0.1", "") == ""
    assert binding_problem("::1", "") == ""
    assert binding_problem("localhost", "") == ""
    assert "no token" in binding_problem("0.0.0.0", "")
    assert "no token" in binding_problem("192.168.1.20", "")
    assert binding_problem("0.0.0.0", "t") == ""
    token_file = make_token(tmp_path)
    assert token_file.stat().st_mode & 0o077 == 0 and make_token(tmp_path) == token_file  # kept

    class Cfg:
        token = ""
        token_file = str(tmp_path / "console.token")

    assert resolve_token(Cfg) == token_file.read_text().strip() and len(resolve_token(Cfg)) >= 40
    Cfg.token_file = str(tmp_path / "missing")
    with pytest.raises(ConsoleRefused, match="missing"):
        resolve_token(Cfg)


def test_the_process_refuses_to_listen_beyond_loopback_without_a_token(
    runtime_dir: Any, subprocess_env: dict[str, str]
) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "services.console",
            "--set",
            "console.host='0.0.0.0'",
            "--set",
            "console.port=0",
        ],
        env={**subprocess_env, "SANZI_SET": f"runtime.dir='{runtime_dir}'"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 1, proc.stderr
    assert "no token is set" in proc.stdout + proc.stderr


async def test_a_port_in_use_is_waited_for_not_crashed_on(config: Any) -> None:
    """The game does not need the console: a taken port is reported in the heartbeat and tried again."""
    blocker = socket.socket()
    blocker.bind(("127.0.0.1", 0))
    blocker.listen()
    port = blocker.getsockname()[1]
    overrides = {"runtime": {"dir": config.runtime.dir}, "console": {"port": port, "nice": 0}}
    console = ConsoleService(config_module.load(None, overrides=overrides))
    console.runner = web.AppRunner(server.make_app(console))
    await console.runner.setup()
    listen = asyncio.create_task(console._listen())
    try:
        await eventually(lambda: console.health == "fault", "the taken port reported")
        assert f"cannot listen on 127.0.0.1:{port}" in console.heartbeat().last_error
        blocker.close()
        await asyncio.wait_for(listen, timeout=10)
        assert console.url == f"http://127.0.0.1:{port}/" and console.health == "ok"
        assert (await asyncio.to_thread(Path(console.cfg.address_file).read_text)).strip() == console.url
    finally:
        blocker.close()
        listen.cancel()
        await console.runner.cleanup()
        console.close()


async def test_a_symbolic_link_in_the_static_folder_is_not_followed(rig: Rig, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the browser")
    link = server.STATIC_DIR / f"test-link-{os.getpid()}.txt"
    link.symlink_to(secret)
    try:
        async with rig.client.get(f"/static/{link.name}") as res:
            assert res.status in (403, 404) and "not for the browser" not in await res.text()
    finally:
        link.unlink()
