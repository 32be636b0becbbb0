"""``python -m services.simhuman``: the simulated person process."""

import sys

from services.common.shell import run_service

from .service import SimHumanService

if __name__ == "__main__":
    sys.exit(run_service(SimHumanService))
