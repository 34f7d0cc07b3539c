"""The harness's measurement tools: what they measure and how to run them, tools/lab/README.md."""
