import sys

from .cli import main, process_started

sys.exit(main(started=process_started()))
