"""Heatmaps and small charts for the notebooks.

Every function takes `ax=None` (draw into a new figure) or an Axes to draw
into, and returns an object holding what it drew, with an `update(values)`
method that changes the picture in place instead of building a new figure.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib import rcParams
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.lines import Line2D
from matplotlib.markers import TICKRIGHT
from matplotlib.ticker import MaxNLocator
from matplotlib.transforms import offset_copy

__all__ = ["Heatmap", "Bars", "heatmap", "bar_chart", "vectors_2d"]

CMAP = "viridis"  # perceptually uniform and readable with every common colour-vision deficiency


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
            self.texts[i][j].set_text(format(v, self.fmt))
            self.texts[i][j].set_color("black" if light[i, j] else "white")

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
            text.set_text(format(v, self.fmt))
        if self.value_range is None:
            self.ax.set_ylim(*_bar_axis(float(values.min()), float(values.max())))


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
    return ax
