"""Configuration of the bus (section [bus]): the endpoints every process connects to, queue depths,
CURVE keys and the heartbeat's timing."""

from __future__ import annotations

from services.common.section import Section


class BusConfig(Section):
    #: publishers connect here (the forwarder's XSUB).
    pub: str = "ipc://{runtime}/bus-pub"
    #: subscribers connect here (the forwarder's XPUB).
    sub: str = "ipc://{runtime}/bus-sub"
    #: camera frames travel on their own forwarder with a tiny high-water mark.
    frame_pub: str = "ipc://{runtime}/frame-pub"
    frame_sub: str = "ipc://{runtime}/frame-sub"
    #: the referee's snapshot server (ROUTER).
    snapshot: str = "ipc://{runtime}/referee-snapshot"
    #: queue depth for game events: deep, nothing may be dropped.
    event_hwm: int = 100_000
    #: queue depth for camera frames: the newest matters, a backlog never does.
    frame_hwm: int = 2
    #: folder of CURVE keys made by `sanzi keys`; required when a tcp endpoint binds beyond loopback.
    curve_dir: str = ""
    #: this machine's client key name in ``curve_dir`` (``NAME.key_secret``).
    curve_client: str = "client"
    heartbeat_period_s: float = 1.0
    #: a peer that missed this long of heartbeats is down (3 periods).
    peer_timeout_s: float = 3.0
