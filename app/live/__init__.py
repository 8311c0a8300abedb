"""Single-process adapters: the push hub, presence and the timer scheduler."""
