"""Configuration of the panel (section [led])."""

from __future__ import annotations

from services.common.section import Section


class LedConfig(Section):
    #: "console" (a status line on the terminal), "gpio" (libgpiod), "serial" (a serial panel),
    #: "sim" (the simulated button on the bus, panel state published only), or "none".
    driver: str = "sim"
    #: button debounce: a level must hold this long to count.
    debounce_ms: float = 30.0
    #: the simulated button's debounce, ms; negative: the same as ``debounce_ms``.
    sim_debounce_ms: float = -1.0
    #: libgpiod chip and line offsets of the button (input) and the lamp and two LEDs (outputs).
    gpio_chip: str = "/dev/gpiochip0"
    gpio_button: int = 17
    gpio_lamp: int = 27
    gpio_status: int = 22
    gpio_error: int = 23
    #: the button pulls its line to ground when pressed (internal pull-up); false: to the supply.
    gpio_button_active_low: bool = True
    #: the serial panel's port and baud rate (line protocol in services/led/drivers.py).
    serial_port: str = ""
    serial_baudrate: int = 115200
    #: panel.state is published on every change and re-published this often (seconds).
    republish_s: float = 1.0
    #: a button press is announced again this often (same id) until the referee acknowledges it in
    #: referee.state (``press_ack``), and given up after ``press_latch_s``.
    press_resend_s: float = 0.25
    press_latch_s: float = 30.0
