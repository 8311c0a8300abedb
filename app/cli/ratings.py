"""`python -m app.cli.ratings recompute`: every skill rating again, from the stored
results in the order the games finished (app.features.rating.recompute). The numbers
are those the games wrote as they ended; run it after changing how ratings are worked
out, or to check them."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from app import settings as deploy
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
    deploy.check()
    instance = Path(
        os.environ.get("SKYMO_INSTANCE_PATH") or Path(__file__).parent.parent / "instance"
    )
    url = os.environ.get("SKYMO_DATABASE_URL") or f"sqlite:///{instance / 'skymo.db'}"
    models.db.initialize(models.open_database(url, pool_size=1))
    models.create_schema()
    with models.db.connection_context():
        games = rating.recompute()
    print(f"ratings recomputed from {games} rated game(s)", flush=True)


if __name__ == "__main__":
    main()
