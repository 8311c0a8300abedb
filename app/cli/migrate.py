"""`python -m app.cli.migrate`: create or migrate the schema and exit (the Procfile's
`release:` step). Every process also does it when it starts, so this is optional."""

from __future__ import annotations

import os
from pathlib import Path

from app import settings as deploy
from app.storage import models


def open_schema() -> None:
    """Check the settings, open the database they name (as a server process would) and
    create or migrate its schema: the start of every command that reads the database."""
    deploy.check()
    instance = Path(
        os.environ.get("SKYMO_INSTANCE_PATH") or Path(__file__).parent.parent / "instance"
    )
    instance.mkdir(parents=True, exist_ok=True)
    url = os.environ.get("SKYMO_DATABASE_URL") or f"sqlite:///{instance / 'skymo.db'}"
    models.db.initialize(models.open_database(url, pool_size=1))
    models.create_schema()


def main() -> None:
    open_schema()
    print(f"schema ready: {models.db.obj.__class__.__name__}", flush=True)


if __name__ == "__main__":
    main()
