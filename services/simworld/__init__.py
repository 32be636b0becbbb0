"""The simworld process: the simulated table's physical truth and its emulated motion controller.

Start the emulated controller in-process (e.g. in an actuator test) on a real pseudo-terminal::

    from services.common.config import load
    from services.simworld.controller import EmulatedController

    cfg = load(None, overrides={"runtime": {"dir": str(tmp_path)}})
    ctl = EmulatedController(config=cfg, protocol="grbl", speed=50.0)   # or protocol="frame"
    port = ctl.start_pty(tmp_path / "sim-serial")     # returns the symlink path; None -> /dev/pts/N
    try:
        ser = serial.Serial(port, 115200, timeout=1.0)  # exactly like /dev/ttyUSB0
        ...
    finally:
        ser.close()
        ctl.close()                                     # stops the thread, removes the symlink

- ``speed`` divides every motion duration (50 makes a 300 mm move at 6000 mm/min take 60 ms).
- GRBL starts like a machine with homing switches: banner, ``[MSG:'$H'|'$X' to unlock]`` and state
  ``Alarm`` until ``$H`` (homing, ``simworld.homing_s`` / speed) or ``$X``; pass
  ``config.simworld.homing_lock = False`` (``--set simworld.homing_lock=false``) to start ``Idle``.
- The power-on banner is printed when the controller starts, before any client opens the port, and
  pyserial's ``open()`` flushes it (like a controller without a DTR reset): send ``0x18`` and read the
  banner (``Grbl 1.1h ['$' for help]``) for a clean start.
- Faults: ``EmulatedController(..., faults=["drop:1", "lose-reply:2"])`` or ``ctl.inject("garbage")`` at
  run time; kinds drop, lose-reply, garbage, stall, alarm (see :mod:`.faults`).
- The truth: ``ctl.snapshot()`` -> :class:`messages.WorldState` (thread-safe); ``ctl.world`` is the
  :class:`.world.World` (take ``ctl.lock`` to touch it while the pty thread runs).
- Without a pty: ``ctl.receive(b"$I\\n", now)`` returns the reply bytes (pure, injectable time).

Modules: world (pure physics), motion (planner), grbl and frame (protocol engines, frame codec),
faults, controller (pty + thread), service (the bus process).
"""
