"""``python -m services.ai``: the AI process."""

import sys

from .service import main

if __name__ == "__main__":
    sys.exit(main())
