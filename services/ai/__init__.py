"""The ai process: the engine behind the bus (:mod:`.core` is the pure part, shared with the referee's
in-process fallback)."""
