"""Bots: players that choose a legal move from what one player may see."""
