"""Progress events (`--progress jsonl`): one JSON object per line on stderr."""

import json
import sys


class Progress:
    def __init__(self, mode=None, stream=None):
        self.enabled = mode == "jsonl"
        self.stream = stream or sys.stderr

    def emit(self, event, **fields):
        if self.enabled:
            self.stream.write(json.dumps({"event": event, **fields}) + "\n")
            self.stream.flush()
