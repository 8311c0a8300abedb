"""Instructions per move, by stage: benchmarks/move_cost.py run under valgrind's callgrind,
counting only the measured moves' requests, with the same deals on every run (so two
versions of the code compare the same moves).

Each measured move's request goes through `operator.call` (a C function nothing else
here calls): callgrind collects only inside it. Stages go through other such C
functions, whose inclusive counts are the stage's: the view function
(`sys.call_tracing`), the push (`hub.publish`, `itertools.starmap`), the save
(`step.save`, `Context.run`), the load (`Store.for_change`, `filter`) and the answer
(`render_table`, `functools.reduce`).

Usage (from the repository):
  valgrind --tool=callgrind --collect-atstart=no --toggle-collect=_operator_call \\
    --callgrind-out-file=/tmp/moves.out .venv/bin/python benchmarks/move_instructions.py --moves 300
  .venv/bin/python benchmarks/move_instructions.py --read /tmp/moves.out --moves 300
"""

from __future__ import annotations

import contextvars
import functools
import itertools
import operator
import random
import re
import subprocess
import sys
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import move_cost  # noqa: E402

from app import tables  # noqa: E402
from app.live.hub import Hub  # noqa: E402
from app.tables import playing, step  # noqa: E402
from app.web import table as table_views  # noqa: E402

# C function (callgrind's name) -> stage
STAGES = {
    "_operator_call": "move (the whole request)",
    "sys_call_tracing": "view function",
    "starmap_next": "push",
    "context_run": "save",
    "filter_next": "load",
    "functools_reduce": "answer",
}


def through(owner, name: str, kind: str) -> None:
    """Have `owner.name` called through a C function of its own (see STAGES)."""
    inner = getattr(owner, name)

    def wrapped(*a, **k):
        call = functools.partial(inner, *a, **k)
        if kind == "starmap":
            return next(itertools.starmap(call, [()]))
        if kind == "reduce":
            return functools.reduce(lambda _acc, _x: call(), [None], None)
        if kind == "context":
            return contextvars.copy_context().run(call)
        if kind == "filter":
            box = []
            next(filter(lambda _x: box.append(call()) or True, [0]))
            return box[0]
        raise ValueError(kind)

    setattr(owner, name, wrapped)


class Marked(move_cost.ServerClock):
    """move_cost's clock; a measured move's request (after the warm-up's) and its view
    function go through their C functions."""

    warmup = 20  # move_cost's default (--warmup)

    def __init__(self, app):
        super().__init__(app)
        inner, seen = app.wsgi_app, [0]
        view = app.view_functions["table.move"]
        app.view_functions["table.move"] = lambda **k: sys.call_tracing(
            functools.partial(view, **k), ()
        )

        def routed(environ, start_response):
            if environ["PATH_INFO"].endswith("/move"):
                seen[0] += 1
                if seen[0] > self.warmup:
                    return operator.call(inner, environ, start_response)
            return inner(environ, start_response)

        app.wsgi_app = routed


def read(path: str, moves: int) -> None:
    annotated = subprocess.run(
        ["callgrind_annotate", "--inclusive=yes", path], capture_output=True, text=True
    ).stdout
    for line in annotated.splitlines():
        m = re.match(r"\s*([\d,]+) .*:(\w+) \[", line)
        if m and m.group(2) in STAGES and "'" not in line:
            count = int(m.group(1).replace(",", ""))
            print(f"{count / moves / 1e6:7.3f} M per move  {STAGES[m.group(2)]}")


def main() -> None:
    if "--read" in sys.argv:
        i = sys.argv.index("--read")
        moves = int(sys.argv[sys.argv.index("--moves") + 1])
        read(sys.argv[i + 1], moves)
        return
    seeds = random.Random(11)  # the same games' seeds on every run
    playing.secrets = types.SimpleNamespace(token_hex=lambda n: seeds.randbytes(n).hex())
    through(Hub, "publish", "starmap")
    through(step, "save", "context")
    through(tables.store, "for_change", "filter")
    through(table_views, "render_table", "reduce")
    if "--warmup" in sys.argv:
        Marked.warmup = int(sys.argv[sys.argv.index("--warmup") + 1])
    move_cost.ServerClock = Marked
    move_cost.main()


if __name__ == "__main__":
    main()
