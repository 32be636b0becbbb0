"""Configuration of the browser console (section [console])."""

from __future__ import annotations

from services.common.section import Section


class ConsoleConfig(Section):
    #: the address the console's web server listens on. Loopback by default: anything else requires a
    #: token (``token`` or ``token_file``), without which the console refuses to start.
    host: str = "127.0.0.1"
    #: its TCP port; 0 picks a free one (parallel stacks, the tests). The address actually bound is
    #: written to ``address_file`` and shown in the console's heartbeat.
    port: int = 8080
    #: the secret every request must carry (``Authorization: Bearer …``, ``?token=…`` or the cookie the
    #: console sets on the first good request); "" = none (only allowed on loopback).
    token: str = ""
    #: a file holding the token (``sanzi keys DIR`` writes ``DIR/console.token``); used when ``token`` is "".
    token_file: str = ""
    #: where the console writes its URL once it listens (``sanzi up``/``sanzi sim`` print it from there).
    address_file: str = "{runtime}/console-address"
    #: JPEG quality of the camera frames sent to browsers (1-100).
    jpeg_quality: int = 70
    #: at most this many camera frames per second to each browser (each also waits for the previous
    #: frame's acknowledgement: a slow browser gets fewer, never a queue). Every frame costs the console
    #: an overlay and a JPEG and the browser a decode: on a small board that also runs the browser, keep
    #: it low (measured in bench/e2e.py --browser); where cores are spare, up to the camera's 30.
    max_fps: float = 15.0
    #: a browser that has not acknowledged a frame for this long is sent the next one anyway.
    ack_timeout_s: float = 1.0
    #: how many game events the timeline keeps.
    timeline_length: int = 200
    #: the console's scheduling priority is lowered by this much (``nice``) at its start: it is a viewer,
    #: and on a small board the game's processes come first. 0 leaves it as it is.
    nice: int = 10
    #: the console waits this long for the referee's answer to an operator command (re-sending it).
    command_timeout_s: float = 4.0
