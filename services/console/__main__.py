"""``python -m services.console``: the browser console process."""

import sys

from services.common.shell import run_service

from .service import ConsoleService

if __name__ == "__main__":
    sys.exit(run_service(ConsoleService))
