"""Commands: sim, sweep, migrate (python -m app.cli.<name>)."""
