"""``python -m services.simworld``: the simulated world process."""

import sys

from services.common.shell import run_service

from .service import SimWorldService

if __name__ == "__main__":
    sys.exit(run_service(SimWorldService))
