"""``python -m services.referee``: the referee process."""

import sys

from services.common.shell import run_service

from .service import RefereeService

if __name__ == "__main__":
    sys.exit(run_service(RefereeService))
