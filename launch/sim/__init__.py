"""``sanzi sim``: the contest tasks played end to end on the simulator, and checked against the world.

One module per job, in the order they depend on each other:

- :mod:`.errors`: :class:`SimError`, what goes wrong that is not a failed verdict.
- :mod:`.plan`: what to ask for each task (pure, seeded) and what the contest requires of the result.
- :mod:`.config`: the configuration of one run, the simulated camera's calibration, and the board's
  angle as that camera sees it.
- :mod:`.judge`: a task's outcome checked against its requirement and against the world (pure).
- :mod:`.table`: a task's result, the closing table and its JSON summary.
- :mod:`.progress`: the live line on the terminal.
- :mod:`.session`: the orchestrator's bus connection (:class:`SimSession`).
- :mod:`.person`: a real person at the terminal or in the browser instead of the simulated one.
- :mod:`.run`: one task, a list of tasks, and a whole run with the stack started and stopped.

:mod:`launch.simrun` re-exports the names the commands, benches and tests use.
Everything waits on conditions with deadlines; nothing sleeps to synchronise.
"""
