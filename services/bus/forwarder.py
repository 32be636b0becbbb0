"""The bus: XSUB/XPUB forwarders that every process connects to.

Two forwarders run side by side in one process, each a ``zmq.proxy`` in its own thread (the copying
happens in libzmq, not in Python):

- events: publishers connect to ``bus.pub``, subscribers to ``bus.sub``; deep queues, nothing dropped;
- frames: ``bus.frame_pub`` / ``bus.frame_sub`` with a queue of ``bus.frame_hwm`` (2) frames, so that a
  slow reader gets the newest camera frame and never a backlog.

A tcp endpoint beyond loopback is refused unless CURVE keys are configured (see :mod:`.curve`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

import zmq

from services.common.config import ensure_private_dir

from . import curve
from .config import BusConfig


@dataclass
class Forwarder:
    """One XSUB (``front``, publishers connect) to XPUB (``back``, subscribers connect) proxy."""

    name: str
    front: str
    back: str
    hwm: int
    ctx: zmq.Context
    curve_dir: str = ""
    _control: str = field(init=False, default="")
    _thread: threading.Thread | None = field(init=False, default=None)

    def start(self) -> None:
        xsub = self.ctx.socket(zmq.XSUB)
        xpub = self.ctx.socket(zmq.XPUB)
        for sock in (xsub, xpub):
            sock.linger = 0
            sock.sndhwm = self.hwm
            sock.rcvhwm = self.hwm
            if self.curve_dir:
                curve.make_server(sock, self.curve_dir)
        _prepare(self.front)
        _prepare(self.back)
        xsub.bind(self.front)
        xpub.bind(self.back)
        self._control = f"inproc://control-{self.name}-{id(self)}"
        control = self.ctx.socket(zmq.PAIR)
        control.bind(self._control)
        self._thread = threading.Thread(
            target=_run_proxy, args=(xsub, xpub, control), name=f"proxy-{self.name}", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        if self._thread is None:
            return
        ctl = self.ctx.socket(zmq.PAIR)
        ctl.linger = 0
        ctl.connect(self._control)
        ctl.send(b"TERMINATE")
        self._thread.join(timeout=2.0)
        ctl.close()
        self._thread = None


def _run_proxy(xsub: zmq.Socket, xpub: zmq.Socket, control: zmq.Socket) -> None:
    try:
        zmq.proxy_steerable(xsub, xpub, None, control)
    except zmq.ContextTerminated:
        pass
    finally:
        for sock in (xsub, xpub, control):
            sock.close(linger=0)


def _prepare(endpoint: str) -> None:
    """For ipc:// endpoints, make the folder private (0700) and remove a stale socket file left by a
    crashed forwarder (binding over it would fail or, worse, leave clients on a dead inode)."""
    if endpoint.startswith("ipc://"):
        path = Path(endpoint[len("ipc://") :])
        ensure_private_dir(path.parent)
        if path.exists() and path.is_socket():
            path.unlink()


def start_forwarders(ctx: zmq.Context, bus: BusConfig) -> list[Forwarder]:
    """Check the endpoints, start the ZAP handler when CURVE is configured, and start both forwarders.
    :raises curve.CurveError: when an endpoint would listen beyond loopback without keys."""
    curve.require_keys_for([bus.pub, bus.sub, bus.frame_pub, bus.frame_sub], bus.curve_dir)
    forwarders = [
        Forwarder("events", bus.pub, bus.sub, bus.event_hwm, ctx, bus.curve_dir),
        Forwarder("frames", bus.frame_pub, bus.frame_sub, bus.frame_hwm, ctx, bus.curve_dir),
    ]
    for fwd in forwarders:
        fwd.start()
    return forwarders
