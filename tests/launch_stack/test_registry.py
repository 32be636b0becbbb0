"""The process registry: one row per process, consistent with the topic table and the configuration."""

from __future__ import annotations

from typing import Any

import pytest

from launch import processes
from launch.processes import PROCESSES, UnknownProcessError
from messages import TOPICS
from services.common import config as config_module

#: Topics that come from tools, not from a registered process: the operator's commands (`sanzi task`,
#: `sanzi sim`), and the simulator's controls set by `sanzi sim` and the tests.
FROM_TOOLS = {"operator.command", "sim.fault", "sim.human"}


def test_names_are_unique_and_modules_follow_the_convention() -> None:
    names = [p.name for p in PROCESSES]
    assert len(names) == len(set(names))
    for p in PROCESSES:
        assert p.module == f"services.{p.name}"
        assert p.modes, p.name
        assert p.startsecs >= 1


def test_every_topic_has_exactly_one_source() -> None:
    published = [t for p in PROCESSES for t in p.publishes]
    assert len(published) == len(set(published)), "a topic published by two processes"
    for topic in published:
        assert topic in TOPICS, topic
    missing = set(TOPICS) - set(published) - FROM_TOOLS - {processes.HEARTBEAT_TOPIC}
    assert not missing, f"topics nobody publishes: {missing}"
    for p in PROCESSES:
        assert processes.HEARTBEAT_TOPIC not in p.publishes


def test_hardware_and_simulator_differ_only_by_the_simulator_processes() -> None:
    hardware = {p.name for p in processes.processes_for("hardware")}
    sim = {p.name for p in processes.processes_for("sim")}
    assert hardware < sim
    assert sim - hardware == {"simworld", "simcam", "simhuman"}
    assert "bus" in hardware and "referee" in hardware


def test_mode_follows_the_camera_source() -> None:
    default: Any = config_module.load(None)
    assert processes.mode_of(default) == "sim"
    real: Any = config_module.load(None, overrides={"camera": {"source": "0"}})
    assert processes.mode_of(real) == "hardware"


def test_required_peers_and_lookups() -> None:
    # the registry and the referee's configuration agree: the ai is not required (the referee falls back
    # to the engine in-process), and every required peer is a registered process that is not the referee
    default: Any = config_module.load(None)
    peers = processes.required_peers("sim")
    assert peers == processes.required_peers("hardware")
    assert set(peers) == set(default.referee.required_peers) == {"vision", "actuator", "led"}
    assert set(default.referee.required_peers) <= set(processes.BY_NAME) - {"referee"}
    assert processes.published_by("vision") == (
        "vision.board",
        "vision.stable",
        "vision.frame",
        "camera.control",
    )
    assert processes.publisher_of("camera.frame") == "simcam"
    assert processes.publisher_of("operator.command") is None
    with pytest.raises(UnknownProcessError, match="known processes"):
        processes.get("visoin")
    with pytest.raises(UnknownProcessError):
        processes.processes_for("sim", exclude={"nope"})
    assert "simhuman" not in {p.name for p in processes.processes_for("sim", exclude={"simhuman"})}


def test_bus_starts_first() -> None:
    bus = processes.get("bus")
    assert all(bus.priority < p.priority for p in PROCESSES if p is not bus)


def test_the_recorder_stands_in_for_processes_as_the_registry_says() -> None:
    """`sanzi play --instead-of` must replay what the registry says a process publishes."""
    from launch import recording

    for name, topics in recording.PUBLISHERS.items():
        assert set(topics) == set(processes.published_by(name)), name
    for spec in PROCESSES:
        if spec.publishes:
            assert spec.name in recording.PUBLISHERS, spec.name
