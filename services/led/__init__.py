"""The led process: the panel (lamp, two LEDs, the button).

- :mod:`.patterns` (pure) the referee's GameState -> PanelState, and LED modes in time;
- :mod:`.debounce` (pure) the button debouncer;
- :mod:`.drivers` GPIO (libgpiod v2), a serial panel, the console, and the simulator's none;
- :mod:`.service` the bus shell.
"""
