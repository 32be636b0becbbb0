"""Configuration of the panel (section [led])."""

from __future__ import annotations

from services.common.config import Section


class LedConfig(Section):
    #: "console" (a status line on the terminal), "gpio" (libgpiod), "serial" (a serial panel),
    #: "sim" (the simulated button on the bus, panel state published only), or "none".
    driver: str = "sim"
    #: button debounce: a level must hold this long to count.
    debounce_ms: float = 30.0
    gpio_chip: str = "/dev/gpiochip0"
    gpio_button: int = 17
    gpio_lamp: int = 27
    gpio_status: int = 22
    gpio_error: int = 23
    serial_port: str = ""
