"""Blueprints: thin layers that parse, call the service (app.tables) and render."""

from flask_sock import Sock

sock = Sock()
