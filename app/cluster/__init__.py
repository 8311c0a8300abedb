"""Multi-process adapters: Redis fan-out, shared presence, the Due scheduler."""
