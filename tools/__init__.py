"""Tools that live beside the code they serve, outside its packages (tools/lab: the harness's measurement tools; tools/gpu-check: a standalone checker of CUDA task folders)."""
