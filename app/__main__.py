"""`python -m app`: a local game server on SQLite (the README's first command)."""

from __future__ import annotations

import argparse
import os

from werkzeug.serving import run_simple

from app import create_app
from app.settings import ConfigError


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m app", description="Run a local Skymo server.")
    parser.add_argument("--host", default=os.environ.get("SKYMO_HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "5000")))
    args = parser.parse_args(argv)

    try:
        app = create_app()
    except ConfigError as exc:
        parser.exit(2, f"skymo: {exc}\n")
    print(f"Skymo is running: open http://{args.host}:{args.port}/ (Ctrl+C stops it)", flush=True)
    run_simple(args.host, args.port, app, threaded=True, use_reloader=False)


if __name__ == "__main__":
    main()
