"""The emulated GRBL 1.1 (the subset of docs/protocols.md section 1), as a pure byte-in/byte-out engine.

Behaviour copied from GRBL 1.1h where a client could notice it:

- both ``\\r`` and ``\\n`` end a line, and an empty line is answered ``ok`` (so ``\\r\\n`` gives two);
  replies end in ``\\r\\n``; spaces and comments (``(...)``, ``;...``) are ignored, letters case-folded;
- real-time bytes anywhere in the stream, never answered ``ok``: ``?`` status, ``0x18`` soft reset,
  ``!`` feed hold, ``~`` cycle start;
- motion lines are answered when accepted into the planner (15 blocks); a full planner holds the ``ok``;
- ``G4`` and the magnet M-codes wait for the planner to empty (GRBL's buffer synchronisation), so their
  ``ok`` comes after the preceding moves have finished (``G4`` after its dwell, too);
- lines are executed strictly in order; while one waits, later ones wait behind it;
- at power-on with ``simworld.homing_lock`` the machine is in ``Alarm`` until ``$H`` or ``$X``;
- any alarm (soft limit, injected hard limit, reset in motion) stops motion, empties the planner and
  switches the magnet off (GRBL's reset turns coolant off), so a held piece drops.

Simplification, documented in docs/protocols.md: a target outside the travel prints ``ALARM:2`` and
answers the line ``error:9``; real GRBL needs a soft reset before ``$X`` there and answers nothing.
"""

from __future__ import annotations

import random
import re
from collections import deque
from collections.abc import Callable, Generator
from typing import Final

from .config import SimWorldConfig
from .faults import Faults
from .motion import Planner, SoftLimitError
from .world import World

BANNER: Final = "Grbl 1.1h ['$' for help]"
UNLOCK_HINT: Final = "[MSG:'$H'|'$X' to unlock]"
UNLOCKED_MSG: Final = "[MSG:Caution: Unlocked]"
BUILD_INFO: Final = ("[VER:1.1h.20190825:]", "[OPTS:V,15,128]")
HELP: Final = "[HLP:$$ $# $G $I $N $x=val $Nx=line $J=line $SLP $C $X $H ~ ! ? ctrl-x]"
EOL: Final = "\r\n"
#: GRBL's line buffer is 80 characters (including the terminator).
LINE_MAX: Final = 79
MM_PER_INCH: Final = 25.4

# Real-time command bytes.
RT_STATUS: Final = ord("?")
RT_RESET: Final = 0x18
RT_HOLD: Final = ord("!")
RT_RESUME: Final = ord("~")

# GRBL 1.1 error codes used here.
ERR_EXPECTED_LETTER: Final = 1
ERR_BAD_NUMBER: Final = 2
ERR_INVALID_DOLLAR: Final = 3
ERR_NEGATIVE: Final = 4
ERR_NOT_IDLE: Final = 8
ERR_ALARM_LOCK: Final = 9
ERR_OVERFLOW: Final = 11
ERR_UNSUPPORTED: Final = 20
ERR_MODAL_GROUP: Final = 21
ERR_UNDEFINED_FEED: Final = 22
ERR_WORD_REPEATED: Final = 25
ERR_MISSING_VALUE: Final = 28

# Alarm codes.
ALARM_HARD_LIMIT: Final = 1
ALARM_SOFT_LIMIT: Final = 2
ALARM_RESET_IN_MOTION: Final = 3
#: internal code of the power-on "homing required" lock (no ``ALARM:`` line is printed for it).
ALARM_HOMING_LOCK: Final = 0

_WORD = re.compile(r"([A-Z])([-+]?(?:\d+\.?\d*|\.\d+))?")
_COMMENT = re.compile(r"\([^)]*\)")
#: M-codes GRBL accepts (program flow, spindle, coolant); those not configured for the magnet do nothing.
_KNOWN_M: Final = frozenset({0, 1, 2, 3, 4, 5, 7, 8, 9, 30})
#: G-codes accepted and ignored (plane, feed mode, work coordinate system 1, path control).
_NOOP_G: Final = frozenset({17.0, 94.0, 54.0, 61.0})

Condition = Callable[[], bool]
LineRun = Generator[Condition, None, str]


class GrblError(Exception):
    """A line rejected with ``error:<code>``."""

    def __init__(self, code: int, why: str = "") -> None:
        super().__init__(f"error:{code} {why}".strip())
        self.code = code


def _m_number(code: str) -> int:
    """ "M8" -> 8. :raises ValueError: for a malformed code."""
    if not code.upper().startswith("M"):
        raise ValueError(f"not an M-code: {code!r}")
    return int(code[1:])


class GrblEngine:
    """GRBL 1.1 over bytes. Call :meth:`receive` with what arrived and :meth:`tick` often; the engine
    calls ``out`` with the bytes to send. All times are ``now`` values from one monotonic clock.
    """

    def __init__(
        self,
        world: World,
        planner: Planner,
        sim: SimWorldConfig,
        faults: Faults,
        out: Callable[[bytes], None],
    ) -> None:
        self.world = world
        self.planner = planner
        self.sim = sim
        self.faults = faults
        self.out = out
        self.rng = random.Random(sim.seed + 1)
        self.magnet_on = _m_number(sim.magnet_on)
        self.magnet_off = _m_number(sim.magnet_off)
        self.alarm: int | None = ALARM_HOMING_LOCK if sim.homing_lock else None
        self.homed = False
        self._rx = bytearray()
        self._overflow = False
        self._lines: deque[str] = deque()
        self._running: LineRun | None = None
        self._waiting_on: Condition | None = None
        self._now = 0.0
        # modal state
        self.motion = 0  # G0 at power-on
        self.absolute = True
        self.inches = False
        self.feed: float | None = None
        planner.on_alarm = self._hard_alarm

    # ------------------------------------------------------------------ output

    def _emit(self, text: str) -> None:
        self.out((text + EOL).encode("ascii"))

    def _reply(self, text: str) -> None:
        """A command's reply (``ok`` / ``error:N``), subject to the lose-reply and garbage faults."""
        if self.faults.take("garbage"):
            junk = bytes(self.rng.choice(b"#%&*@!~^|xqz0123456789") for _ in range(self.rng.randint(3, 12)))
            self.out(junk + EOL.encode())
        if self.faults.take("lose-reply"):
            return
        self._emit(text)

    def power_on(self) -> None:
        """What GRBL prints when it starts."""
        self._emit("")
        self._emit(BANNER)
        if self.alarm is not None:
            self._emit(UNLOCK_HINT)

    # ------------------------------------------------------------------ input

    def receive(self, data: bytes, now: float) -> None:
        """Bytes from the host: real-time bytes act at once, the rest is assembled into lines."""
        for byte in data:
            if byte == RT_STATUS:
                self.planner.tick(now)
                self._emit(self.status_report())
            elif byte == RT_RESET:
                self.soft_reset(now)
            elif byte == RT_HOLD:
                self.planner.feed_hold(now)
            elif byte == RT_RESUME:
                self.planner.resume(now)
            elif byte in (0x0A, 0x0D):
                line = self._rx.decode("ascii", errors="replace")
                self._lines.append("\x00overflow" if self._overflow else line)
                self._rx.clear()
                self._overflow = False
                self.tick(now)  # execute it before any later real-time byte is looked at
            elif byte >= 0x80:
                continue  # extended real-time commands (overrides, jog cancel): not emulated
            elif len(self._rx) >= LINE_MAX:
                self._overflow = True
            else:
                self._rx.append(byte)
        self.tick(now)

    def tick(self, now: float) -> None:
        """Advance motion, resume a waiting line when its condition holds, run queued lines in order."""
        self.planner.tick(now)
        self._now = now
        while True:
            if self._running is not None:
                assert self._waiting_on is not None
                if not self._waiting_on():
                    return
                self._advance()
                continue
            if not self._lines:
                return
            self._start_line(self._lines.popleft())

    def _start_line(self, line: str) -> None:
        if line == "\x00overflow":
            self._reply(f"error:{ERR_OVERFLOW}")
            return
        try:
            run = self._execute(line)
        except GrblError as exc:
            self._reply(f"error:{exc.code}")
            return
        self._running = run
        self._waiting_on = lambda: True
        self._advance()

    def _advance(self) -> None:
        assert self._running is not None
        try:
            self._waiting_on = next(self._running)
        except StopIteration as stop:
            self._running = None
            self._waiting_on = None
            if stop.value:
                self._reply(stop.value)
        except GrblError as exc:
            self._running = None
            self._waiting_on = None
            self._reply(f"error:{exc.code}")

    # ------------------------------------------------------------------ state

    def state_name(self) -> str:
        if self.alarm is not None:
            return "Alarm"
        if self.planner.homing:
            return "Home"
        if self.planner.hold:
            return "Hold"
        if self.planner.busy:
            return "Run"
        return "Idle"

    def status_report(self) -> str:
        x, y, z = self.planner.position()
        rate = round(self.planner.current_rate())
        return f"<{self.state_name()}|MPos:{x:.3f},{y:.3f},{z:.3f}|FS:{rate},0>"

    def _abort(self, now: float) -> bool:
        """What every reset and alarm does: stop motion, forget pending lines, magnet off."""
        was_moving = self.planner.stop(now)
        self._lines.clear()
        self._rx.clear()
        self._running = None
        self._waiting_on = None
        self.world.set_magnet(False)
        return was_moving

    def soft_reset(self, now: float) -> None:
        """Ctrl-X: abort; a reset in motion loses position (ALARM:3); then the banner."""
        was_moving = self._abort(now)
        if was_moving:
            self.alarm = ALARM_RESET_IN_MOTION
            self._emit(f"ALARM:{ALARM_RESET_IN_MOTION}")
        self.motion, self.absolute, self.inches = 0, True, False
        self._emit("")
        self._emit(BANNER)
        if self.alarm is not None:
            self._emit(UNLOCK_HINT)

    def raise_alarm(self, code: int, now: float) -> None:
        self._abort(now)
        self.alarm = code
        self._emit(f"ALARM:{code}")

    def _hard_alarm(self, code: int) -> None:
        self.raise_alarm(code, self._now)

    # ------------------------------------------------------------------ lines

    def _execute(self, raw: str) -> LineRun:
        """Parse and check one line; returns the generator that carries it out (its waits, then the
        reply). :raises GrblError: for a line rejected before anything happens."""
        line = _COMMENT.sub("", raw)
        line = line.split(";", 1)[0]
        line = "".join(line.split()).upper()
        if not line:
            return _done("ok")
        if line.startswith("$"):
            return self._dollar(line)
        if self.alarm is not None:
            raise GrblError(ERR_ALARM_LOCK, "alarm lock")
        return self._gcode(line)

    def _dollar(self, line: str) -> LineRun:
        if line == "$":
            return _done("ok", lambda: self._emit(HELP))
        if line == "$I":
            return _done("ok", lambda: [self._emit(t) for t in BUILD_INFO])
        if line == "$$":
            return _done("ok", self._print_settings)
        if line == "$G":
            return _done("ok", lambda: self._emit(self._parser_state()))
        if line == "$X":
            return self._unlock()
        if line == "$H":
            if self.planner.busy:
                raise GrblError(ERR_NOT_IDLE)
            return self._home()
        raise GrblError(ERR_INVALID_DOLLAR, f"unsupported {line}")

    def _unlock(self) -> LineRun:
        if self.alarm is not None:
            self.alarm = None
            self._emit(UNLOCKED_MSG)
        return "ok"
        yield  # pragma: no cover - makes this a generator

    def _home(self) -> LineRun:
        self.alarm = None
        self.planner.push_home(self._now)
        yield lambda: not self.planner.busy
        self.homed = True
        return "ok"

    def _print_settings(self) -> None:
        rate = self.sim.rapid_xy_mm_min
        settings = {
            "$20": "1",  # soft limits
            "$21": "0",
            "$22": "1" if self.sim.homing_lock else "0",
            "$110": f"{rate:.3f}",
            "$111": f"{rate:.3f}",
            "$112": f"{self.sim.rapid_z_mm_min:.3f}",
            "$130": f"{self.planner.table.width_mm:.3f}",
            "$131": f"{self.planner.table.height_mm:.3f}",
            "$132": f"{self.sim.z_max_mm - self.sim.z_min_mm:.3f}",
        }
        for key, value in settings.items():
            self._emit(f"{key}={value}")

    def _parser_state(self) -> str:
        on = self.world.gripper.magnet
        # The magnet is wired to coolant (M7/M8 with M9) or to the spindle (M3/M4 with M5).
        spindle = f"M{self.magnet_on}" if on and self.magnet_on in (3, 4) else "M5"
        coolant = f"M{self.magnet_on}" if on and self.magnet_on in (7, 8) else "M9"
        feed = 0 if self.feed is None else round(self.feed)
        return (
            f"[GC:G{self.motion} G54 G17 {'G20' if self.inches else 'G21'} "
            f"{'G90' if self.absolute else 'G91'} G94 {spindle} {coolant} T0 F{feed} S0]"
        )

    def _gcode(self, line: str) -> LineRun:
        words = _parse_words(line)
        g_codes = [v for letter, v in words if letter == "G"]
        m_codes = [v for letter, v in words if letter == "M"]
        values: dict[str, float] = {}
        for letter, v in words:
            if letter in "GMN":
                continue
            if letter in values:
                raise GrblError(ERR_WORD_REPEATED, f"{letter} repeated")
            if letter in "ST":
                continue  # spindle speed and tool number: accepted, nothing to do
            if letter not in "XYZFP":
                raise GrblError(ERR_UNSUPPORTED, f"word {letter}")
            values[letter] = v
        motion: int | None = None
        dwell = False
        units: bool | None = None
        absolute: bool | None = None
        for g in g_codes:
            if g in (0.0, 1.0):
                if motion is not None:
                    raise GrblError(ERR_MODAL_GROUP, "two motion commands")
                motion = int(g)
            elif g == 4.0:
                dwell = True
            elif g in (20.0, 21.0):
                units = g == 20.0
            elif g in (90.0, 91.0):
                absolute = g == 90.0
            elif g in _NOOP_G:
                pass
            else:
                raise GrblError(ERR_UNSUPPORTED, f"G{g:g}")
        magnet: bool | None = None
        for m in m_codes:
            if m != int(m) or int(m) not in _KNOWN_M | {self.magnet_on, self.magnet_off}:
                raise GrblError(ERR_UNSUPPORTED, f"M{m:g}")
            if int(m) == self.magnet_on:
                magnet = True
            elif int(m) == self.magnet_off:
                magnet = False
        if dwell and "P" not in values:
            raise GrblError(ERR_MISSING_VALUE, "G4 needs P")
        if "F" in values and values["F"] < 0:
            raise GrblError(ERR_NEGATIVE, "negative feed")
        if "P" in values and values["P"] < 0:
            raise GrblError(ERR_NEGATIVE, "negative dwell")
        # Modal changes, in GRBL's order of execution: units, distance mode, feed.
        inches = self.inches if units is None else units
        scale = MM_PER_INCH if inches else 1.0
        feed = self.feed
        if "F" in values:
            feed = values["F"] * scale
        mode = self.motion if motion is None else motion
        axes = {a: values[a] for a in "XYZ" if a in values}
        target = None
        if axes and not dwell:
            if mode == 1 and not feed:
                raise GrblError(ERR_UNDEFINED_FEED, "G1 without a feed rate")
            is_abs = self.absolute if absolute is None else absolute
            base = self.planner.end_position()
            target = tuple(
                (axes[a] * scale if is_abs else base[i] + axes[a] * scale) if a in axes else base[i]
                for i, a in enumerate("XYZ")
            )
        # Accepted: commit modal state now (GRBL updates its parser state when it accepts a line).
        self.inches = inches
        self.absolute = self.absolute if absolute is None else absolute
        self.feed = feed
        self.motion = mode
        return self._run_gcode(magnet, values.get("P") if dwell else None, target, mode, feed)

    def _run_gcode(
        self,
        magnet: bool | None,
        dwell_s: float | None,
        target: tuple[float, ...] | None,
        mode: int,
        feed: float | None,
    ) -> LineRun:
        if magnet is not None or dwell_s is not None:
            yield lambda: not self.planner.busy  # buffer synchronisation
            if magnet is not None:
                self.world.set_magnet(magnet)
            if dwell_s is not None:
                self.planner.push_dwell(dwell_s, self._now)
                yield lambda: not self.planner.busy
        if target is not None:
            x, y, z = target
            try:
                self.planner.check_limits((x, y, z))
            except SoftLimitError:
                self.raise_alarm(ALARM_SOFT_LIMIT, self._now)
                return f"error:{ERR_ALARM_LOCK}"
            yield lambda: self.planner.free() > 0
            self.planner.push_move((x, y, z), None if mode == 0 else feed, self._now)
        return "ok"


def _done(reply: str, action: Callable[[], object] | None = None) -> LineRun:
    if action is not None:
        action()
    return reply
    yield  # pragma: no cover - makes this a generator


def _parse_words(line: str) -> list[tuple[str, float]]:
    """``"G1X10.5F300"`` -> ``[("G", 1.0), ("X", 10.5), ("F", 300.0)]``.

    :raises GrblError: error:1 for a character that does not start a word, error:2 for a letter with
        no valid number.
    """
    words: list[tuple[str, float]] = []
    pos = 0
    while pos < len(line):
        ch = line[pos]
        if not ch.isalpha():
            raise GrblError(ERR_EXPECTED_LETTER, f"unexpected {ch!r}")
        m = _WORD.match(line, pos)
        if m is None or m.group(2) is None:
            raise GrblError(ERR_BAD_NUMBER, f"no number after {ch}")
        words.append((m.group(1), float(m.group(2))))
        pos = m.end()
    return words
