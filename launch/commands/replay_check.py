"""``sanzi replay-check REC [--json] [--tick S]``: re-run the referee on a recording, in lockstep.

Feeds the recording's referee inputs (operator commands, button presses, vision, AI replies, actuator
events, heartbeats) in recorded order to a fresh referee state machine, with no clock and no sockets,
and diffs its outputs (commands, states, the journal of decisions) against the recorded ones
(:mod:`launch.replaycheck`). The referee's settings come from the configuration (``--config``), as they
did for the recorded run. Exit 0 when the outputs are the same, 1 when they differ, 2 on an error.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

from launch.replaycheck import check, render
from services.common import config as config_module
from services.common.recording import Recording, RecordingError
from services.common.shell import load_config
from services.referee import machine as M


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rec", metavar="REC", help="a recording made by sanzi record (or the black box)")
    parser.add_argument(
        "--tick",
        metavar="S",
        type=float,
        default=None,
        help="the shell's timer period (referee.tick_period_s)",
    )
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")


def run(args: argparse.Namespace) -> int:
    try:
        config = load_config(args)
        settings = M.Settings.from_config(config)
        tick = config.referee.tick_period_s if args.tick is None else args.tick
        if not tick > 0:
            raise ValueError(f"--tick must be positive, not {tick}")
        recording = Recording(args.rec, warn=False)
        result = check(recording, settings, tick, config.log.level)
    except (config_module.ConfigError, RecordingError, M.SettingsError, ValueError) as exc:
        print(f"sanzi replay-check: {exc}", file=sys.stderr)
        return 2
    if recording.tail is not None:
        print(f"sanzi replay-check: warning: {recording.tail}", file=sys.stderr)
    if args.json:
        doc = {
            "same": result.same,
            "inputs": result.inputs,
            "events": result.events,
            "streams": [
                {**asdict(s), "same": s.same, "first_difference": s.first_difference()}
                for s in result.streams
            ],
        }
        print(json.dumps(doc, indent=2, default=list))
    else:
        print(render(result))
    return 0 if result.same else 1
