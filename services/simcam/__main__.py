"""``python -m services.simcam``: the simulated camera process."""

import sys

from services.common.shell import run_service

from .service import SimCamService

if __name__ == "__main__":
    sys.exit(run_service(SimCamService))
