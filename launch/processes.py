"""The one registry of the stack's long-running processes.

Like openpilot's ``system/manager/process_config.py``: every process is listed here once, with the module
it runs, the configurations it runs in and the topics it publishes; whether the referee needs it alive is
read from the referee's configuration (:data:`REQUIRED_PEERS`).
Everything else reads this table: the supervisord configuration (:mod:`launch.supervisor`, checked against
the committed ``supervisord.conf`` by a test), ``sanzi up``/``sanzi sim``/``sanzi status``, and
``sanzi play --instead-of PROCESS`` (which topics a recording must supply for a process that is not run).

The hardware and the simulator differ by configuration, not by code: :func:`mode_of` says which one a
configuration describes (``camera.source == "sim"`` means the simulator), and :func:`processes_for` lists
what runs in it. Every process is started as ``python -m <module> --config FILE`` (see
:mod:`services.common.shell`) and publishes ``sys.heartbeat`` at 1 Hz besides the topics listed here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

from services.referee.config import RefereeConfig

if TYPE_CHECKING:
    from services.common.config import Config

#: The two kinds of configuration the stack runs in.
Mode = Literal["hardware", "sim"]
MODES: Final[tuple[Mode, ...]] = ("hardware", "sim")
BOTH: Final[frozenset[Mode]] = frozenset(MODES)
SIM_ONLY: Final[frozenset[Mode]] = frozenset({"sim"})

#: Every process publishes its heartbeat here; it is not repeated in each row's ``publishes``.
HEARTBEAT_TOPIC: Final = "sys.heartbeat"

#: Value of ``camera.source`` that selects the simulator.
SIM_CAMERA_SOURCE: Final = "sim"

#: The processes the referee needs alive (a game waits while one misses heartbeats): the default of
#: ``referee.required_peers``, the one place this fact is stated, so that the registry and the referee
#: cannot disagree. The ai is not among them (the referee falls back to the engine in-process), nor is
#: the bus (without it the referee hears no peer at all).
REQUIRED_PEERS: Final[frozenset[str]] = frozenset(RefereeConfig().required_peers)


class UnknownProcessError(KeyError):
    """A process name that is not in the registry."""

    def __str__(self) -> str:  # KeyError's default repr-quoting hides the message
        return str(self.args[0])


@dataclass(frozen=True)
class ProcessSpec:
    """One long-running process of the stack."""

    #: short name: supervisord program name, heartbeat ``process`` field, log file name.
    name: str
    #: the Python module run with ``python -m``.
    module: str
    #: the configurations that run it.
    modes: frozenset[Mode]
    #: the topics it publishes (besides :data:`HEARTBEAT_TOPIC`).
    publishes: tuple[str, ...]
    #: seconds a process must stay up after a start to count as started (supervisord ``startsecs``).
    startsecs: int = 1
    #: supervisord start order: lower starts first (and stops last).
    priority: int = 100
    #: one line for ``sanzi status`` and the README.
    description: str = ""

    @property
    def required(self) -> bool:
        """The referee treats it as a peer by default: a game waits while it misses heartbeats (see
        :data:`REQUIRED_PEERS`)."""
        return self.name in REQUIRED_PEERS

    def runs_in(self, mode: Mode) -> bool:
        """Whether the configurations of ``mode`` run this process."""
        return mode in self.modes


#: THE registry. Order is the display order (and roughly the data flow).
PROCESSES: Final[tuple[ProcessSpec, ...]] = (
    ProcessSpec(
        name="bus",
        module="services.bus",
        modes=BOTH,
        publishes=(),
        priority=10,
        description="XPUB/XSUB forwarders for events and camera frames",
    ),
    ProcessSpec(
        name="simworld",
        module="services.simworld",
        modes=SIM_ONLY,
        publishes=("sim.world",),
        priority=20,
        description="the simulated table and the emulated motion controller on a pseudo-terminal",
    ),
    ProcessSpec(
        name="simcam",
        module="services.simcam",
        modes=SIM_ONLY,
        publishes=("camera.frame",),
        priority=30,
        description="renders the simulated world as camera frames",
    ),
    ProcessSpec(
        name="vision",
        module="services.vision",
        modes=BOTH,
        publishes=("vision.board", "vision.stable", "vision.frame", "camera.control"),
        priority=40,
        description="board pose and squares from camera frames",
    ),
    ProcessSpec(
        name="ai",
        module="services.ai",
        modes=BOTH,
        publishes=("ai.reply",),
        priority=40,
        description="the engine: a move for each request",
    ),
    ProcessSpec(
        name="actuator",
        module="services.actuator",
        modes=BOTH,
        publishes=("actuator.event", "actuator.position"),
        priority=40,
        description="the motion controller over the serial port",
    ),
    ProcessSpec(
        name="led",
        module="services.led",
        modes=BOTH,
        publishes=("panel.state", "panel.button"),
        priority=40,
        description="lamp, LEDs and the button",
    ),
    ProcessSpec(
        name="referee",
        module="services.referee",
        modes=BOTH,
        publishes=("referee.state", "ai.request", "actuator.command", "operator.reply"),
        priority=50,
        description="the game: state machine, logical board, journal",
    ),
    ProcessSpec(
        name="simhuman",
        module="services.simhuman",
        modes=SIM_ONLY,
        publishes=("sim.action", "sim.button"),
        priority=60,
        description="the simulated person",
    ),
    ProcessSpec(
        name="blackbox",
        module="services.blackbox",
        modes=BOTH,
        publishes=(),
        priority=60,
        description="keeps the last seconds of bus traffic and writes them out on a fault",
    ),
    ProcessSpec(
        name="console",
        module="services.console",
        modes=BOTH,
        # it publishes only what tools and the person publish (operator commands; on the simulator the
        # person's world actions, button and policy), on a person's click: it is no topic's source.
        publishes=(),
        priority=70,
        description="the console in the browser: camera and overlay, game, health, operator and sim controls",
    ),
)

#: name -> spec.
BY_NAME: Final[dict[str, ProcessSpec]] = {p.name: p for p in PROCESSES}


def get(name: str) -> ProcessSpec:
    """The registry row of ``name``. :raises UnknownProcessError: naming the known processes."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise UnknownProcessError(
            f"unknown process {name!r}; known processes: {', '.join(BY_NAME)}"
        ) from None


def mode_of(config: Config) -> Mode:
    """Which configuration ``config`` describes: the simulator when its camera source is ``"sim"``."""
    return "sim" if config.camera.source == SIM_CAMERA_SOURCE else "hardware"


def processes_for(mode: Mode, *, exclude: frozenset[str] | set[str] = frozenset()) -> list[ProcessSpec]:
    """The processes that run in ``mode``, in registry order, minus the names in ``exclude``.

    :raises UnknownProcessError: when ``exclude`` names a process that does not exist (a typo must not
        silently run the process anyway).
    """
    for name in exclude:
        get(name)
    return [p for p in PROCESSES if p.runs_in(mode) and p.name not in exclude]


def required_peers(mode: Mode) -> list[str]:
    """The processes whose heartbeats the referee watches in ``mode`` by default (a game waits while one
    is down), in registry order."""
    return [p.name for p in processes_for(mode) if p.required]


def published_by(name: str) -> tuple[str, ...]:
    """The topics process ``name`` publishes (not counting its heartbeat); what ``sanzi play
    --instead-of NAME`` must replay. :raises UnknownProcessError:"""
    return get(name).publishes


def publisher_of(topic: str) -> str | None:
    """The process that publishes ``topic``, or None when no registered process does (operator commands
    come from tools such as ``sanzi task``; heartbeats come from everyone)."""
    for p in PROCESSES:
        if topic in p.publishes:
            return p.name
    return None
