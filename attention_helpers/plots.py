"""Heatmaps and small charts for the notebooks.

Every function takes `ax=None` (draw into a new figure) or an Axes to draw
into, and returns an object holding what it drew, with an `update(values)`
method that changes the picture in place instead of building a new figure.

Every picture can also say in words what it shows (its text alternative, for
a screen reader or a page without images): `Heatmap.describe()`,
`Bars.describe()`, and `describe(figure)` for a whole figure, including ones
drawn with plain matplotlib. In IPython, a displayed figure carries its
description as the image's "alt" metadata, which nbconvert's HTML writes into
the <img alt="..."> attribute.
"""

from __future__ import annotations

import re
import weakref

import matplotlib.pyplot as plt
import numpy as np
from matplotlib import rcParams
from matplotlib.axes import Axes
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.markers import TICKRIGHT
from matplotlib.ticker import MaxNLocator
from matplotlib.transforms import offset_copy

__all__ = ["Heatmap", "Bars", "heatmap", "bar_chart", "vectors_2d", "describe", "set_description"]

CMAP = "viridis"  # perceptually uniform and readable with every common colour-vision deficiency


def _number(value, fmt) -> str:
    """format(value, fmt), without the minus sign of a number that rounds to zero:
    a weight of -1e-9 reads "0.00", not "-0.00" (a sign with no digit behind it)."""
    text = format(value, fmt)
    mantissa = text.split("e")[0]
    return text[1:] if text.startswith("-") and not any(c in "123456789" for c in mantissa) else text


def _new_axes(ax, size):
    if ax is None:
        _, ax = plt.subplots(figsize=size, layout="constrained")
    return ax


class Heatmap:
    """A matrix drawn as coloured cells with its values written in them."""

    def __init__(self, ax, values, row_labels, col_labels, *, title=None,
                 xlabel="key (column)", ylabel="query (row)", probabilities=False,
                 vmin=None, vmax=None, fmt=".2f", cmap=CMAP, colorbar=True):
        values = np.asarray(values, dtype=float)
        if values.ndim != 2:
            raise ValueError(f"heatmap values must be 2-D [rows, columns], got shape {values.shape}")
        rows, cols = values.shape
        row_labels = list(row_labels) if row_labels is not None else [str(i) for i in range(rows)]
        col_labels = list(col_labels) if col_labels is not None else [str(j) for j in range(cols)]
        if len(row_labels) != rows or len(col_labels) != cols:
            raise ValueError(
                f"heatmap values have shape {values.shape} but got {len(row_labels)} row labels "
                f"and {len(col_labels)} column labels"
            )
        self.ax, self.fmt, self.shape = ax, fmt, values.shape
        self.row_labels, self.col_labels = row_labels, col_labels
        _DRAWN[ax] = self  # so describe(figure) finds it
        # Probabilities always use the same 0..1 scale, so colours compare across pictures.
        self.fixed_limits = probabilities or (vmin is not None and vmax is not None)
        if probabilities:
            vmin, vmax = 0.0, 1.0
        self.image = ax.imshow(values, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
        ax.set_xticks(range(cols), col_labels)
        ax.set_yticks(range(rows), row_labels)
        ax.tick_params(length=0)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if title:
            ax.set_title(title)
        # The numbers sit inside their cells, so layout need not measure them.
        self.texts = [[ax.text(j, i, "", ha="center", va="center", fontsize=9, in_layout=False)
                       for j in range(cols)] for i in range(rows)]
        # The colour bar always shows the whole colour map (a fixed picture); update() only
        # moves its ticks and labels (plain artists, cheap to redraw) to where the scale puts them.
        self.colorbar = None
        if colorbar:
            whole_map = ScalarMappable(Normalize(0.0, 1.0), cmap=self.image.get_cmap())
            self.colorbar = ax.figure.colorbar(whole_map, ax=ax, shrink=0.85, ticks=[])
            bar = self.colorbar.ax
            self.tick_marks = bar.add_artist(Line2D(
                [], [], linestyle="none", marker=TICKRIGHT, markersize=rcParams["ytick.major.size"],
                markeredgewidth=rcParams["ytick.major.width"], color=rcParams["ytick.color"],
                transform=bar.transAxes, clip_on=False))
            beside = offset_copy(bar.transAxes, ax.figure, units="points",
                                 x=rcParams["ytick.major.size"] + rcParams["ytick.major.pad"])
            colour = rcParams["ytick.labelcolor"]
            colour = rcParams["ytick.color"] if colour == "inherit" else colour
            self.tick_labels = [bar.text(1, 0, "", transform=beside, ha="left", va="center_baseline",
                                         fontsize=rcParams["ytick.labelsize"], color=colour)
                                for _ in range(10)]
        self.update(values)

    @property
    def moving(self) -> list:
        """What update() changes, in drawing order: the cells, the frame drawn over
        their edges, the numbers, and the colour bar when its scale follows the values."""
        cells = [self.image, *self.ax.spines.values(), *(t for row in self.texts for t in row)]
        ticks = [self.tick_marks, *self.tick_labels] if self.colorbar and not self.fixed_limits else []
        return cells + ticks

    @property
    def limits(self) -> tuple[float, float]:
        """The values the colour scale spans, (low, high)."""
        lo, hi = self.image.get_clim()
        return float(lo), float(hi)

    def colour_bar_ticks(self, low: float, high: float) -> tuple[list, list]:
        """Where the colour bar's ticks go for the scale low..high (0..1 along the bar), and their
        labels: round steps, with at most TICK_DECIMALS decimals (so a label is never longer than
        the widest_tick_label of its scale)."""
        finest = 10.0 ** -TICK_DECIMALS
        if high - low < 2 * finest:  # (nearly) one value: one label, in the middle
            middle = round((low + high) / 2, TICK_DECIMALS)
            return [0.5], [_minus(f"{middle + 0.0:.{TICK_DECIMALS}f}".rstrip("0").rstrip("."))]
        values = MaxNLocator(nbins=6, steps=[1, 2, 2.5, 5, 10]).tick_values(low, high)
        if values[1] - values[0] < finest:  # finer than the decimals show: 0.01 apart
            values = finest * np.arange(np.ceil(low / finest), np.floor(high / finest) + 1)
        values = [v for v in values if low - 1e-9 * abs(low) <= v <= high + 1e-9 * abs(high)]
        decimals = next(d for d in range(TICK_DECIMALS + 1)
                        if all(abs(round(v, d) - v) <= 1e-9 * max(1.0, abs(v)) for v in values)
                        or d == TICK_DECIMALS)
        labels = [_minus(f"{v + 0.0:.{decimals}f}") for v in np.round(values, decimals)]
        return [(v - low) / (high - low) for v in values], labels

    def label_colour_bar(self, low: float, high: float) -> None:
        """Put the colour bar's ticks and labels where the scale low..high puts them."""
        positions, labels = self.colour_bar_ticks(low, high)
        self.tick_marks.set_data([1.0] * len(positions), positions)
        for k, text in enumerate(self.tick_labels):
            text.set_visible(k < len(labels))
            if k < len(labels):
                text.set_position((1, positions[k]))
                text.set_text(labels[k])

    def fix_limits(self, low: float, high: float) -> None:
        """Fix the colour scale to low..high: later updates keep it (and the layout) still."""
        if not low <= high:
            raise ValueError(f"fix_limits needs low <= high, got low={low}, high={high}")
        self.fixed_limits = True
        self.image.set_clim(low, high if high > low else low + 1e-9)
        self.update(self.image.get_array())

    def update(self, values) -> None:
        """Redraw with new values of the same shape (no new figure, no new artists)."""
        values = np.asarray(values, dtype=float)
        if values.shape != self.shape:
            raise ValueError(f"update needs values of shape {self.shape}, got {values.shape}")
        self.image.set_data(values)
        if not self.fixed_limits:
            lo, hi = float(values.min()), float(values.max())
            self.image.set_clim(lo, hi if hi > lo else lo + 1e-9)
        if self.colorbar:
            self.label_colour_bar(*self.limits)
        # dark text on the light (yellow) end of viridis, white on the dark end
        light = np.asarray(self.image.norm(values)) > 0.55
        for (i, j), v in np.ndenumerate(values):
            text, colour = self.texts[i][j], "black" if light[i, j] else "white"
            text.set_text(_number(v, self.fmt))
            if text.get_color() != colour:  # set_color checks its argument: skip it when nothing changes
                text.set_color(colour)

    def describe(self) -> str:
        """Say in words what the heatmap shows, with the numbers printed in its cells."""
        values = np.asarray(self.image.get_array(), dtype=float)
        rows, cols = values.shape
        name = f"Heatmap {_plain(self.ax.get_title())!r}" if self.ax.get_title() else "Heatmap"
        text = (f"{name}, {rows} × {cols}: rows = {_axis_name(self.ax.get_ylabel())}: "
                f"{_join(self.row_labels)}; columns = {_axis_name(self.ax.get_xlabel())}: "
                f"{_join(self.col_labels)}. ")
        cell = [[format(v, self.fmt) for v in row] for row in values]
        if rows * cols <= 16:  # small enough to read out every number
            return text + "; ".join(f"row {label}: {', '.join(cell[i])}"
                                    for i, label in enumerate(self.row_labels)) + "."
        low = np.unravel_index(values.argmin(), values.shape)
        high = np.unravel_index(values.argmax(), values.shape)
        largest = [f"{label} at {self.col_labels[values[i].argmax()]} {cell[i][values[i].argmax()]}"
                   for i, label in enumerate(self.row_labels[:8])]
        more = f" (first 8 of {rows} rows)" if rows > 8 else ""
        return (text + f"Values from {cell[low[0]][low[1]]} to {cell[high[0]][high[1]]}. "
                f"Largest in each row{more}: " + "; ".join(largest) + ".")

    def __repr__(self) -> str:
        return f"Heatmap({self.shape[0]}×{self.shape[1]}, title={self.ax.get_title()!r})"


TICK_DECIMALS = 2  # colour-bar labels: 0.25, 1.5, 20


def widest_tick_label(low: float, high: float) -> str:
    """A label at least as wide as any colour-bar label of a scale within low..high
    (digits are all equally wide): the sign, every integer digit, and the decimals."""
    digits = len(str(int(max(abs(low), abs(high)))))
    return _minus("-" + "8" * digits + "." + "8" * TICK_DECIMALS)


def _minus(text: str) -> str:
    return text.replace("-", "\N{MINUS SIGN}")  # the typographic minus, as matplotlib writes it


def heatmap(values, row_labels=None, col_labels=None, *, ax=None, **options) -> Heatmap:
    """Draw a matrix as a labelled, annotated heatmap; returns a Heatmap.

    By default rows are queries and columns are keys. Pass `probabilities=True`
    for attention weights (colour scale fixed to 0..1), or `xlabel`/`ylabel`
    for other matrices (for example X, whose columns are embedding dimensions).
    """
    values = np.asarray(values, dtype=float)
    size = (1.6 + 0.75 * values.shape[1], 1.0 + 0.55 * values.shape[0]) if values.ndim == 2 else None
    ax = _new_axes(ax, size)
    return Heatmap(ax, values, row_labels, col_labels, **options)


class Bars:
    """A bar chart with its values written on the bars."""

    def __init__(self, ax, values, labels, *, title=None, xlabel=None, ylabel="probability",
                 probabilities=True, value_range=None, fmt=".2f", color="#3b528b"):
        values = np.asarray(values, dtype=float)
        if values.ndim != 1 or len(labels) != len(values):
            raise ValueError(
                f"bar_chart needs 1-D values and one label per value; got values of shape "
                f"{values.shape} and {len(labels)} labels"
            )
        self.ax, self.fmt, self.probabilities = ax, fmt, probabilities
        self.value_range = (0.0, 1.0) if probabilities else value_range  # None: the axis follows the values
        self.labels = list(labels)
        _DRAWN[ax] = self  # so describe(figure) finds it
        self.bars = ax.bar(range(len(values)), values, color=color)
        ax.set_xticks(range(len(values)), list(labels))
        if xlabel:
            ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if title:
            ax.set_title(title)
        if self.value_range is not None:
            self.fix_limits(*self.value_range)
        self.texts = [ax.text(i, 0, "", ha="center", va="bottom", fontsize=9, in_layout=False)
                      for i in range(len(values))]
        self.update(values)

    @property
    def moving(self) -> list:
        """What update() changes, in drawing order: the bars, the frame drawn over
        their bases, the numbers, and the whole chart when its value axis follows the values."""
        if self.value_range is None:
            return [self.ax]
        return [*self.bars, *self.ax.spines.values(), *self.texts]

    @property
    def limits(self) -> tuple[float, float]:
        """The values the value axis shows, (low, high), with room for the numbers on top."""
        return self.value_range if self.value_range is not None else tuple(map(float, self.ax.get_ylim()))

    def fix_limits(self, low: float, high: float) -> None:
        """Fix the value axis so it shows low..high (and 0), with room above for the numbers."""
        if not low <= high:
            raise ValueError(f"fix_limits needs low <= high, got low={low}, high={high}")
        self.value_range = (float(low), float(high))
        self.ax.set_ylim(*_bar_axis(low, high))

    def update(self, values) -> None:
        values = np.asarray(values, dtype=float)
        if values.shape != (len(self.bars),):
            raise ValueError(f"update needs {len(self.bars)} values, got shape {values.shape}")
        for bar, text, v in zip(self.bars, self.texts, values):
            bar.set_height(v)
            text.set_position((bar.get_x() + bar.get_width() / 2, max(v, 0)))
            text.set_text(_number(v, self.fmt))
        if self.value_range is None:
            self.ax.set_ylim(*_bar_axis(float(values.min()), float(values.max())))

    def describe(self) -> str:
        """Say in words what the bar chart shows, with the number on each bar."""
        name = f"Bar chart {_plain(self.ax.get_title())!r}" if self.ax.get_title() else "Bar chart"
        axis = _plain(self.ax.get_xlabel())
        heights = [format(bar.get_height(), self.fmt) for bar in self.bars]
        return (f"{name} of {_plain(self.ax.get_ylabel())}" + (f" per {axis}" if axis else "") + ": "
                + ", ".join(f"{' '.join(str(label).split())} {h}" for label, h in zip(self.labels, heights))
                + ".")


def _bar_axis(low, high):
    """The y limits of a bar chart of values in low..high: from 0 (or below), with room above
    the highest bar for its number (8 % of the range; 1.08 for probabilities)."""
    lo, hi = min(0.0, low), max(0.0, high)
    pad = 0.08 * (hi - lo or 1.0)
    return lo - (pad if lo < 0 else 0), hi + pad


def bar_chart(values, labels, *, ax=None, **options) -> Bars:
    """Draw one bar per label with its value on top; returns a Bars."""
    ax = _new_axes(ax, (1.5 + 0.6 * len(labels), 2.8))
    return Bars(ax, values, labels, **options)


def vectors_2d(vectors: dict, *, ax=None, title=None, colors=None):
    """Draw 2-D vectors as arrows from the origin, each labelled; returns the Axes."""
    ax = _new_axes(ax, (3.8, 3.8))
    points = np.array([np.asarray(v, dtype=float) for v in vectors.values()])
    if points.ndim != 2 or points.shape[1] != 2:
        raise ValueError(f"vectors_2d needs vectors of length 2, got shape {points.shape[1:]}")
    palette = colors or ["#440154", "#21918c", "#e69f00", "#3b528b", "#5ec962"]
    for k, (label, (x, y)) in enumerate(zip(vectors, points)):
        c = palette[k % len(palette)]
        ax.annotate("", xy=(x, y), xytext=(0, 0), arrowprops=dict(arrowstyle="->", color=c, lw=2))
        ax.text(x, y, f" {label}", color=c, va="bottom")
    reach = max(1.0, float(np.abs(points).max())) * 1.25
    ax.set_xlim(min(0, points[:, 0].min()) - 0.25, reach)
    ax.set_ylim(min(0, points[:, 1].min()) - 0.25, reach)
    ax.set_aspect("equal")
    ax.axhline(0, color="grey", lw=0.5)
    ax.axvline(0, color="grey", lw=0.5)
    ax.set_xlabel("dimension 0")
    ax.set_ylabel("dimension 1")
    if title:
        ax.set_title(title)
    ends = "; ".join(f"{label} to ({x:.3g}, {y:.3g})" for label, (x, y) in zip(vectors, points))
    name = f"Arrows {title!r}" if title else "Arrows"
    set_description(ax, f"{name} from the origin: {ends}.")
    return ax


# ---- text alternatives -----------------------------------------------------

_DRAWN = weakref.WeakKeyDictionary()  # Axes -> the Heatmap or Bars drawn into it
_GIVEN = weakref.WeakKeyDictionary()  # Figure or Axes -> a description written by hand


def set_description(target, text: str) -> None:
    """Give a Figure or an Axes a description written by hand (for drawings
    whose meaning the data alone does not carry, such as a diagram)."""
    if not isinstance(target, (Figure, Axes)):
        raise TypeError(f"set_description needs a matplotlib Figure or Axes, got {type(target).__name__}")
    if not isinstance(text, str) or not text.strip():
        raise ValueError("set_description needs a non-empty text")
    _GIVEN[target] = text.strip()


def describe(target) -> str:
    """A short text alternative for a Figure, an Axes, a Heatmap or a Bars.

    A figure is described panel by panel; a panel drawn by heatmap() or
    bar_chart() describes itself, one drawn with plain matplotlib is described
    from what it holds (title, axes, labelled lines and bars, their ranges).
    """
    if isinstance(target, (Heatmap, Bars)):
        return target.describe()
    if isinstance(target, Axes):
        if target in _GIVEN:
            return _GIVEN[target]
        return _DRAWN[target].describe() if target in _DRAWN else _describe_axes(target)
    if not isinstance(target, Figure):
        raise TypeError(f"describe needs a Figure, an Axes, a Heatmap or a Bars, got {type(target).__name__}")
    if target in _GIVEN:
        return _GIVEN[target]
    drawn = [_DRAWN.get(ax) for ax in target.axes]  # this figure's only: another thread may be drawing more
    colorbars = {id(p.colorbar.ax) for p in drawn if isinstance(p, Heatmap) and p.colorbar}
    panels = [ax for ax in target.axes if id(ax) not in colorbars and ax.get_visible()]
    if len(panels) == 1:
        return describe(panels[0])
    return f"Figure with {len(panels)} panels. " + " ".join(
        f"Panel {k} of {len(panels)}: {describe(ax)}" for k, ax in enumerate(panels, 1))


def _describe_axes(ax) -> str:
    """Describe a panel drawn with plain matplotlib from the artists it holds."""
    title = _plain(ax.get_title())
    parts = [f"Chart {title!r}" if title else "Chart"]
    xlabel, ylabel = _plain(ax.get_xlabel()), _plain(ax.get_ylabel())
    if xlabel or ylabel:
        scale = {axis: f" ({s} scale)" if s != "linear" else "" for axis, s in
                 (("x", ax.get_xscale()), ("y", ax.get_yscale()))}
        parts.append(f"x axis: {xlabel or 'unlabelled'}{scale['x']}, "
                     f"y axis: {ylabel or 'unlabelled'}{scale['y']}")
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    for container in ax.containers:
        heights = [bar.get_height() for bar in container]
        names = [_near_tick(ax, bar.get_x() + bar.get_width() / 2, ticks) for bar in container]
        label = container.get_label()
        parts.append(("bars" if label.startswith("_") else f"bars {_plain(label)!r}") + ": "
                     + ", ".join(f"{n} {h:.3g}" for n, h in zip(names, heights)))
    unlabelled = 0
    for line in ax.get_lines():
        label = line.get_label()
        x, y = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
        if label.startswith("_") or len(x) == 0:
            unlabelled += 1
            continue
        parts.append(f"{_plain(label)!r}: {len(x)} points, at x = {x[0]:.4g} y = {y[0]:.3g}, "
                     f"at x = {x[-1]:.4g} y = {y[-1]:.3g}, y from {np.nanmin(y):.3g} to {np.nanmax(y):.3g}")
    if unlabelled:
        parts.append(f"{unlabelled} unlabelled line{'s' if unlabelled > 1 else ''}")
    points = np.concatenate([np.asarray(c.get_offsets(), float).reshape(-1, 2) for c in ax.collections]
                            or [np.zeros((0, 2))])
    if len(points):
        rows = {round(float(y), 6): t.get_text() for y, t in zip(ax.get_yticks(), ax.get_yticklabels())}
        names = [rows.get(round(float(y), 6)) for y in points[:, 1]]
        if all(names):  # each marker sits on a labelled row: count them per row
            parts.append(", ".join(f"{names.count(n)} markers on {n}" for n in dict.fromkeys(names)))
        else:
            parts.append(f"{len(points)} markers")
    if not ax.containers and not any(not line.get_label().startswith("_") for line in ax.get_lines()):
        words = list(dict.fromkeys(t.get_text().strip() for t in ax.texts if t.get_text().strip()))
        if words:
            parts.append("texts: " + _join(words, 12))
    return "; ".join(parts) + "."


def _near_tick(ax, x, ticks):
    """The label of the x tick nearest to position x (within half a tick spacing), or x itself."""
    positions = np.asarray(ax.get_xticks(), dtype=float)
    if len(positions) and len(positions) == len(ticks):
        k = int(np.abs(positions - x).argmin())
        spacing = np.diff(np.sort(positions)).min() if len(positions) > 1 else 1.0
        if abs(positions[k] - x) < spacing / 2 and ticks[k]:
            return ticks[k]
    return f"{x:g}"


def _join(labels, at_most=10) -> str:
    labels = [" ".join(str(label).split()) for label in labels]
    more = len(labels) - at_most
    return ", ".join(labels[:at_most]) + (f" and {more} more" if more > 0 else "")


def _axis_name(label: str) -> str:
    """ "query (row)" -> "query": the description says rows and columns itself."""
    return re.sub(r"\s*\((row|column)\)\s*$", "", _plain(label)) or "unlabelled"


_TEX = [(r"\^\{?\\top\}?", "ᵀ"), (r"\\sqrt", "√"), (r"\s*\\cdot\s*", "·"), (r"\\(left|right|!|,)", ""),
        (r"[${}]", ""), (r"\\", "")]


def _plain(text: str) -> str:
    """A label without the TeX markup a screen reader would spell out ($d_k$ -> d_k)."""
    for tex, plain in _TEX:
        text = re.sub(tex, plain, text)
    return text.strip()


def _figure_bundle(figure):
    """IPython display hook: no data of its own, only the figure's description as
    the "alt" of the PNG the inline backend draws (its default format)."""
    return {}, {"image/png": {"alt": describe(figure)}}


def _register_alt_text() -> None:
    """In IPython, attach every displayed figure's description to its image.

    The inline backend registers its own image formatters for Figure (and
    re-registers them whenever it is configured), so the description goes
    through the mime-bundle formatter, which that leaves alone; IPython merges
    its metadata with the image the inline backend draws.
    """
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None:
        shell.display_formatter.mimebundle_formatter.for_type(Figure, _figure_bundle)


_register_alt_text()
