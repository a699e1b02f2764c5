"""The start-up hook: a Python that applies a snapshot to its own environment when it starts (docs/hook.md)."""
