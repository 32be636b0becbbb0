"""``sanzi up [--sim]``: the whole stack under supervisord, in the foreground.

Writes the runtime configuration and a supervisord configuration generated from the process registry into
the runtime folder, starts supervisord, waits until every process runs and is heard on the bus, and then
stays in the foreground (supervisord's log on the terminal) until Ctrl-C, SIGTERM or ``sanzi down``; the
stack is then stopped in order and no process is left behind.

On the simulator (``--sim``, or a configuration whose camera source is "sim") the calibration the
actuator needs is computed from the simulated camera when the configuration has none.
"""

from __future__ import annotations

import argparse
import sys

from services.common import config as config_module
from services.common.config import Config
from services.common.shell import parse_overrides

from .. import stack as stack_module
from ..processes import UnknownProcessError, mode_of


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sim", action="store_true", help="run on the simulator whatever the configuration")
    add_set_argument(parser)
    parser.add_argument(
        "--without",
        metavar="PROCESS",
        action="append",
        default=[],
        help="do not run this process (e.g. one whose topics `sanzi play --instead-of` supplies); repeatable",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=stack_module.START_TIMEOUT_S,
        metavar="S",
        help="seconds to wait for every process to start (default %(default)s)",
    )


def add_set_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--set",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="override one configuration value, e.g. --set simworld.speed=5 (repeatable)",
    )


def load_config(args: argparse.Namespace, *, sim: bool, calibrate: bool = True) -> Config:
    """The configuration of ``--config`` with ``--set`` applied, turned into a simulator configuration
    when ``sim``; on the simulator, calibrated from the simulated camera when it has no calibration
    (and ``calibrate``: the actuator, which needs it, runs).
    :raises config_module.ConfigError:"""
    config = stack_module.load_config(args.config, parse_overrides(list(args.set)))
    if sim:
        config = stack_module.merge(config, stack_module.simulator_overrides(config))
    if calibrate and mode_of(config) == "sim" and not config.calibration.homography:
        from ..simrun import calibrate_simulator

        homography, error_mm = calibrate_simulator(config)
        config = stack_module.merge(config, {"calibration": {"homography": homography, "error_mm": error_mm}})
    return config


def run(args: argparse.Namespace) -> int:
    try:
        config = load_config(args, sim=args.sim, calibrate="actuator" not in args.without)
    except config_module.ConfigError as exc:
        print(f"sanzi up: {exc}", file=sys.stderr)
        return 2
    try:
        files = stack_module.prepare(config, command="up", exclude=args.without)
    except UnknownProcessError as exc:
        print(f"sanzi up: {exc}", file=sys.stderr)
        return 2
    stack = stack_module.Stack(files, output=None)
    with stack_module.stop_on_signals():
        try:
            stack.start()
            stack.wait_running(timeout=args.timeout)
            stack.wait_heartbeats(config, timeout=args.timeout)
            running = f"{len(files.programs)} processes running ({files.mode}); runtime {files.runtime_dir}"
            url = stack_module.console_url(config, files)
            if url:
                running += f"\n          the console: {url}"
            print(
                f"sanzi up: {running}\n          `sanzi status` to inspect, `sanzi logs -f` to follow, "
                "Ctrl-C or `sanzi down` to stop",
                file=sys.stderr,
                flush=True,
            )
            assert stack.proc is not None
            code = stack.proc.wait()
            return 0 if code == 0 else 1
        except stack_module.StackError as exc:
            print(f"sanzi up: {exc}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print("\nsanzi up: stopping the stack", file=sys.stderr, flush=True)
            return 0
        finally:
            with stack_module.uninterruptible():
                stack.stop()
