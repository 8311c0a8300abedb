def view(game, player): raise NotImplementedError
