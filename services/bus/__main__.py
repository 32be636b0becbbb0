"""``python -m services.bus``: the bus process (both forwarders)."""

import sys

from services.common.shell import run_service

from .service import BusService

if __name__ == "__main__":
    sys.exit(run_service(BusService))
