"""``python -m services.vision``: the vision process."""

import sys

from services.common.shell import run_service

from .service import VisionService

if __name__ == "__main__":
    sys.exit(run_service(VisionService))
