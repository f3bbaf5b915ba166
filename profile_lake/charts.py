"""Charts as inline SVG, in pure Python: the report page needs no script and no network.

Every drawn value (a bar, a point) is an element with a `data-mark` attribute, so a test (or a
browser) can count what a chart drew; its `<title>` child is the tooltip.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

WIDTH = 720
HEIGHT = 260
LEFT, RIGHT, TOP, BOTTOM = 64, 150, 16, 48
ROW_HEIGHT = 16  # of a horizontal bar chart: it grows with its categories
PALETTE = (
    "#2f6db5", "#d9822b", "#3a9d5d", "#c23b3b", "#7d5ba6", "#8c6d31",
    "#d36ba6", "#5c7080", "#17becf", "#bcbd22", "#1f3f77", "#ff9896",
)  # fmt: skip


@dataclass(frozen=True)
class Series:
    name: str
    values: Sequence[float | None]  # one per category (None: no value there)
    color: str | None = None  # default: the palette's, by the series' place


def nice_max(value: float) -> float:
    """The smallest of 1, 2, 2.5, 5 times a power of ten that is at least `value` (1 for 0)."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if value <= step * power:
            return step * power
    return 10 * power  # pragma: no cover (the loop ends at 10)


def format_number(value: float) -> str:
    if value == int(value):
        return f"{int(value):,}"
    return f"{value:,.1f}"


def _frame(chart_id: str, label: str, body: list[str], height: float = HEIGHT) -> str:
    return (
        f'<svg data-chart="{escape(chart_id)}" role="img" aria-label="{escape(label)}" '
        f'viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" '
        'xmlns="http://www.w3.org/2000/svg" font-family="sans-serif" font-size="11">'
        + "".join(body)
        + "</svg>"
    )


def _y_axis(top: float, unit: str, log: bool = False) -> list[str]:
    """Grid lines and labels at 0, 1/4 ... of `top` (log: at 1, 10, 100 ... up to `top`, a
    power of ten), and the unit written along the axis."""
    plot_height = HEIGHT - TOP - BOTTOM
    parts = []
    steps = round(math.log10(top)) if log else 4
    for step in range(steps + 1):
        value = 10**step if log else top * step / 4
        y = HEIGHT - BOTTOM - plot_height * (step / steps if log else step / 4)
        parts.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" '
            f'stroke="#ddd"/><text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" '
            f'fill="#444">{format_number(value)}</text>'
        )
    middle = TOP + plot_height / 2
    parts.append(
        f'<text transform="translate(14 {middle:.1f}) rotate(-90)" text-anchor="middle" '
        f'fill="#222">{escape(unit)}</text>'
    )
    return parts


def _x_axis(labels: Sequence[str], unit: str, slot: float) -> list[str]:
    """Labels under the categories (about eight of them shown), and the axis' unit."""
    parts = [
        f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{HEIGHT - BOTTOM}" '
        f'y2="{HEIGHT - BOTTOM}" stroke="#888"/>'
    ]
    every = max(1, math.ceil(len(labels) / 8))
    for index, label in enumerate(labels):
        if index % every and index != len(labels) - 1:
            continue
        x = LEFT + slot * (index + 0.5)
        parts.append(
            f'<text x="{x:.1f}" y="{HEIGHT - BOTTOM + 14}" text-anchor="middle" '
            f'fill="#444">{escape(label)}</text>'
        )
    parts.append(
        f'<text x="{LEFT + (WIDTH - LEFT - RIGHT) / 2:.1f}" y="{HEIGHT - 8}" '
        f'text-anchor="middle" fill="#222">{escape(unit)}</text>'
    )
    return parts


def _color(series: Series, number: int) -> str:
    return series.color or PALETTE[number % len(PALETTE)]


def _legend(stacks: Sequence[Series]) -> list[str]:
    parts = []
    for index, series in enumerate(stacks[:14]):
        y = TOP + 14 * index
        name, color = series.name, _color(series, index)
        parts.append(
            f'<rect x="{WIDTH - RIGHT + 12}" y="{y}" width="10" height="10" fill="{color}"/>'
            f'<text x="{WIDTH - RIGHT + 26}" y="{y + 9}" fill="#222">{escape(name[:20])}</text>'
        )
    return parts


def _empty(chart_id: str, label: str, why: str) -> str:
    return _frame(
        chart_id,
        label,
        [
            f'<text x="{WIDTH / 2}" y="{HEIGHT / 2}" text-anchor="middle" '
            f'fill="#666">{escape(why)}</text>'
        ],
    )


def bar_chart(
    chart_id: str,
    label: str,
    categories: Sequence[str],
    stacks: Sequence[Series],
    x_unit: str,
    y_unit: str,
    log: bool = False,
) -> str:
    """Vertical bars, one per category, each stacked from `stacks` (a legend names them);
    `log`: one series on a log scale (a bar of 1 is drawn 0 high). Marks: one `rect` per
    category and series with a value (0 included)."""
    if not categories:
        return _empty(chart_id, label, "nothing to show yet")
    if log and len(stacks) != 1:
        raise ValueError("a log-scale bar chart draws one series, not stacks")
    totals = [
        sum(series.values[index] or 0 for series in stacks) for index in range(len(categories))
    ]
    top = nice_max(max(totals, default=0))
    if log:
        top = 10 ** max(1, math.ceil(math.log10(max(max(totals), 1))))

    def scaled(value: float) -> float:
        return (math.log10(value) / math.log10(top) if value >= 1 else 0.0) if log else value / top

    plot_height = HEIGHT - TOP - BOTTOM
    slot = (WIDTH - LEFT - RIGHT) / len(categories)
    body = _y_axis(top, y_unit, log)
    for index, category in enumerate(categories):
        base = 0.0
        for number, series in enumerate(stacks):
            value = series.values[index]
            if value is None:
                continue
            height = plot_height * (scaled(base + value) - scaled(base))
            y = HEIGHT - BOTTOM - plot_height * scaled(base + value)
            base += value
            tip = f"{category}: {series.name} {format_number(value)} {y_unit}"
            body.append(
                f'<rect data-mark="{escape(series.name)}" '
                f'x="{LEFT + slot * (index + 0.1):.1f}" y="{y:.1f}" '
                f'width="{max(slot * 0.8, 1):.1f}" height="{height:.1f}" '
                f'fill="{_color(series, number)}"><title>{escape(tip)}</title></rect>'
            )
    body += _x_axis(categories, x_unit, slot)
    if len(stacks) > 1 or stacks[0].name:
        body += _legend(stacks)
    return _frame(chart_id, label, body)


def line_chart(
    chart_id: str,
    label: str,
    categories: Sequence[str],
    lines: Sequence[Series],
    x_unit: str,
    y_unit: str,
) -> str:
    """One line per series over the categories, a point per value (legend names the lines).
    Marks: one `circle` per value."""
    values = [value for series in lines for value in series.values if value is not None]
    if not categories or not values:
        return _empty(chart_id, label, "nothing to show yet")
    top = nice_max(max(values))
    plot_height = HEIGHT - TOP - BOTTOM
    slot = (WIDTH - LEFT - RIGHT) / len(categories)
    body = _y_axis(top, y_unit)
    for number, series in enumerate(lines):
        color = _color(series, number)
        bottom = HEIGHT - BOTTOM
        points = [
            (LEFT + slot * (index + 0.5), bottom - plot_height * max(value, 0) / top, value)
            for index, value in enumerate(series.values)
            if value is not None
        ]
        if len(points) > 1:
            path = " ".join(
                f"{'M' if index == 0 else 'L'}{x:.1f} {y:.1f}"
                for index, (x, y, _) in enumerate(points)
            )
            body.append(f'<path d="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        for (x, y, value), category in zip(
            points,
            [c for c, v in zip(categories, series.values, strict=True) if v is not None],
            strict=True,
        ):
            tip = f"{series.name}, {category}: {format_number(value)} {y_unit}"
            body.append(
                f'<circle data-mark="{escape(series.name)}" cx="{x:.1f}" cy="{y:.1f}" r="3.5" '
                f'fill="{color}"><title>{escape(tip)}</title></circle>'
            )
    body += _x_axis(categories, x_unit, slot)
    body += _legend(lines)
    return _frame(chart_id, label, body)


def hbar_chart(
    chart_id: str,
    label: str,
    categories: Sequence[str],
    stacks: Sequence[Series],
    x_unit: str,
) -> str:
    """Horizontal bars (long category names: error codes, identities), stacked from `stacks`.
    Marks: one `rect` per category and series with a value above 0."""
    if not categories:
        return _empty(chart_id, label, "nothing to show yet")
    left = 230
    totals = [
        sum(series.values[index] or 0 for series in stacks) for index in range(len(categories))
    ]
    top = nice_max(max(totals, default=0))
    plot_width = WIDTH - left - RIGHT
    height = max(HEIGHT, TOP + BOTTOM + ROW_HEIGHT * len(categories))
    row = (height - TOP - BOTTOM) / len(categories)
    body = []
    for step in range(5):
        x = left + plot_width * step / 4
        body.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{TOP}" y2="{height - BOTTOM}" stroke="#ddd"/>'
            f'<text x="{x:.1f}" y="{height - BOTTOM + 14}" text-anchor="middle" '
            f'fill="#444">{format_number(top * step / 4)}</text>'
        )
    for index, category in enumerate(categories):
        y = TOP + row * index
        body.append(
            f'<text x="{left - 6}" y="{y + row / 2 + 4:.1f}" text-anchor="end" '
            f'fill="#222">{escape(category[:36])}</text>'
        )
        base = 0.0
        for number, series in enumerate(stacks):
            value = series.values[index]
            if not value:
                continue
            tip = f"{category}: {series.name} {format_number(value)} {x_unit}".replace(" :", ":")
            body.append(
                f'<rect data-mark="{escape(series.name)}" x="{left + plot_width * base / top:.1f}" '
                f'y="{y + row * 0.15:.1f}" width="{plot_width * value / top:.1f}" '
                f'height="{row * 0.7:.1f}" fill="{_color(series, number)}">'
                f"<title>{escape(tip)}</title></rect>"
            )
            base += value
    body.append(
        f'<text x="{left + plot_width / 2:.1f}" y="{height - 8}" text-anchor="middle" '
        f'fill="#222">{escape(x_unit)}</text>'
    )
    if len(stacks) > 1:
        body += _legend(stacks)
    return _frame(chart_id, label, body, height)
