import sys

from services.common.shell import run_service

from .service import Blackbox

sys.exit(run_service(Blackbox))
