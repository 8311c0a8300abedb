"""Charts drawn on the server as SVG: the geometry here, the markup in
templates/partials/_chart_*.html. No JavaScript; a viewBox so they fit any width."""

from __future__ import annotations

WIDTH, HEIGHT = 320, 180
LEFT, RIGHT, TOP, BOTTOM = 34, 8, 12, 26  # room for the axis labels


def nice_step(span: float, most: int = 4) -> int:
    """A round step that cuts `span` into at most `most` parts."""
    for step in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000):
        if span / step <= most:
            return step
    return int(span / most) + 1


def _ticks(low: int, high: int) -> tuple[int, int, list[int]]:
    """The axis range, widened to whole steps, and its tick values."""
    if high <= low:
        high = low + 1
    step = nice_step(high - low)
    low = (low // step) * step
    high = -(-high // step) * step
    return low, high, list(range(low, high + 1, step))


def line_chart(points: list[dict], from_zero: bool = True) -> dict:
    """points: [{"value": int, "label": str, "mark": bool}] in order, oldest first.
    Returns what _chart_line.html draws. `from_zero`: the axis starts at 0 at most
    (totals); else it spans the values only (ratings, around 1000)."""
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    values = [p["value"] for p in points]
    lowest = min(values, default=0)
    low, high, ticks = _ticks(min(0, lowest) if from_zero else lowest, max(values, default=1))

    def y(v: float) -> float:
        return round(TOP + plot_h * (high - v) / (high - low), 1)

    n = len(points)
    gap = plot_w / (n - 1) if n > 1 else 0
    dots = []
    for i, p in enumerate(points):
        x = round(LEFT + (i * gap if n > 1 else plot_w / 2), 1)
        dots.append({**p, "x": x, "y": y(p["value"])})
    return {
        "width": WIDTH,
        "height": HEIGHT,
        "left": LEFT,
        "right": WIDTH - RIGHT,
        "bottom": HEIGHT - BOTTOM,
        "ticks": [{"value": t, "y": y(t)} for t in ticks],
        "zero": y(0) if low < 0 else None,
        "dots": dots,
        "path": " ".join(f"{d['x']},{d['y']}" for d in dots),
        "first": dots[0]["label"] if dots else "",
        "last": dots[-1]["label"] if dots else "",
    }


def bar_chart(bins: list[tuple[str, int]], short: list[str] | None = None) -> dict:
    """bins: [(label, count)]; `short`: the labels under the bars, if the full ones are too
    wide for a phone. Returns what _chart_bars.html draws."""
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    low, high, ticks = _ticks(0, max((c for _, c in bins), default=1))
    slot = plot_w / max(1, len(bins))
    bars = []
    for i, (label, count) in enumerate(bins):
        h = round(plot_h * count / high, 1)
        bars.append(
            {
                "label": label,
                "short": short[i] if short else label,
                "count": count,
                "x": round(LEFT + i * slot + slot * 0.12, 1),
                "w": round(slot * 0.76, 1),
                "y": round(TOP + plot_h - h, 1),
                "h": h,
                "cx": round(LEFT + i * slot + slot / 2, 1),
            }
        )
    return {
        "width": WIDTH,
        "height": HEIGHT,
        "left": LEFT,
        "right": WIDTH - RIGHT,
        "bottom": HEIGHT - BOTTOM,
        "ticks": [{"value": t, "y": round(TOP + plot_h * (high - t) / high, 1)} for t in ticks],
        "bars": bars,
    }
