"""``python -m services.ai``: the AI process."""

import sys

from services.common.shell import run_service

from .service import AiService

if __name__ == "__main__":
    sys.exit(run_service(AiService))
