"""Slider panels: sliders for the entries of weight matrices (and for d_k, T, ...)
next to heatmaps and bar charts that redraw on every move.

    panel = ah.Panel(compute, views, weights={"W_Q": W_Q}, controls={"T": T_slider})
    panel                  # the live panel (JupyterLab shows the sliders and the picture)
    panel.show_static()    # the same figure as an ordinary picture, for readers without a kernel

A slider move: read the sliders -> compute -> update the views -> show the picture.

A bar chart keeps one value axis, fixed at the start to cover every value the
sliders reach at their ends, so bars can be compared from move to move (a value
beyond it widens it); a heatmap's colour scale follows its values, for contrast.

The picture: with fast=False, matplotlib draws the whole figure (print_png); by
default _fastdraw redraws only what moved, and checks the first picture of each
layout (drawn both ways it draws) against a full draw. If they differ, or the fast
path fails in any way, the panel draws the plain way from then on and says so once
(FastPathWarning).
"""

from __future__ import annotations

import base64
import html
import io
import threading
import warnings

import ipywidgets as W
import matplotlib as mpl
import numpy as np
from IPython.display import display
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from traitlets import CFloat

from . import _fastdraw
from .alt_text import describe
from .plots import Bars, Heatmap

__all__ = ["Panel", "matrix_sliders", "FastPathWarning"]


class FastPathWarning(UserWarning):
    """A panel's fast picture was wrong or failed: it draws every move in full from now on."""

# The picture travels as a data: address. Sent as PNG bytes, the page would make a
# blob: address of them, which the browser loads through another process before it
# decodes: 4-5 ms more per move (benchmarks/slider_latency.py's floor, back to back).
# ipywidgets 7's page (Colab's) turns a long address into a string with too many
# arguments for one function call, so it gets the bytes.
_DATA_ADDRESS = int(W.__version__.split(".")[0]) >= 8
DESCRIBE_AFTER = 0.25  # s: fast panels describe the picture once a slider rests this long, not per step


class _WeightSlider(W.FloatSlider):
    """A FloatSlider whose moves the kernel does not echo back to the page.

    ipywidgets 8 sends each value a page sends straight back to every page showing the
    slider ("echo_update"), for a second page open on the same kernel; the page that
    moved it ignores it. That is one message more per move for the kernel and its
    server, which a class dragging together on one hub pays for (benchmarks/README.md,
    "A class on one hub"). The value opts out as ipywidgets' own FileUpload does. A
    second page on the same kernel then sees the picture follow, not the slider."""

    value = CFloat(0.0, help="Float value").tag(sync=True, echo_update=False)


def matrix_sliders(name, matrix, value_range=(-2.0, 2.0), step=0.1):
    """One _WeightSlider per entry of `matrix`, keyed "name[i,j]"."""
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
        f"{name}[{i},{j}]": _WeightSlider(
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
    fast: False draws every move with matplotlib's ordinary full draw (slower, the
        same picture); True (the default) redraws only what moved (see _fastdraw).
    """

    def __init__(self, compute, views, *, weights=None, controls=None,
                 value_range=(-2.0, 2.0), step=0.1, figsize=None, dpi=72, fast=True):
        self.compute, self.views, self.dpi = compute, list(views), dpi
        for view in self.views:
            if view.get("kind") not in ("heatmap", "bars", "text"):
                raise ValueError(f"view kind must be 'heatmap', 'bars' or 'text', got {view.get('kind')!r}")
        weights = dict(weights or {})
        self._weight_sliders = {n: matrix_sliders(n, m, value_range, step) for n, m in weights.items()}
        self._shapes = {n: np.shape(m) for n, m in weights.items()}
        self._entries = {key: (n, ij) for n, m in weights.items()
                         for key, (ij, _) in zip(self._weight_sliders[n], np.ndenumerate(m))}
        self.controls = dict(controls or {})
        for name, control in self.controls.items():
            control.description = control.description or name  # every control shows a label
        self.sliders = {k: s for group in self._weight_sliders.values() for k, s in group.items()}
        self.sliders.update(self.controls)

        # The figure: one Axes per heatmap or bar chart, side by side.
        drawn = [v for v in self.views if v["kind"] != "text"]
        self.figure = Figure(figsize=figsize or (4.2 * max(1, len(drawn)), 3.4), dpi=dpi,
                             layout="constrained")
        FigureCanvasAgg(self.figure)
        axes = iter(self.figure.subplots(1, len(drawn), squeeze=False)[0] if drawn else [])
        results = self._results()
        self.artists = [_make_view(view, next(axes), result) if view["kind"] != "text" else None
                        for view, result in zip(self.views, results)]
        # At the sliders' ends: one value axis per bar chart, and room beside each free colour
        # bar for the widest label it can show, so the layout stays put while a student drags.
        free = [k for k, a in enumerate(self.artists) if isinstance(a, Heatmap) and a.colorbar
                and not a.fixed_limits]
        if free or any(isinstance(a, Bars) and not a.probabilities for a in self.artists):
            ends = self._results_at_the_ends(mixes=16 if free else 0)
            self._fix_value_axes(ends)
            for k in free:
                self.artists[k].keep_room_for([_value_range(r[k]) for r in ends])
        # Constrained layout measures the figure as last drawn: one draw first settles the layout.
        self.figure.canvas.draw()
        self.fast, self._drawer = fast, None
        self.fell_back = None  # why the fast path was given up, if it was
        if fast:
            try:
                self._drawer = _fastdraw.Drawer(self.figure, self.artists)
            except Exception as err:
                self._fall_back(err)

        # Shown at its own size (a VBox would stretch it to the cell's width, blurring it).
        self.image = W.Image(format="url" if _DATA_ADDRESS else "png",
                             layout=W.Layout(max_width="100%", align_self="flex-start"))
        self.png = b""  # the picture shown now, as PNG bytes
        self.readout = W.HTML()
        self.described = W.HTML()  # the picture's text alternative, kept up to date by _show
        self._describe_later = _fastdraw.Later(DESCRIBE_AFTER, self._describe) if fast else None
        self._holding = False
        self._shown = None  # the slider values of the picture shown
        # In JupyterLab 4.6 with ipykernel 7, slider callbacks run (by default) in a
        # kernel subshell thread, while cells (set, show_static) run in the main one;
        # NumPy's print options belong to a thread, so the callback borrows these.
        self._lock = threading.RLock()
        self._printoptions = np.get_printoptions()
        self._show(results)
        for slider in self.sliders.values():
            slider.observe(self._on_change, names="value")
        self.widget = W.VBox([self._controls_box(), self.image, self.readout, self.described])

    # ---- values -------------------------------------------------------
    def values(self, settings=None) -> dict:
        """Weight matrices and control values by name: the sliders' current ones,
        or those of `settings` ({slider key: value}) where it has a key."""
        settings = {key: s.value for key, s in self.sliders.items()} | dict(settings or {})
        out = {name: np.zeros(shape) for name, shape in self._shapes.items()}
        for key, (name, ij) in self._entries.items():
            out[name][ij] = _clean(settings[key])
        out.update({name: _clean(settings[name]) for name in self.controls})
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
                        for key, (_, ij) in self._entries.items():
                            if key.startswith(name + "["):
                                self.sliders[key].value = float(np.asarray(value, dtype=float)[ij])
            finally:
                self._holding = False
            self.redraw()

    # ---- a move: compute -> update the views -> show ---------------------
    def _results(self, settings=None):
        results = self.compute(**self.values(settings))
        if len(results) != len(self.views):
            raise ValueError(f"compute returned {len(results)} results for {len(self.views)} views")
        return results

    def _update(self, results) -> None:
        """Set the charts to `results` (drawn by _show, or by whoever draws the figure next)."""
        self._fix_value_axes([results])  # a value beyond a bar chart's axis widens it
        for artist, result in zip(self.artists, results):
            if artist is not None:
                artist.update(result)

    def _show(self, results, moving=False, fresh=False):
        self._update(results)
        texts = [str(r) for artist, r in zip(self.artists, results) if artist is None]
        self.readout.value = "<pre>" + html.escape("\n".join(texts)) + "</pre>" if texts else ""
        self.png = self._picture(fresh)
        self.image.value = _address(self.png) if _DATA_ADDRESS else self.png
        self._shown = self.values()  # the values `results` came from (the lock holds them still)
        if moving and self.fast:
            self._describe_later()  # one message fewer per move while a slider is dragged
        else:
            self._describe()

    def _picture(self, fresh=False) -> bytes:
        if self.fast:
            try:
                return self._drawer.png(fresh)
            except Exception as err:  # a wrong picture (Mismatch) or a failure: never the student's
                self._fall_back(err)
        return _full_draw(self.figure)

    def _fall_back(self, err) -> None:
        """Draw the plain way from now on, and say so once."""
        self.fast, self._drawer = False, None
        self.fell_back = f"{type(err).__name__}: {err}"
        warnings.warn(f"This panel now draws every move in full (slower, the same picture), because "
                      f"its fast path failed: {self.fell_back}", FastPathWarning, stacklevel=2)

    def _describe(self) -> None:
        """The picture in words, under it (an ipywidgets 8.1 Image can carry neither alt
        nor a tooltip: with a tooltip its view fails to render in JupyterLab)."""
        with self._lock:
            self.described.value = ("<details><summary>The picture in words</summary>"
                                    f"{html.escape(describe(self.figure))}</details>")

    def _on_change(self, change) -> None:
        with self._lock:
            if self._holding or _same(self.values(), self._shown):
                return  # e.g. a slider clamped by another's observer: one move, drawn once
            try:
                with np.printoptions(**self._printoptions):
                    self._show(self._results(), moving=True)
            except Exception as err:
                self._shown = None  # whatever comes next is drawn, and clears this message
                # Shown under the picture: the kernel's log is where a learner never looks.
                self.readout.value = (f'<pre class="ah-error" style="color:#b00020">'
                                      f"{html.escape(type(err).__name__)}: {html.escape(str(err))}</pre>")
                raise

    def full_draw_png(self) -> bytes:
        """The picture matplotlib's ordinary full draw gives in the present layout (what
        fast=False shows): for checking the fast picture, `png`, against."""
        with self._lock:
            engine = self.figure.get_layout_engine()
            self.figure.set_layout_engine("none")
            try:
                return _full_draw(self.figure)
            finally:
                self.figure.set_layout_engine(engine)

    def redraw(self) -> None:
        """Recompute and draw everything (call it after changing the figure yourself)."""
        with self._lock:
            self._show(self._results(), fresh=True)

    # ---- bar charts: one value axis over the sliders' ends ------------------
    def _results_at_the_ends(self, mixes=0) -> list:
        """compute's results at the start values, with each slider alone at either end, with
        all at their low or all at their high ends, and at `mixes` seeded mixes of ends: where
        values (products of weights) are largest, most often."""
        ends = {key: _ends(s) for key, s in self.sliders.items()}
        rng = np.random.default_rng(0)
        settings = ([{}] + [{key: end} for key in ends for end in ends[key]]
                    + [{key: e[0] for key, e in ends.items()}, {key: e[-1] for key, e in ends.items()}]
                    + [{key: e[rng.integers(len(e))] for key, e in ends.items()} for _ in range(mixes)])
        found = []
        for setting in settings:
            try:
                found.append(self._results(setting))
            except Exception:  # an end that compute rejects is an end no student sees either
                continue
        return found

    def _fix_value_axes(self, many_results) -> None:
        """Fix (or widen) each bar chart's value axis to cover `many_results`."""
        for k, bars in enumerate(self.artists):
            if isinstance(bars, Bars) and not bars.probabilities:
                lo, hi = bars.value_range or (np.inf, -np.inf)
                low, high = _value_range(*(r[k] for r in many_results))
                if low < lo or high > hi:
                    bars.fix_limits(min(lo, low), max(hi, high))

    # ---- what the notebook shows -----------------------------------------
    def _controls_box(self):
        groups = []
        for name, sliders in self._weight_sliders.items():
            rows = {}
            for key, s in sliders.items():
                rows.setdefault(self._entries[key][1][0], []).append(s)
            groups.append(W.VBox([W.HTML(f"<b>{name}</b>")] + [W.HBox(r) for r in rows.values()]))
        if self.controls:
            groups.append(W.VBox(list(self.controls.values())))
        return W.HBox(groups, layout=W.Layout(flex_flow="row wrap"))

    def description(self) -> str:
        """What the panel does, in a sentence: what GitHub, nbviewer and the static
        edition show in place of the live panel."""
        names = list(self._weight_sliders) + list(self.controls)
        shows = [v.get("title") or v["kind"] for v in self.views if v["kind"] != "text"]
        if any(v["kind"] == "text" for v in self.views):
            shows.append("a text read-out")
        return (f"Live panel (needs a running kernel): move the sliders for {_and(names)} "
                f"and it redraws {_and(shows)}. The same figure follows below as a static picture.")

    def _repr_mimebundle_(self, **kwargs):
        # JupyterLab shows the live widget; a reader without a kernel gets the sentence.
        if hasattr(self.widget, "_repr_mimebundle_"):  # ipywidgets 8
            bundle = self.widget._repr_mimebundle_(**kwargs)
        else:  # ipywidgets 7 (Colab) shows a widget through this same view bundle
            view = {"version_major": 2, "version_minor": 0, "model_id": self.widget.model_id}
            bundle = {"application/vnd.jupyter.widget-view+json": view}
        bundle["text/plain"] = self.description()
        return bundle

    def show_static(self) -> None:
        """Show the figure and read-outs at the current values as ordinary output."""
        _inline_pictures()
        with self._lock:
            results = self._results()
            texts = [str(r) for v, r in zip(self.views, results) if v["kind"] == "text"]
            if texts:
                print("\n".join(texts))
            # The live picture's figure, at the notebook's usual resolution (display draws it).
            self._update(results)
            self.figure.set_dpi(mpl.rcParams["figure.dpi"])
            try:
                display(self.figure)
            finally:
                self.figure.set_dpi(self.dpi)
                # The live picture redrawn, laid out again at its own resolution now rather
                # than on the next move (and showing any change made to the figure by hand).
                self._show(results, fresh=True)


def _inline_pictures() -> None:
    """Make sure IPython shows a Figure as a picture: the inline backend sets that up when
    pyplot first loads it, which a notebook that has drawn nothing with pyplot never did."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is None:
        return
    try:
        shell.display_formatter.formatters["image/png"].lookup_by_type(Figure)
    except KeyError:
        import matplotlib.pyplot as plt

        plt.switch_backend(mpl.get_backend())  # loads the backend, which registers its formatters


def _make_view(view, ax, result):
    options = {key: val for key, val in view.items() if key != "kind"}
    if view["kind"] == "heatmap":
        rows, cols = options.pop("row_labels", None), options.pop("col_labels", None)
        return Heatmap(ax, result, rows, cols, **options)
    return Bars(ax, result, options.pop("labels"), **options)


def _full_draw(figure) -> bytes:
    """The figure drawn the ordinary way (layout solved, every artist drawn), as PNG bytes."""
    buffer = io.BytesIO()
    figure.canvas.print_png(buffer)
    return buffer.getvalue()


def _address(png: bytes) -> bytes:
    """PNG bytes as a data: address, the value of a "url" Image."""
    return b"data:image/png;base64," + base64.b64encode(png)


def _ends(slider) -> list:
    """The values at a slider's two ends (or a control's first and last choice)."""
    if hasattr(slider, "options"):
        options = [o[1] if isinstance(o, tuple) else o for o in slider.options]
        return [options[0], options[-1]]
    if isinstance(slider.value, bool):
        return [False, True]
    if isinstance(slider, W.FloatLogSlider):
        return [slider.base ** slider.min, slider.base ** slider.max]
    if hasattr(slider, "min"):
        return [slider.min, slider.max]
    return [slider.value]


def _value_range(*results) -> tuple[float, float]:
    """(lowest, highest) finite value in `results`; (inf, -inf) if none."""
    values = np.concatenate([np.ravel(np.asarray(r, dtype=float)) for r in results])
    values = values[np.isfinite(values)]
    return (float(values.min()), float(values.max())) if values.size else (np.inf, -np.inf)


def _same(values, shown) -> bool:
    """True if `values` (from Panel.values) are those of the picture shown."""
    return shown is not None and values.keys() == shown.keys() and all(
        np.array_equal(values[name], shown[name]) for name in values)


def _and(words) -> str:
    words = list(words)
    return ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else "".join(words)


def _clean(value):
    """Drop the rounding noise of the browser's slider arithmetic (-2 + 30 x 0.1 is
    1.0000000000000004 in JavaScript, -2 + 20 x 0.1 is 4e-16), so a slider moved
    to 1.0 computes with 1.0 and a zero shows as 0.00, not -0.00 (+ 0.0 drops the sign)."""
    return round(value, 10) + 0.0 if isinstance(value, float) else value
