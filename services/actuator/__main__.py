"""``python -m services.actuator``: the actuator process."""

import sys

from services.common.shell import run_service

from .service import ActuatorService

if __name__ == "__main__":
    sys.exit(run_service(ActuatorService))
