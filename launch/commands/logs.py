"""``sanzi logs [-f] [--proc P] [--level L] [--game G] [--json] [--since S]``: one timeline of all logs.

Reads the JSON log file of every process in ``runtime.log_dir`` (``<name>.log`` and its rotated
``<name>.log.N``), merges the lines by time and prints them readably: local time, process, level,
event, key=value. Lines that are not JSON (a traceback printed on a crash) are kept in place and
attributed to their process; level and game filters never hide them. ``--json`` passes the JSON lines
through unchanged (raw lines are wrapped as ``{"event": text, "raw": true, ...}``). ``-f`` follows the
files as they grow, are rotated or truncated, and picks up processes that start later.
"""

from __future__ import annotations

import argparse
import sys
import time

from launch.logview import Follower, LogFilter, LogViewError, discover, parse_since, read_all, write_lines
from launch.stack import stop_on_signals
from services.common import config as config_module
from services.common.shell import load_config

#: how often -f looks at the files.
POLL_S = 0.2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-f", "--follow", action="store_true", help="keep printing new lines")
    parser.add_argument(
        "--proc", metavar="P", action="append", default=[], help="only this process (repeatable, or a,b)"
    )
    parser.add_argument("--level", metavar="L", default="", help="only this level and above (debug..error)")
    parser.add_argument("--game", metavar="G", default="", help="only lines of this game id")
    parser.add_argument(
        "--since", metavar="S", default=None, help="only newer lines: 90s, 10m, 2h, 1d or a time"
    )
    parser.add_argument("--json", action="store_true", help="print the JSON lines as they are")
    parser.add_argument("-n", "--lines", type=int, default=None, metavar="N", help="only the last N lines")
    parser.add_argument(
        "--dir", metavar="DIR", default=None, help="the log folder (default: runtime.log_dir)"
    )


def run(args: argparse.Namespace) -> int:
    try:
        folder = args.dir or load_config(args).runtime.log_dir
        processes = frozenset(p.strip() for item in args.proc for p in item.split(",") if p.strip())
        since = parse_since(args.since) if args.since else None
        keep = LogFilter(processes=processes, level=args.level, game=args.game, since=since)
    except (config_module.ConfigError, LogViewError) as exc:
        print(f"sanzi logs: {exc}", file=sys.stderr)
        return 2
    known = discover(folder)
    if not known and not args.follow:
        print(f"sanzi logs: no log files in {folder}", file=sys.stderr)
        return 1
    unknown = processes - set(known)
    if unknown and not args.follow:
        print(
            f"sanzi logs: no log of {', '.join(sorted(unknown))} in {folder}; "
            f"processes: {', '.join(known) or 'none'}",
            file=sys.stderr,
        )
    width = max([len(p) for p in known] + [9])
    colour = sys.stdout.isatty() and not args.json
    if args.follow:
        # the follower reads the current files from their start, so no line falls between history and
        # following; the rotated files are history only
        follower: Follower | None = Follower(folder, keep)
        lines = sorted(read_all(folder, keep, current=False) + follower.poll(), key=lambda x: (x.ts, x.order))
    else:
        follower = None
        lines = read_all(folder, keep)
    if args.lines is not None:
        lines = lines[-args.lines :] if args.lines > 0 else []
    try:
        write_lines(lines, sys.stdout, json_out=args.json, width=width, colour=colour)
        if follower is None:
            return 0
        # Ctrl-C, SIGTERM or SIGHUP end the follow whoever started it: a script's background job
        # (`sanzi logs -f &`) inherits SIGINT ignored, and would otherwise follow for ever.
        with stop_on_signals():
            while True:
                time.sleep(POLL_S)
                write_lines(follower.poll(), sys.stdout, json_out=args.json, width=width, colour=colour)
    except KeyboardInterrupt:
        return 0
    except BrokenPipeError:  # `sanzi logs | head`
        return 0
    finally:
        if follower is not None:
            follower.close()
