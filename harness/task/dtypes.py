"""The tensor types a task.yaml may name, as torch's dtypes."""

import torch

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
          "int32": torch.int32, "int64": torch.int64, "float64": torch.float64, "uint8": torch.uint8}
_ELEMENT_SIZE = {name: torch.empty((), dtype=d).element_size() for name, d in DTYPES.items()}


def element_size(dtype_text):
    return _ELEMENT_SIZE[dtype_text]
