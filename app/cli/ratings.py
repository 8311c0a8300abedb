"""`python -m app.cli.ratings recompute`: every skill rating again, from the stored
results in the order the games finished (app.features.rating.recompute). The numbers
are those the games wrote as they ended; run it after changing how ratings are worked
out, or to check them."""

from __future__ import annotations

import argparse

from app.cli.migrate import open_schema
from app.features import rating
from app.storage import models


def arguments(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m app.cli.ratings", description="Skill ratings from the stored results."
    )
    parser.add_argument("command", choices=["recompute"], help="recompute every rating")
    return parser.parse_args(argv)


def main(argv=None) -> None:
    arguments(argv)
    open_schema()
    with models.db.connection_context():
        games = rating.recompute()
    print(f"ratings recomputed from {games} rated game(s)", flush=True)


if __name__ == "__main__":
    main()
