"""Heatmaps and small charts for the notebooks.

Every function takes `ax=None` (draw into a new figure) or an Axes to draw
into, and returns an object holding what it drew; heatmaps and bar charts
have an `update(values)` method that changes the picture in place instead of
building a new figure.

Every picture can also say in words what it shows (its text alternative):
`Heatmap.describe()`, `Bars.describe()`, and `describe(figure)` for a whole
figure (see alt_text.py).

    ah.heatmap(weights, tokens, tokens, probabilities=True, mask=ah.causal_mask(3))
    ah.heatmap(A, **ah.shared_scale(A, B)); ah.heatmap(B, **ah.shared_scale(A, B))
    ah.heatmap(states, categories={1: ("done", "#21918c"), 0: ("to come", "#8c9ec4")})
    ah.bar_chart(sizes, names, probabilities=False, log=True)
    ah.grouped_bar_chart({"T = 1": p1, "T = 2": p2}, tokens)
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.cm import ScalarMappable
from matplotlib.collections import PolyCollection
from matplotlib.colors import ListedColormap, Normalize
from matplotlib.layout_engine import ConstrainedLayoutEngine
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, Locator, MaxNLocator, NullFormatter

from .alt_text import axis_name, describe, join, plain, register, set_description

__all__ = ["Heatmap", "Bars", "GroupedBars", "heatmap", "bar_chart", "grouped_bar_chart", "shared_scale",
           "vectors_2d", "describe", "set_description", "ink_for", "free_limits", "tick_labels"]

CMAP = "viridis"  # perceptually uniform and readable with every common colour-vision deficiency
DIVERGING = "RdBu_r"  # signed values: blue below 0, white at 0, red above (red-blue: read by most)
ANNOTATION_SIZE = 10  # points: at the live panels' 72 dpi a number is 10 px high, at 100 dpi 14 px
MASKED_COLOUR, HATCH_COLOUR = "#d9d9d9", "#6e6e6e"  # light grey, hatched: not a colour of the map


MINUS = "\N{MINUS SIGN}"  # as matplotlib writes tick labels, and as a screen reader says "minus"


def _number(value, fmt) -> str:
    """format(value, fmt) with a true minus sign, and without the minus of a number that rounds
    to zero: a weight of -1e-9 reads "0.00", not "−0.00" (a sign with no digit behind it)."""
    text = format(value, fmt)
    mantissa = text.split("e")[0]
    if text.startswith("-") and not any(c in "123456789" for c in mantissa):
        text = text[1:]
    return text.replace("-", MINUS)


def tick_labels(values, fmt) -> list[str]:
    """A colour bar's labels for the tick values `values`: with the fewest decimals (up to the
    cells' format, ".2f") that write every one of them exactly, as matplotlib's own axes do
    (0, 0.5, 1: "0.0", "0.5", "1.0"; -10, -5 ... 15: "−10", "−5" ... "15"); a tick that the
    cells' decimals would round off is written in full ("0.125"). Another format (".1%") writes
    every tick as the cells do."""
    values = [float(v) for v in values]

    def exact(text, value):
        try:
            shown = float(text.replace(MINUS, "-").rstrip("%")) / (100 if text.endswith("%") else 1)
        except ValueError:
            return False
        return abs(shown - value) <= 1e-9 * max(1.0, abs(value))

    fixed = len(fmt) > 2 and fmt[0] == "." and fmt[-1] == "f" and fmt[1:-1].isdigit()
    for decimals in range(int(fmt[1:-1]) + 1) if fixed else ():
        texts = [_number(v, f".{decimals}f") for v in values]
        if all(exact(t, v) for t, v in zip(texts, values)):
            return texts
    return [t if exact(t, v) else f"{v:g}".replace("-", MINUS)
            for t, v in zip((_number(v, fmt) for v in values), values)]


class _ScaleLabels(FuncFormatter):
    """A heatmap colour bar's formatter: tick_labels of the values its ticks stand for, all at once."""

    def __init__(self, heatmap):
        super().__init__(lambda p, _: tick_labels([heatmap.value_at(p)], heatmap.fmt)[0])
        self.heatmap = heatmap

    def format_ticks(self, positions):
        return tick_labels([self.heatmap.value_at(p) for p in positions], self.heatmap.fmt)


def _luminance(rgba) -> float:
    """WCAG's relative luminance of a colour (its red, green and blue in 0..1)."""
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgba[:3]]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def ink_for(rgba) -> str:
    """ "black" or "white": whichever stands out more on the colour `rgba` by WCAG's contrast
    ratio. The better of the two is at least 4.58 : 1 on any colour (AA for text is 4.5)."""
    light = _luminance(rgba)
    return "black" if (light + 0.05) / 0.05 >= 1.05 / (light + 0.05) else "white"


def free_limits(values, masked, symmetric=False) -> tuple[float, float]:
    """The ends of a colour scale that follows its values: the lowest and highest value not
    masked (symmetric=True: -m..m, m the largest size, so 0 stays in the middle); every value
    the same, a scale of ±0.5 around it; every cell masked, 0..1 (symmetric: -1..1)."""
    values = np.asarray(values, dtype=float)
    if masked.all():
        return (-1.0, 1.0) if symmetric else (0.0, 1.0)
    shown = values[~masked]
    lo, hi = float(shown.min()), float(shown.max())
    if symmetric:
        m = max(abs(lo), abs(hi))
        return (-m, m) if m > 0 else (-1.0, 1.0)
    return (lo, hi) if hi > lo else (lo - 0.5, lo + 0.5)


def _new_axes(ax, size):
    if ax is None:
        _, ax = plt.subplots(figsize=size, layout="constrained")
    return ax


def shared_scale(*matrices, symmetric=False) -> dict:
    """{"vmin": lowest, "vmax": highest} finite value over all `matrices`: pass it to each
    heatmap (ah.heatmap(A, **scale)) so that one colour means one value in all of them.
    symmetric=True centres the scale on 0 (-m..m, m the largest |value|)."""
    if not matrices:
        raise ValueError("shared_scale needs at least one matrix")
    values = np.concatenate([np.ravel(np.asarray(m, dtype=float)) for m in matrices])
    values = values[np.isfinite(values)]
    if values.size == 0:
        raise ValueError("shared_scale needs at least one finite value, got none")
    low, high = float(values.min()), float(values.max())
    if symmetric:
        low, high = -max(abs(low), abs(high)), max(abs(low), abs(high))
    return {"vmin": low, "vmax": high if high > low else low + 1e-9}


BAR_GAP = 0.08  # the gap between columns of pictures (a fraction of the width) when one has a colour bar


def _room_after_bar(fig) -> None:
    """In a figure with constrained layout, room between a colour bar's labels and the next
    picture's row title, which otherwise read as the bar's own label."""
    engine = fig.get_layout_engine()
    if isinstance(engine, ConstrainedLayoutEngine) and engine.get()["wspace"] < BAR_GAP:
        engine.set(wspace=BAR_GAP)


class Heatmap:
    """A matrix drawn as coloured cells with its values written in them.

    Masked cells (where `mask` is False, as in ah.causal_mask: True = may attend,
    or where a value is -inf or NaN) are hatched grey, left without a number,
    and the legend says "masked" (or `mask_label`, e.g. "not yet cached"): a weight of 0.00
    and a masked cell look different.

    `categories` ({value: (name, colour)}, in the order the key lists them) makes the values
    states rather than amounts: each cell takes its state's colour, without a number, and a
    legend of colour swatches beside the cells names the states, in place of a colour bar.
    """

    def __init__(self, ax, values, row_labels, col_labels, *, title=None,
                 xlabel="key (column)", ylabel="query (row)", probabilities=False,
                 vmin=None, vmax=None, fmt=".2f", cmap=None, colorbar=True, mask=None, categories=None,
                 diverging=False, mask_label="masked"):
        values = np.asarray(values, dtype=float)
        if values.ndim != 2 or 0 in values.shape:
            raise ValueError(f"heatmap values must be 2-D [rows, columns] with at least one of each, "
                             f"got shape {values.shape}")
        rows, cols = values.shape
        row_labels = list(row_labels) if row_labels is not None else [str(i) for i in range(rows)]
        col_labels = list(col_labels) if col_labels is not None else [str(j) for j in range(cols)]
        if len(row_labels) != rows or len(col_labels) != cols:
            raise ValueError(
                f"heatmap values have shape {values.shape} but got {len(row_labels)} row labels "
                f"and {len(col_labels)} column labels"
            )
        if mask is not None:
            mask = np.asarray(mask)
            if mask.dtype != bool or mask.shape != values.shape:
                raise ValueError(f"mask must be a boolean array of the values' shape {values.shape} "
                                 f"(True = shown), got {mask.dtype} of shape {mask.shape}")
        if (vmin is None) != (vmax is None) or (vmin is not None and not vmin < vmax):
            raise ValueError(f"vmin and vmax go together, with vmin < vmax; got vmin={vmin}, vmax={vmax}")
        if diverging and (probabilities or (vmin is not None and vmin != -vmax)):
            raise ValueError(f"diverging=True centres the colour scale on 0: it needs vmin = -vmax and no "
                             f"probabilities; got vmin={vmin}, vmax={vmax}, probabilities={probabilities}")
        self.diverging, self.mask_label = diverging, mask_label
        cmap = cmap or (DIVERGING if diverging else CMAP)
        self.ax, self.fmt, self.shape, self.mask = ax, fmt, values.shape, mask
        self.row_labels, self.col_labels = row_labels, col_labels
        self.categories = None  # or {value: (name, colour)}
        if categories is not None:
            categories = {float(v): (str(name), colour) for v, (name, colour) in dict(categories).items()}
            if not categories or probabilities or vmin is not None or mask is not None:
                raise ValueError("categories: give at least one {value: (name, colour)}, and no "
                                 "probabilities, vmin/vmax or mask (each state has its own colour)")
            self.categories, self._codes = categories, np.array(sorted(categories))
            # cell k of the image holds the number of its state: colour j of the map is state j's
            cmap = ListedColormap([categories[v][1] for v in self._codes])
            vmin, vmax, colorbar = -0.5, len(categories) - 0.5, False
        # Probabilities always use the same 0..1 scale, so colours compare across pictures.
        self.fixed_limits = probabilities or vmin is not None
        if probabilities:
            vmin, vmax = 0.0, 1.0
        colours = plt.get_cmap(cmap).with_extremes(bad=MASKED_COLOUR)
        self.image = ax.imshow(np.zeros(values.shape), cmap=colours, vmin=vmin, vmax=vmax, aspect="auto")
        ax.set_xticks(range(cols), col_labels)
        ax.set_yticks(range(rows), row_labels)
        ax.tick_params(length=0)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if title:
            ax.set_title(title)
        # The numbers sit inside their cells, so layout need not measure them.
        self.texts = [[ax.text(j, i, "", ha="center", va="center", fontsize=ANNOTATION_SIZE, in_layout=False)
                       for j in range(cols)] for i in range(rows)]
        self.hatch = ax.add_collection(PolyCollection(
            [], facecolor=MASKED_COLOUR, edgecolor=HATCH_COLOUR, hatch="///", linewidth=0), autolim=False)
        self._hatched = np.zeros((rows, cols), bool)  # the cells the hatching covers
        self.legend = None  # made when a cell is first masked
        self.key = None  # the legend of the categories' colours
        if self.categories:
            swatches = [Patch(facecolor=colour, edgecolor=HATCH_COLOUR, linewidth=0.5, label=name)
                        for name, colour in self.categories.values()]
            self.key = ax.legend(handles=swatches, loc="upper left", bbox_to_anchor=(1.0, 1.0),
                                 fontsize=ANNOTATION_SIZE, frameon=False, handlelength=1.4,
                                 borderaxespad=0.2, handletextpad=0.4)
        self.colorbar = None
        if colorbar:
            # The bar is the colour map drawn once on a fixed 0..1 axis; only its ticks follow
            # the values, so a slider move redraws a few labels, not the bar. Its labels are
            # written as the cells' numbers are, so the two read alike.
            self.colorbar = ax.figure.colorbar(ScalarMappable(Normalize(0, 1), colours), ax=ax, shrink=0.85)
            self.colorbar.locator = _ScaleTicks(self)
            # It has no minor ticks: nothing to weed out of them at every draw.
            self.colorbar.ax.yaxis.remove_overlapping_locs = False
            self.colorbar.formatter = _ScaleLabels(self)
            _room_after_bar(ax.figure)
        register(ax, self, [self.colorbar.ax] if colorbar else [])
        self.label_room = None  # see keep_room_for
        self.update(values)

    def keep_room_for(self, ranges) -> None:
        """Keep room beside a free colour bar for the widest label it shows for any of the
        value ranges `ranges` [(low, high), ...]: the layout then stays put while the scale
        moves within them (a slider panel passes the ranges its sliders' ends give). The room
        is an invisible copy of that label, where the labels stand."""
        if self.colorbar is None or self.fixed_limits:
            return
        axis, renderer = self.colorbar.ax.yaxis, self.ax.figure.canvas.get_renderer()
        size = axis.get_ticklabels()[0].get_fontproperties() if axis.get_ticklabels() else None
        labels = {label for low, high in ranges if high > low
                  for label in tick_labels(self.colorbar.locator.values(low, high), self.fmt)}
        if not labels:
            return
        # One digit more than the widest: labels between those ends (0.75 beside 0.50) differ
        # from them by a fraction of a pixel, which would move the layout.
        width = lambda t: renderer.get_text_width_height_descent(t, size, ismath=False)[0]  # noqa: E731
        widest = max(sorted(labels), key=width) + "0"  # sorted: the same label in every process
        if self.label_room is None:
            pad = plt.rcParams["ytick.major.size"] + plt.rcParams["ytick.major.pad"]  # where labels start
            self.label_room = self.colorbar.ax.annotate(
                widest, xy=(1, 0.5), xycoords="axes fraction", xytext=(pad, 0), textcoords="offset points",
                ha="left", va="center", fontproperties=size, alpha=0.0)
        else:
            self.label_room.set_text(widest)

    @property
    def limits(self) -> tuple[float, float]:
        """The values the colour scale spans, (low, high); with categories, the lowest and
        highest state (the image holds state numbers, 0 … k - 1, not the values)."""
        if self.categories is not None:
            return float(self._codes[0]), float(self._codes[-1])
        lo, hi = self.image.get_clim()
        return float(lo), float(hi)

    def value_at(self, height: float) -> float:
        """The value the colour bar shows at `height` (0 its bottom, 1 its top)."""
        low, high = self.limits
        return low + height * (high - low)

    @property
    def masked(self) -> np.ndarray:
        """True for each cell drawn as masked."""
        return np.isnan(np.asarray(self.image.get_array().filled(np.nan), dtype=float))

    def update(self, values) -> None:
        """Redraw with new values of the same shape (no new figure)."""
        values = np.asarray(values, dtype=float)
        if values.shape != self.shape:
            raise ValueError(f"update needs values of shape {self.shape}, got {values.shape}")
        if np.isposinf(values).any():
            raise ValueError("heatmap values must be finite, or -inf / NaN for a masked cell; got +inf")
        if self.categories is not None:
            return self._show_states(values)
        masked = ~np.isfinite(values) if self.mask is None else ~self.mask | ~np.isfinite(values)
        shown = np.where(masked, np.nan, values)
        self.image.set_data(shown)
        if not self.fixed_limits:
            self.image.set_clim(*free_limits(values, masked, self.diverging))
        # each number in the ink that stands out more on its cell's colour
        colours = self.image.to_rgba(np.nan_to_num(shown))
        for (i, j), v in np.ndenumerate(values):
            text, colour = self.texts[i][j], ink_for(colours[i, j])
            string = "" if masked[i, j] else _number(v, self.fmt)
            if text.get_text() != string:  # setters check their argument: skip them when nothing changes
                text.set_text(string)
            if text.get_color() != colour:
                text.set_color(colour)
        if not np.array_equal(masked, self._hatched):
            self._hatched = masked
            corners = [(-0.5, -0.5), (0.5, -0.5), (0.5, 0.5), (-0.5, 0.5)]
            cells = zip(*np.nonzero(masked))
            self.hatch.set_verts([[(j + dx, i + dy) for dx, dy in corners] for i, j in cells])
        if masked.any() and self.legend is None:
            key = Patch(facecolor=MASKED_COLOUR, edgecolor=HATCH_COLOUR, hatch="///", linewidth=0,
                        label=self.mask_label)
            # under the colour bar (or beside the cells' low corner): where nothing else is drawn
            holder = self.colorbar.ax if self.colorbar else self.ax
            self.legend = holder.legend(handles=[key], loc="upper left",
                                        bbox_to_anchor=(1.0 if holder is self.ax else 0.0, 0.0),
                                        fontsize=ANNOTATION_SIZE, frameon=False, handlelength=1.4,
                                        borderaxespad=0.2, handletextpad=0.4)
        if self.legend is not None:
            self.legend.set_visible(bool(masked.any()))

    def _show_states(self, values) -> None:
        """Colour each cell by its state (categories): no numbers, no colour scale to follow."""
        where = np.clip(np.searchsorted(self._codes, values), 0, len(self._codes) - 1)
        if not np.array_equal(self._codes[where], values):
            unknown = sorted(set(values[self._codes[where] != values].tolist()))
            raise ValueError(f"heatmap values {unknown} are none of the categories {self._codes.tolist()}")
        self.image.set_data(where.astype(float))

    def describe(self) -> str:
        """Say in words what the heatmap shows, with the numbers printed in its cells
        (with categories: how many cells each state has, and each row's states)."""
        values = np.asarray(self.image.get_array().filled(np.nan), dtype=float)
        masked = np.isnan(values)
        rows, cols = values.shape
        name = f"Heatmap {plain(self.ax.get_title())!r}" if self.ax.get_title() else "Heatmap"
        text = (f"{name}, {rows} × {cols}: rows = {axis_name(self.ax.get_ylabel())}: "
                f"{join(self.row_labels)}; columns = {axis_name(self.ax.get_xlabel())}: "
                f"{join(self.col_labels)}. ")
        if self.categories is not None:
            return text + self._describe_states()
        cell = [[self.texts[i][j].get_text() or self.mask_label for j in range(cols)] for i in range(rows)]
        if rows * cols <= 16:  # small enough to read out every number
            return text + "; ".join(f"row {label}: {', '.join(cell[i])}"
                                    for i, label in enumerate(self.row_labels)) + "."
        more = f" (first 8 of {rows} rows)" if rows > 8 else ""
        count = f"{int(masked.sum())} of {rows * cols} cells {self.mask_label}. " if masked.any() else ""
        if masked.all():
            return text + count
        shown = np.where(masked, -np.inf, values)
        low = np.unravel_index(np.where(masked, np.inf, values).argmin(), values.shape)
        high = np.unravel_index(shown.argmax(), values.shape)
        largest = [f"{label} at {self.col_labels[shown[i].argmax()]} {cell[i][shown[i].argmax()]}"
                   for i, label in enumerate(self.row_labels[:8]) if not masked[i].all()]
        return (text + count + f"Values from {cell[low[0]][low[1]]} to {cell[high[0]][high[1]]}. "
                f"Largest in each row{more}: " + "; ".join(largest) + ".")

    def _describe_states(self) -> str:
        """ "Cells per state: 4 now, 0 done. States by row: row t0: t0–t1 now, t2–t7 skipped; ..."
        (each row's runs of one state, over its columns; the first 8 rows)."""
        names = [self.categories[v][0] for v in self._codes]
        state = [[names[int(k)] for k in row] for row in np.asarray(self.image.get_array(), dtype=float)]
        counts = ", ".join(f"{sum(row.count(name) for row in state)} {name}"
                           for name, _ in self.categories.values())
        each = []
        for label, row in zip(self.row_labels[:8], state):
            runs, start = [], 0
            for j in range(1, len(row) + 1):
                if j == len(row) or row[j] != row[start]:  # a run of one state ends before j
                    ends = [self.col_labels[start]] + ([self.col_labels[j - 1]] if j - 1 > start else [])
                    runs.append(f"{'–'.join(ends)} {row[start]}")
                    start = j
            each.append(f"row {label}: " + ", ".join(runs))
        more = f" (first 8 of {len(state)} rows)" if len(state) > 8 else ""
        return f"Cells per state: {counts}. States by row{more}: " + "; ".join(each) + "."

    def __repr__(self) -> str:
        return f"Heatmap({self.shape[0]}×{self.shape[1]}, title={self.ax.get_title()!r})"


class _ScaleTicks(Locator):
    """A heatmap colour bar's ticks: at round values of the heatmap's scale, as an ordinary
    axis would pick them, placed on the bar's fixed 0..1 axis."""

    def __init__(self, heatmap):
        self.heatmap, self._last, self._bins = heatmap, (None, None), (None, None)

    def values(self, low, high) -> list[float]:
        """The round values from low to high that get a tick."""
        height = self.axis.axes.bbox.height  # how many fit depends on the bar's length
        if self._last[0] != (low, high, height):  # (asked several times per draw: worked out once)
            length = height, self.axis.figure.dpi  # as many as MaxNLocator(nbins="auto") fits:
            if self._bins[0] != length:  # found once per length of the bar
                self._bins = length, int(np.clip(self.axis.get_tick_space(), 1, 9))
            nice = MaxNLocator(nbins=self._bins[1], steps=[1, 2, 2.5, 5, 10])  # matplotlib's AutoLocator
            close = 1e-10 * (high - low)  # 0.30000000000000004 is a tick of 0..0.3
            ticks = [float(v) for v in nice.tick_values(low, high) if low - close <= v <= high + close]
            self._last = (low, high, height), ticks
        return self._last[1]

    def __call__(self):
        low, high = self.heatmap.limits
        return [(v - low) / (high - low) for v in self.values(low, high)]


def heatmap(values, row_labels=None, col_labels=None, *, ax=None, **options) -> Heatmap:
    """Draw a matrix as a labelled, annotated heatmap; returns a Heatmap.

    By default rows are queries and columns are keys. Pass `probabilities=True`
    for attention weights (colour scale fixed to 0..1), `vmin`/`vmax` for a scale
    of your own (**shared_scale(A, B) gives two heatmaps one scale), `mask`
    (True = may attend) to draw masked cells hatched, `categories` ({value: (name, colour)})
    for cells that hold states, not amounts (a legend of swatches names them),
    `diverging=True` for signed values (a blue-white-red map with 0 in the middle:
    **shared_scale(A, symmetric=True) fixes it), or
    `xlabel`/`ylabel` for other matrices (for example X, whose columns are embedding dimensions).
    """
    values = np.asarray(values, dtype=float)
    size = (1.6 + 0.75 * values.shape[1], 1.0 + 0.55 * values.shape[0]) if values.ndim == 2 else None
    ax = _new_axes(ax, size)
    return Heatmap(ax, values, row_labels, col_labels, **options)


class Bars:
    """A bar chart with its values written on the bars (value_labels=False: without).

    log=True puts the values on a log axis, ticked at powers of 10 written as plain
    numbers (0.01, 0.1, 1, 10): bars a thousand times apart are all visible. Its values
    must then be above 0, and probabilities=False."""

    def __init__(self, ax, values, labels, *, title=None, xlabel=None, ylabel="probability",
                 probabilities=True, value_range=None, fmt=".2f", color="#3b528b", value_labels=True,
                 log=False):
        values = np.asarray(values, dtype=float)
        if values.ndim != 1 or len(labels) != len(values):
            raise ValueError(
                f"bar_chart needs 1-D values and one label per value; got values of shape "
                f"{values.shape} and {len(labels)} labels"
            )
        if log and probabilities:
            raise ValueError("a log value axis does not show probabilities (0 has no place on it): "
                             "pass probabilities=False with log=True")
        self.ax, self.fmt, self.probabilities, self.log = ax, fmt, probabilities, log
        self.value_range = (0.0, 1.0) if probabilities else value_range  # None: the axis follows the values
        self.labels = list(labels)
        register(ax, self)
        self.bars = ax.bar(range(len(values)), values, color=color)
        if log:
            ax.set_yscale("log")
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.yaxis.set_minor_formatter(NullFormatter())  # ticks at 2, 3, ... 9 unlabelled
        ax.set_xticks(range(len(values)), list(labels))
        if xlabel:
            ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if title:
            ax.set_title(title)
        if self.value_range is not None:
            self.fix_limits(*self.value_range)
        self.texts = [ax.text(i, 0, "", ha="center", va="bottom", fontsize=ANNOTATION_SIZE, in_layout=False,
                              visible=value_labels) for i in range(len(values))]
        self.update(values)

    @property
    def limits(self) -> tuple[float, float]:
        """The values the value axis shows, (low, high), with room for the numbers on top."""
        return self.value_range if self.value_range is not None else tuple(map(float, self.ax.get_ylim()))

    def fix_limits(self, low: float, high: float) -> None:
        """Fix the value axis so it shows low..high (and 0), with room above for the numbers."""
        if not low <= high:
            raise ValueError(f"fix_limits needs low <= high, got low={low}, high={high}")
        if self.log and not low > 0:
            raise ValueError(f"a log value axis needs values above 0, got low={low}")
        self.value_range = (float(low), float(high))
        self._set_limits(low, high)

    def update(self, values) -> None:
        values = np.asarray(values, dtype=float)
        if values.shape != (len(self.bars),):
            raise ValueError(f"update needs {len(self.bars)} values, got shape {values.shape}")
        if self.log and not (values > 0).all():
            raise ValueError(f"a log value axis needs values above 0, got {values}")
        for bar, text, v in zip(self.bars, self.texts, values):
            bar.set_height(v)
            text.set_position((bar.get_x() + bar.get_width() / 2, max(v, 0)))
            text.set_text(_number(v, self.fmt))
        if self.value_range is None:
            self._set_limits(float(values.min()), float(values.max()))

    def _set_limits(self, low, high) -> None:
        self.ax.set_ylim(*(_log_bar_axis if self.log else _bar_axis)(low, high))

    def describe(self) -> str:
        """Say in words what the bar chart shows, with the number on each bar."""
        name = f"Bar chart {plain(self.ax.get_title())!r}" if self.ax.get_title() else "Bar chart"
        axis = plain(self.ax.get_xlabel())
        heights = [_number(bar.get_height(), self.fmt) for bar in self.bars]
        quantity = plain(self.ax.get_ylabel())
        scale = " on a log scale" if self.log and "log" not in quantity else ""  # said once
        return (f"{name} of {quantity}{scale}" + (f" per {axis}" if axis else "") + ": "
                + ", ".join(f"{' '.join(str(label).split())} {h}" for label, h in zip(self.labels, heights))
                + ".")


def _bar_axis(low, high):
    """The y limits of a bar chart of values in low..high: from 0 (or below), with room above
    the highest bar for its number (8 % of the range; 1.08 for probabilities)."""
    lo, hi = min(0.0, low), max(0.0, high)
    pad = 0.08 * (hi - lo or 1.0)
    return lo - (pad if lo < 0 else 0), hi + pad


def _log_bar_axis(low, high):
    """The y limits of a log bar chart of values in low..high (both above 0): from a power of
    10 at least 3 times below the lowest value, so the shortest bar stands half a decade or
    more, with room above the highest for its number (8 % of the axis, as _bar_axis)."""
    bottom = 10.0 ** np.floor(np.log10(low / 3))
    decades = np.log10(high / bottom)
    return float(bottom), float(high * 10 ** (0.08 * decades))


def bar_chart(values, labels, *, ax=None, **options) -> Bars:
    """Draw one bar per label with its value on top; returns a Bars (log=True: on a log value axis)."""
    ax = _new_axes(ax, (1.5 + 0.6 * len(labels), 2.8))
    return Bars(ax, values, labels, **options)


class GroupedBars:
    """Several series of bars side by side, one group per label, with a legend."""

    def __init__(self, ax, series, labels, *, title=None, xlabel=None, ylabel="probability",
                 fmt=".2f", colors=None, value_labels=True, log=False):
        self.ax, self.fmt, self.labels = ax, fmt, list(labels)
        self.series = {str(name): np.asarray(v, dtype=float) for name, v in dict(series).items()}
        for name, values in self.series.items():
            if values.shape != (len(self.labels),):
                raise ValueError(f"grouped_bar_chart: series {name!r} needs one value per label "
                                 f"({len(self.labels)}), got shape {values.shape}")
        if not self.series:
            raise ValueError("grouped_bar_chart needs at least one series")
        register(ax, self)
        k = len(self.series)
        width = 0.8 / k
        palette = colors or plt.get_cmap(CMAP)(np.linspace(0.0, 0.85, k))
        self.bars, self.texts = {}, []
        for s, (name, values) in enumerate(self.series.items()):
            where = np.arange(len(self.labels)) + width * (s - (k - 1) / 2)
            self.bars[name] = ax.bar(where, values, width, color=palette[s], label=name)
            if value_labels:
                self.texts += [ax.text(x, v, _number(v, fmt), ha="center", va="bottom",
                                       fontsize=ANNOTATION_SIZE)
                               for x, v in zip(where, values)]
        if log:
            ax.set_yscale("log")
        ax.set_xticks(range(len(self.labels)), self.labels)
        if xlabel:
            ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if title:
            ax.set_title(title)
        ax.margins(y=0.15)  # room above the tallest bar for its number
        ax.legend(fontsize=ANNOTATION_SIZE)

    def describe(self) -> str:
        """Say in words what the chart shows: each series' value per label, as written on the bars."""
        title = plain(self.ax.get_title())
        name = f"Grouped bar chart {title!r}" if title else "Grouped bar chart"
        axis = plain(self.ax.get_xlabel())
        each = [f"{series}: " + ", ".join(f"{' '.join(str(label).split())} {_number(v, self.fmt)}"
                                          for label, v in zip(self.labels, values))
                for series, values in self.series.items()]
        return f"{name} of {plain(self.ax.get_ylabel())}" + (f" per {axis}" if axis else "") + ". " \
            + "; ".join(each) + "."


def grouped_bar_chart(series: dict, labels, *, ax=None, **options) -> GroupedBars:
    """Draw each series ({name: one value per label}) as bars side by side, with its value
    on each bar (value_labels=False: without) and a legend; log=True for a log value axis."""
    ax = _new_axes(ax, (1.5 + 0.35 * len(labels) * (1 + len(series)), 3.0))
    return GroupedBars(ax, series, labels, **options)


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
