"""``python -m services.blackbox``: the fault recorder process."""

import sys

from services.common.shell import run_service

from .service import BlackboxService

if __name__ == "__main__":
    sys.exit(run_service(BlackboxService))
