"""``python -m services.led``: the panel process."""

import sys

from services.common.shell import run_service

from .service import LedService

if __name__ == "__main__":
    sys.exit(run_service(LedService))
