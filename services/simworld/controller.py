"""The emulated motion controller behind a real pseudo-terminal.

:class:`EmulatedController` owns a :class:`.world.World` (or shares one), a planner and one protocol engine
(GRBL or frame), and serves them on the master side of a pty from a background thread. Clients open the
slave (or the stable symlink) with pyserial exactly like ``/dev/ttyUSB0``.

Why a thread rather than the asyncio loop: the controller must also run inside a test process whose
main thread blocks in ``serial.Serial.read`` (the actuator's blocking wrapper, ``sanzi motion``); a
reader on the same thread's event loop would never run. The thread touches the world only under
:attr:`EmulatedController.lock`, which the simworld service takes too.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import threading
import time
import tty
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from messages import WorldAction, WorldState

from .config import MAX_SPEED, MIN_SPEED, SimWorldConfig
from .faults import Faults
from .frame import FrameEngine
from .grbl import GrblEngine
from .motion import Planner
from .world import World, WorldError

if TYPE_CHECKING:
    from services.common.config import Config

#: poll period while something moves or waits (seconds): the interpolation's time resolution.
BUSY_POLL_S: Final = 0.002
#: poll period when idle.
IDLE_POLL_S: Final = 0.05
#: output kept while the pty is full (nobody reading); beyond this it is dropped, like a UART's.
MAX_PENDING_OUTPUT: Final = 64 * 1024
PROTOCOLS: Final = ("grbl", "frame")


class ControllerError(RuntimeError):
    """The controller cannot start (unknown protocol, pty or symlink trouble)."""


class EmulatedController:
    """A GRBL 1.1 or binary-frame motion controller moving the simulated gripper.

    :param world: the world to act on; a fresh one from ``config`` when None.
    :param config: the whole configuration (``config.simworld``, ``config.table``); defaults when None.
    :param protocol: "grbl" or "frame"; default ``config.simworld.protocol``.
    :param speed: speed factor overriding ``config.simworld.speed``.
    :param faults: fault specs overriding ``config.simworld.faults``.
    :param clock: monotonic seconds (injectable for pure tests of :meth:`receive`).
    """

    def __init__(
        self,
        world: World | None = None,
        config: Config | None = None,
        *,
        protocol: str | None = None,
        speed: float | None = None,
        faults: list[str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if config is None:
            from services.common.config import load

            config = load(None)
        import msgspec

        sim: SimWorldConfig = config.simworld
        changes: dict[str, Any] = {}
        if protocol is not None:
            changes["protocol"] = protocol
        if speed is not None:
            changes["speed"] = speed
        if faults is not None:
            changes["faults"] = list(faults)
        if changes:
            sim = msgspec.structs.replace(sim, **changes)
        if sim.protocol not in PROTOCOLS:
            raise ControllerError(f"simworld.protocol must be one of {PROTOCOLS}, got {sim.protocol!r}")
        if sim.speed <= 0:
            raise ControllerError(f"simworld.speed must be positive, got {sim.speed}")
        self.sim = sim
        self.table = config.table
        self.world = world if world is not None else World(sim, config.table)
        self.clock = clock
        self.lock = threading.RLock()
        self.faults = Faults(sim.faults)
        self.planner = Planner(self.world, sim, config.table, self.faults)
        self._out = bytearray()
        #: bytes produced but not yet taken by the pty (nobody reading): kept up to MAX_PENDING_OUTPUT.
        self._pending_out = bytearray()
        engine_cls = GrblEngine if sim.protocol == "grbl" else FrameEngine
        self.engine: GrblEngine | FrameEngine = engine_cls(
            self.world, self.planner, sim, self.faults, self._out.extend
        )
        self.protocol = sim.protocol
        self.started_at = clock()
        self._stall_until = 0.0
        self._stalled_input = bytearray()
        self._master: int | None = None
        self._slave: int | None = None
        self._wake: tuple[int, int] | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.slave_path: str | None = None
        self.link_path: str | None = None
        #: bytes received and sent on the pty (for the bench and tests).
        self.bytes_in = 0
        self.bytes_out = 0
        self.engine.power_on()

    # ------------------------------------------------------------------ pure entry points

    def receive(self, data: bytes, now: float | None = None) -> bytes:
        """Feed bytes as if they came over the wire; returns what the controller sends back so far.
        Used by the pty thread; usable directly in pure tests (no pty)."""
        with self.lock:
            now = self.clock() if now is None else now
            if (
                self.faults.pending("stall")
                and data
                and self._stall_until <= now
                and self.faults.take("stall")
            ):
                self._stall_until = now + self.sim.stall_s
            if now < self._stall_until:
                self._stalled_input += data
            else:
                self._tick_locked(now)
                self.engine.receive(data, now)
            return self._take_output()

    def tick(self, now: float | None = None) -> bytes:
        """Advance time; returns output produced (deferred replies, alarms)."""
        with self.lock:
            self._tick_locked(self.clock() if now is None else now)
            return self._take_output()

    def _tick_locked(self, now: float) -> None:
        if now < self._stall_until:
            self.planner.tick(now)  # motion goes on while the firmware's serial side hangs
        else:
            if self._stalled_input:
                pending = bytes(self._stalled_input)
                self._stalled_input.clear()
                self.engine.receive(pending, now)
            self.engine.tick(now)
        self.world.sim_time_s = (now - self.started_at) * self.sim.speed

    def _take_output(self) -> bytes:
        data = bytes(self._out)
        self._out.clear()
        return data

    def busy(self) -> bool:
        with self.lock:
            return self.planner.busy or self._stall_until > self.clock() or bool(self._stalled_input)

    # ------------------------------------------------------------------ world access (thread-safe)

    def inject(self, kind: str, count: int = 1) -> None:
        """Arm ``count`` faults of ``kind`` (see :mod:`.faults`). :raises FaultSpecError: unknown kind."""
        with self.lock:
            self.faults.add(kind, count)

    def apply(self, action: WorldAction) -> None:
        """The person's action on the world (see :meth:`.world.World.apply`); a ``speed`` action sets
        the speed factor (:meth:`set_speed`). :raises WorldError: the world is then unchanged."""
        with self.lock:
            if action.kind == "speed":
                self.set_speed(action.speed)
            else:
                self.world.apply(action)

    def set_speed(self, speed: float | None) -> None:
        """Run at ``speed`` from now on: motions planned from now take ``1/speed`` of their simulated
        time (one under way finishes at the old speed), and simulated time goes on without a jump.
        :raises WorldError: unless ``MIN_SPEED <= speed <= MAX_SPEED``."""
        if speed is None or isinstance(speed, bool) or not MIN_SPEED <= speed <= MAX_SPEED:
            raise WorldError(f"speed must be a factor from {MIN_SPEED:g} to {MAX_SPEED:g}, got {speed!r}")
        import msgspec

        with self.lock:
            now = self.clock()
            self._tick_locked(now)
            # keep sim_time_s continuous: (now - started_at) * speed is what it was
            self.started_at = now - (now - self.started_at) * self.sim.speed / speed
            self.sim = msgspec.structs.replace(self.sim, speed=float(speed))
            self.planner.speed = float(speed)

    def snapshot(self) -> WorldState:
        import msgspec

        with self.lock:
            self._tick_locked(self.clock())
            return msgspec.structs.replace(self.world.snapshot(), speed=self.sim.speed)

    # ------------------------------------------------------------------ the pty

    def start_pty(self, link_path: str | os.PathLike[str] | None = None) -> str:
        """Open a pseudo-terminal, publish its slave as the symlink ``link_path`` (atomically replacing
        an old one) and serve it from a daemon thread. Returns the path clients should open (the
        symlink, or the slave's /dev/pts path when ``link_path`` is None).

        :raises ControllerError: if already started or the symlink cannot be made.
        """
        if self._thread is not None:
            raise ControllerError("the controller is already serving a pty")
        master, slave = os.openpty()
        tty.setraw(slave)  # no echo, no line editing, no CR/LF translation: a plain UART
        os.set_blocking(master, False)
        self._master, self._slave = master, slave
        # We keep the slave open ourselves so that a client closing it does not make the master
        # read EIO, and a client re-opening it finds the same pty.
        self.slave_path = os.ttyname(slave)
        path = self.slave_path
        if link_path is not None:
            link = Path(link_path)
            tmp = link.with_name(f".{link.name}.{os.getpid()}.tmp")
            try:
                link.parent.mkdir(parents=True, exist_ok=True)
                with contextlib.suppress(FileNotFoundError):
                    tmp.unlink()
                tmp.symlink_to(self.slave_path)
                tmp.replace(link)
            except OSError as exc:
                self._close_fds()
                raise ControllerError(f"cannot publish the pty as {link}: {exc.strerror}") from None
            self.link_path = str(link)
            path = self.link_path
        self._wake = os.pipe()
        with self.lock:
            self._write(self._take_output())  # the power-on banner is in the port before we return
        self._stop.clear()
        self._thread = threading.Thread(target=self._serve, name="simworld-controller", daemon=True)
        self._thread.start()
        return path

    def _serve(self) -> None:
        assert self._master is not None and self._wake is not None
        master, wake = self._master, self._wake[0]
        while not self._stop.is_set():
            timeout = BUSY_POLL_S if self.busy() or self._out else IDLE_POLL_S
            try:
                readable, _, _ = select.select([master, wake], [], [], timeout)
            except (OSError, ValueError):
                return
            data = b""
            if master in readable:
                try:
                    data = os.read(master, 4096)
                except BlockingIOError:
                    data = b""
                except OSError as exc:
                    if exc.errno == errno.EIO:  # no slave open (cannot happen while we hold it)
                        time.sleep(IDLE_POLL_S)
                        continue
                    return
            if wake in readable:
                with contextlib.suppress(OSError):
                    os.read(wake, 64)
            self.bytes_in += len(data)
            out = self.receive(data) if data else self.tick()
            self._write(out)

    def _write(self, data: bytes) -> None:
        pending = self._pending_out
        pending += data
        while pending and self._master is not None:
            try:
                n = os.write(self._master, pending)
            except BlockingIOError:
                break
            except OSError:
                pending.clear()
                break
            self.bytes_out += n
            del pending[:n]
        if len(pending) > MAX_PENDING_OUTPUT:
            del pending[: len(pending) - MAX_PENDING_OUTPUT]

    def close(self) -> None:
        """Stop the thread, close the pty and remove the symlink if it still points at our pty."""
        self._stop.set()
        if self._wake is not None:
            with contextlib.suppress(OSError):
                os.write(self._wake[1], b"x")
        if self._thread is not None:
            self._thread.join(timeout=2.0)
            self._thread = None
        if self.link_path is not None:
            link = Path(self.link_path)
            with contextlib.suppress(OSError):
                if os.readlink(link) == self.slave_path:
                    link.unlink()
            self.link_path = None
        self._close_fds()

    def _close_fds(self) -> None:
        for fd in (self._master, self._slave, *(self._wake or ())):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._master = self._slave = None
        self._wake = None

    def __enter__(self) -> EmulatedController:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
