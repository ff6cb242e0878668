"""Slider panels: sliders for the entries of weight matrices (and for d_k)
next to heatmaps that redraw on every move.

A Panel owns one matplotlib figure. When a slider moves it recomputes,
updates the existing artists in place (see plots.Heatmap.update) and redraws
only those on top of a saved picture of the rest (matplotlib's "blitting"),
pasting the numbers in the cells from ready-made pictures of them, then hands
a quickly encoded PNG to an image widget: ~6 ms for a 6x6 heatmap, where a
full draw takes ~70 ms. It never builds a new figure. `panel.show_static()`
draws the same figure as an ordinary output, for readers without a kernel
and for nbval to check.

Dragging does not queue up stale pictures: the browser sends a slider's next
value only after the kernel has finished with the previous one, merging the
moves in between, so the kernel always draws the latest value (measured in
benchmarks/slider_latency.py).
"""

from __future__ import annotations

import contextlib
import html
import io
import threading

import ipywidgets as W
import matplotlib as mpl
import numpy as np
import PIL.Image
from IPython.display import display
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .plots import Bars, Heatmap, describe

__all__ = ["Panel", "matrix_sliders"]


def matrix_sliders(name, matrix, value_range=(-2.0, 2.0), step=0.1):
    """One FloatSlider per entry of `matrix`, keyed "name[i,j]"."""
    matrix = np.asarray(matrix, dtype=float)
    if matrix.ndim != 2:
        raise ValueError(f"{name} must be a 2-D weight matrix, got shape {matrix.shape}")
    lo, hi = value_range
    if not lo < hi:
        raise ValueError(f"value_range must be (low, high) with low < high, got {value_range}")
    if ((matrix < lo) | (matrix > hi)).any():
        raise ValueError(
            f"{name} has entries outside the slider range {value_range}; "
            "widen value_range so the sliders can show them"
        )
    return {
        f"{name}[{i},{j}]": W.FloatSlider(
            value=float(v), min=lo, max=hi, step=step, description=f"[{i},{j}]",
            readout_format=".1f", continuous_update=True,
            layout=W.Layout(width="190px"), style={"description_width": "34px"},
        )
        for (i, j), v in np.ndenumerate(matrix)
    }


class Panel:
    """Sliders bound to a figure of heatmaps, bar charts and text read-outs.

    compute(**values) -> one result per view, where `values` holds every
        weight matrix by name (rebuilt from its sliders) and every control's
        value by name.
    views: a list of dicts, each with "kind" ("heatmap", "bars" or "text")
        and the options of plots.heatmap / plots.bar_chart (row_labels,
        col_labels, labels, title, probabilities, xlabel, ylabel, fmt, ...).
    weights: {name: initial matrix}, shown as a grid of sliders each.
    controls: {name: ipywidgets slider}, for d_k, temperature and the like.
    """

    def __init__(self, compute, views, *, weights=None, controls=None,
                 value_range=(-2.0, 2.0), step=0.1, figsize=None, dpi=72):
        self.compute, self.views, self.dpi = compute, list(views), dpi
        self._shapes = {n: np.shape(m) for n, m in (weights or {}).items()}
        self._weight_sliders = {n: matrix_sliders(n, m, value_range, step)
                                for n, m in (weights or {}).items()}
        self.controls = dict(controls or {})
        self.sliders = {k: s for group in self._weight_sliders.values() for k, s in group.items()}
        self.sliders.update(self.controls)

        drawn = [v for v in self.views if v["kind"] != "text"]
        if figsize is None:
            figsize = (4.2 * max(1, len(drawn)), 3.4)
        self.figure = Figure(figsize=figsize, dpi=dpi, layout="constrained")
        FigureCanvasAgg(self.figure)
        self._background = self._key = None  # the picture without the moving parts, once drawn
        self.figure.canvas.mpl_connect("draw_event", self._forget_background)
        axes = self.figure.subplots(1, len(drawn), squeeze=False)[0] if drawn else []
        results = self._results()
        self.artists, k = [], 0
        for view, result in zip(self.views, results):
            options = {key: val for key, val in view.items() if key != "kind"}
            if view["kind"] == "heatmap":
                self.artists.append(Heatmap(axes[k], result, options.pop("row_labels", None),
                                            options.pop("col_labels", None), **options))
                k += 1
            elif view["kind"] == "bars":
                self.artists.append(Bars(axes[k], result, options.pop("labels"), **options))
                k += 1
            elif view["kind"] == "text":
                self.artists.append(None)
            else:
                raise ValueError(f"view kind must be 'heatmap', 'bars' or 'text', got {view['kind']!r}")

        moving = [a for artist in self.artists if artist is not None for a in artist.moving]
        # The numbers in the heatmaps' cells are pasted from pictures (see _Stamps); the rest is drawn.
        self._numbers = [t for a in self.artists if isinstance(a, Heatmap) for row in a.texts for t in row]
        self._moving = [a for a in moving if id(a) not in set(map(id, self._numbers))]
        self._stamps = _Stamps(dpi)

        # Shown at its own size (a VBox would stretch it to the cell's width, blurring it).
        self.image = W.Image(format="png", layout=W.Layout(max_width="100%", align_self="flex-start"))
        self.readout = W.HTML()
        self.described = W.HTML()  # the picture's text alternative, kept up to date by _show
        self._holding = False
        # In JupyterLab 4.6 with ipykernel 7, slider callbacks run in a kernel
        # subshell thread, while cells (set, show_static) run in the main one;
        # NumPy's print options belong to a thread, so the callback borrows these.
        self._lock = threading.RLock()
        self._printoptions = np.get_printoptions()
        self._show(results)
        for slider in self.sliders.values():
            slider.observe(self._on_change, names="value")
        self.widget = W.VBox([self._controls_box(), self.image, self.readout, self.described])

    # ---- values -------------------------------------------------------
    def values(self) -> dict:
        """Current weight matrices (from the sliders) and control values, by name."""
        out = {}
        for name, sliders in self._weight_sliders.items():
            m = np.zeros(self._shapes[name])
            for key, s in sliders.items():
                i, j = map(int, key[len(name) + 1:-1].split(","))
                m[i, j] = _clean(s.value)
            out[name] = m
        out.update({name: _clean(c.value) for name, c in self.controls.items()})
        return out

    def outputs(self) -> list:
        """What the views show right now, in view order."""
        return self._results()

    def set(self, **values) -> None:
        """Set weight matrices and controls by name, then redraw once.

        Everything is checked before any slider moves, so a bad argument
        leaves the panel as it was.
        """
        for name, value in values.items():
            if name in self._weight_sliders:
                value = np.asarray(value, dtype=float)
                if value.shape != self._shapes[name]:
                    raise ValueError(f"{name} must have shape {self._shapes[name]}, got {value.shape}")
                s = next(iter(self._weight_sliders[name].values()))
                if ((value < s.min) | (value > s.max)).any():
                    raise ValueError(f"{name} has entries outside its sliders' range ({s.min}, {s.max})")
            elif name not in self.controls:
                raise ValueError(f"no slider or control named {name!r}; "
                                 f"this panel has {sorted(self._weight_sliders) + sorted(self.controls)}")
        with self._lock:
            self._holding = True  # one redraw at the end, not one per slider
            try:
                for name, value in values.items():
                    if name in self.controls:
                        self.controls[name].value = value
                    else:
                        for (i, j), v in np.ndenumerate(np.asarray(value, dtype=float)):
                            self.sliders[f"{name}[{i},{j}]"].value = float(v)
            finally:
                self._holding = False
            self.redraw()

    # ---- drawing ------------------------------------------------------
    def _results(self):
        results = self.compute(**self.values())
        if len(results) != len(self.views):
            raise ValueError(f"compute returned {len(results)} results for {len(self.views)} views")
        return results

    def _show(self, results):
        texts = []
        for artist, result in zip(self.artists, results):
            if artist is None:
                texts.append(str(result))
            else:
                artist.update(result)
        self.readout.value = "<pre>" + "\n".join(texts) + "</pre>" if texts else ""
        self.image.value = self.png()
        # The picture in words, under it (an ipywidgets 8.1 Image can carry neither alt
        # nor a tooltip: with a tooltip its view fails to render in JupyterLab).
        self.described.value = ("<details><summary>The picture in words</summary>"
                                f"{html.escape(describe(self.figure))}</details>")

    def png(self) -> bytes:
        """The figure as the live image shows it, as PNG bytes.

        A full draw (constrained layout, tick labels, every artist) takes
        ~60 ms for a 6x6 heatmap. Instead, the parts that never move are drawn
        once and saved; a move restores them, draws the cells (and a colour
        bar or bar chart whose scale moves) and pastes the numbers: ~5 ms.
        The layout is solved again only when a moving axis gets new tick
        labels (or on redraw()), and the background is drawn again only after
        that or after something else drew the figure (show_static, savefig).
        """
        fig, canvas, key = self.figure, self.figure.canvas, self._layout_key()
        engine = fig.get_layout_engine()
        if key != self._key:
            engine.execute(fig)  # with everything in it; a second pass settles it
            engine.execute(fig)
            self._key, self._background = key, None
        if self._background is None:
            with _frozen_layout(fig), _hidden(self._moving + self._numbers):
                canvas.draw()
            self._background = canvas.copy_from_bbox(fig.bbox)
        else:
            canvas.restore_region(self._background)
        for artist in self._moving:
            fig.draw_artist(artist)
        for text in self._numbers:
            self._stamps.paste(text, canvas)
        return _png(canvas.buffer_rgba())

    def _layout_key(self):
        """The tick labels of the moving axes: while they stay the same, so does the layout."""
        return [t.get_text() for a in self._moving if isinstance(a, Axes)
                for axis in (a.xaxis, a.yaxis) for t in axis.get_ticklabels()]

    def _forget_background(self, event=None) -> None:
        self._background = None

    def redraw(self) -> None:
        """Recompute and draw everything (call it after changing the figure yourself)."""
        with self._lock:
            self._key = None
            self._show(self._results())

    def _on_change(self, change) -> None:
        with self._lock:
            if self._holding:
                return
            try:
                with np.printoptions(**self._printoptions):
                    self._show(self._results())  # redraws only the moving parts
            except Exception as err:
                # Shown under the picture: the kernel's log is where a learner never looks.
                self.readout.value = (f'<pre class="ah-error" style="color:#b00020">'
                                      f"{html.escape(type(err).__name__)}: {html.escape(str(err))}</pre>")
                raise

    def _controls_box(self):
        groups = []
        for name, sliders in self._weight_sliders.items():
            rows = {}
            for key, s in sliders.items():
                rows.setdefault(key.split(",")[0], []).append(s)
            groups.append(W.VBox([W.HTML(f"<b>{name}</b>")] + [W.HBox(r) for r in rows.values()]))
        if self.controls:
            groups.append(W.VBox(list(self.controls.values())))
        return W.HBox(groups, layout=W.Layout(flex_flow="row wrap"))

    def show_static(self) -> None:
        """Show the figure and read-outs at the current values as ordinary output."""
        texts = [str(r) for v, r in zip(self.views, self._results()) if v["kind"] == "text"]
        if texts:
            print("\n".join(texts))
        # The live picture, laid out afresh, at the notebook's usual resolution.
        self.redraw()
        with self._lock, _frozen_layout(self.figure):
            self.figure.set_dpi(mpl.rcParams["figure.dpi"])
            try:
                display(self.figure)
            finally:
                self.figure.set_dpi(self.dpi)

    def _ipython_display_(self):
        display(self.widget)


class _Stamps:
    """Pictures of short texts: typeset once by matplotlib, then pasted.

    Typesetting one number (Text.draw) takes ~0.2 ms, so the 36 numbers of a
    6x6 heatmap cost more than everything else in a redraw. A number's picture
    depends only on its text, colour and font, so each is drawn once on a
    transparent canvas and blended in wherever it is needed, within a pixel of
    where Text.draw would put it.
    """

    def __init__(self, dpi):
        figure = Figure(figsize=(3, 1), dpi=dpi, facecolor="none")
        FigureCanvasAgg(figure)
        self.sample = figure.text(0.5, 0.5, "", ha="center", va="center")
        self.pictures = {}

    def picture(self, text):
        """(colour premultiplied by alpha, alpha, offset of its top left from the anchor), or None."""
        key = (text.get_text(), mpl.colors.to_rgba(text.get_color()), text.get_fontproperties())
        if key not in self.pictures:
            if len(self.pictures) > 5000:  # ~10 MB: start afresh rather than grow without end
                self.pictures.clear()
            self.pictures[key] = self._typeset(*key)
        return self.pictures[key]

    def _typeset(self, string, color, font):
        self.sample.update({"text": string, "color": color, "fontproperties": font})
        figure = self.sample.figure
        figure.canvas.draw()
        rgba = np.asarray(figure.canvas.buffer_rgba()).astype(np.float32) / 255
        rows, cols = np.nonzero(rgba[..., 3])
        height, width = rgba.shape[:2]
        if len(rows) == 0 or rows.min() == 0 or cols.min() == 0 or rows.max() == height - 1 \
                or cols.max() == width - 1:
            return None  # nothing to paste, or too big for this canvas: Text.draw will do
        x, y = self.sample.get_transform().transform(self.sample.get_position())
        crop = rgba[rows.min():rows.max() + 1, cols.min():cols.max() + 1]
        alpha = crop[..., 3:]
        return crop[..., :3] * alpha, alpha, cols.min() - x, rows.min() - (figure.bbox.height - y)

    def paste(self, text, canvas):
        picture = self.picture(text) if text.get_visible() else None
        if picture is None:
            return text.figure.draw_artist(text)
        color, alpha, dx, dy = picture
        buffer = np.asarray(canvas.buffer_rgba())  # the canvas's own pixels, not a copy
        x, y = text.get_transform().transform(text.get_position())
        # Rows count from the top, from the figure's (fractional) height, as matplotlib's Agg does.
        left, top = round(x + dx), round(canvas.figure.bbox.height - y + dy)
        region = buffer[max(top, 0):top + color.shape[0], max(left, 0):left + color.shape[1], :3]
        if region.shape[:2] != color.shape[:2]:  # partly off the canvas
            return text.figure.draw_artist(text)
        region[:] = region * (1 - alpha) + 255 * color + 0.5


@contextlib.contextmanager
def _frozen_layout(fig):
    """Draw with the axes where they are, without solving the layout again."""
    engine = fig.get_layout_engine()
    fig.set_layout_engine("none")
    try:
        yield
    finally:
        fig.set_layout_engine(engine)


@contextlib.contextmanager
def _hidden(artists):
    visible = [artist.get_visible() for artist in artists]
    for artist in artists:
        artist.set_visible(False)
    try:
        yield
    finally:
        for artist, was in zip(artists, visible):
            artist.set_visible(was)


def _png(rgba) -> bytes:
    """Encode an RGBA buffer as PNG, trading a little size for speed (level 1 of 9)."""
    buffer = io.BytesIO()
    PIL.Image.fromarray(np.asarray(rgba)).save(buffer, format="png", compress_level=1)
    return buffer.getvalue()


def _clean(value):
    """Drop the rounding noise of the browser's slider arithmetic (-2 + 30 x 0.1 is
    1.0000000000000004 in JavaScript, -2 + 20 x 0.1 is 4e-16), so a slider moved
    to 1.0 computes with 1.0 and a zero shows as 0.00, not -0.00 (+ 0.0 drops the sign)."""
    return round(value, 10) + 0.0 if isinstance(value, float) else value
