"""``sanzi motion``: drive the motion controller by hand, as GRBL senders do, to bring up a mechanism.

    sanzi motion [--port PORT] [--protocol grbl|frame] ACTION ...

Actions: ``home``; ``goto X Y [Z]`` (rises to the travel height first, travels, then descends to Z);
``magnet on|off``; ``pick X Y`` and ``place X Y`` (half a placement each: travel at the travel height,
descend, switch the magnet, dwell, rise); ``status``; ``unlock`` (clear an alarm without homing: only
when the position is known to be right); ``reset``; ``raw LINE`` (one G-code line, GRBL only, e.g.
``raw '$$'`` or ``raw 'G0 X10'``). Coordinates are table millimetres (docs/geometry.md). Port, protocol,
heights and feeds default to the ``[actuator]`` section of the configuration.

Nothing is done implicitly: the tool neither resets (unless ``--reset``), homes nor unlocks unless
asked, so it can look at a controller in any state, and a piece picked by one call stays held for the
next.
"""

from __future__ import annotations

import argparse
import sys

from services.actuator.blocking import BlockingController
from services.actuator.controller import ControllerError
from services.actuator.drivers import PROTOCOLS, UnknownProtocol
from services.common.config import ConfigError, load


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", help="serial port (default: actuator.port)")
    parser.add_argument(
        "--protocol", choices=PROTOCOLS, help="controller protocol (default: actuator.protocol)"
    )
    parser.add_argument("--baud", type=int, help="baud rate (default: actuator.baudrate)")
    parser.add_argument(
        "--reset",
        action="store_true",
        help="soft-reset the controller when connecting (stops motion, drops a held piece); "
        "default: keep its state",
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    actions.add_parser("home", help="run the homing cycle")
    goto = actions.add_parser("goto", help="go to X Y [Z] mm via the travel height")
    goto.add_argument("x", type=float)
    goto.add_argument("y", type=float)
    goto.add_argument("z", type=float, nargs="?")
    magnet = actions.add_parser("magnet", help="switch the magnet")
    magnet.add_argument("state", choices=("on", "off"))
    for name, text in (("pick", "pick up the piece at X Y"), ("place", "put the held piece down at X Y")):
        p = actions.add_parser(name, help=text)
        p.add_argument("x", type=float)
        p.add_argument("y", type=float)
    actions.add_parser("status", help="print the controller's status")
    actions.add_parser("unlock", help="clear an alarm without homing (only if the position is right)")
    actions.add_parser("reset", help="stop at once and empty the controller's queue")
    raw = actions.add_parser("raw", help="send one raw G-code line (GRBL)")
    raw.add_argument("line", nargs="+", help="the line; words are joined with spaces")


def run(args: argparse.Namespace) -> int:
    try:
        config = load(args.config)
    except ConfigError as exc:
        print(f"sanzi motion: {exc}", file=sys.stderr)
        return 2
    actuator = config.actuator
    if args.baud:
        import msgspec

        actuator = msgspec.structs.replace(actuator, baudrate=args.baud)
    try:
        with BlockingController.open(actuator, port=args.port, protocol=args.protocol, reset=args.reset) as m:
            print(f"connected: {m.controller.firmware}")
            return _act(m, args)
    except UnknownProtocol as exc:
        print(f"sanzi motion: {exc}", file=sys.stderr)
        return 2
    except ControllerError as exc:
        print(f"sanzi motion: {exc}", file=sys.stderr)
        return 1


def _act(m: BlockingController, args: argparse.Namespace) -> int:
    match args.action:
        case "home":
            print(m.home())
        case "goto":
            print(m.goto(args.x, args.y, args.z))
        case "magnet":
            m.magnet(args.state == "on")
            print(m.wait_idle())
        case "pick":
            print(m.pick(args.x, args.y))
        case "place":
            print(m.place(args.x, args.y))
        case "status":
            status = m.status()
            print(status)
            if status.in_alarm:
                print("in alarm: `sanzi motion home`, or `sanzi motion unlock` if the position is right")
        case "unlock":
            m.unlock()
            print(m.status())
        case "reset":
            m.reset()
            print(m.status())
        case "raw":
            for line in m.raw(" ".join(args.line)):
                print(line)
    return 0
