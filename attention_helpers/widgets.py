"""Slider panels: sliders for the entries of weight matrices (and for d_k, T, ...)
next to heatmaps and bar charts that redraw on every move.

    panel = ah.Panel(compute, views, weights={"W_Q": W_Q}, controls={"T": T_slider})
    panel                  # the live panel: sliders, and the picture drawn in your browser
    panel.show_static()    # the same figure as an ordinary picture, for readers without a kernel

A slider move: read the sliders -> compute -> send the numbers -> the browser draws them
(browser_view.py and its ES module). The panel also keeps the same charts as a matplotlib
figure, its static twin: what show_static() and full_draw_png() show, the picture its
display carries for a page that cannot run widgets, and the text of "the picture in words".

Where the browser cannot draw the picture (anywidget not installed, or its JavaScript not
running in this front end) the panel draws each move with matplotlib in the kernel instead,
as a PNG, and says so once (KernelPictureWarning). in_browser=False asks for that from the start.

A bar chart keeps one value axis, fixed at the start to cover every value the sliders reach
at their ends (a value beyond it widens it). A heatmap's colour scale is fixed where its view
says so (probabilities, vmin/vmax); otherwise it follows its values, and the panel's caption
says so, since colours then mean other numbers after a move.
"""

from __future__ import annotations

import base64
import copy
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

from .alt_text import describe, plain
from .plots import Bars, Heatmap

try:
    from .browser_view import BrowserView
except ImportError as missing:  # anywidget is not installed: the kernel draws the pictures
    BrowserView, _NO_BROWSER_VIEW = None, f"anywidget is not installed ({missing})"
else:
    _NO_BROWSER_VIEW = None

__all__ = ["Panel", "matrix_sliders", "KernelPictureWarning"]


class KernelPictureWarning(UserWarning):
    """A panel draws its pictures in the kernel (slower), because the browser cannot."""

# In the kernel's pictures the PNG travels as a data: address (the page decodes it without a
# trip through a blob: address). ipywidgets 7's page (Colab's) gets the bytes.
_DATA_ADDRESS = int(W.__version__.split(".")[0]) >= 8


class _WeightSlider(W.FloatSlider):
    """A FloatSlider whose moves the kernel does not echo back to the page.

    ipywidgets 8 sends each value a page sends straight back to every page showing the
    slider ("echo_update"), for a second page open on the same kernel; the page that
    moved it ignores it. That is one message more per move for the kernel and its
    server, which a class dragging together on one hub pays for (benchmarks/README.md,
    "A class on one hub"). The value opts out as ipywidgets' own FileUpload does. A
    second page on the same kernel then sees the picture follow, not the slider."""

    value = CFloat(0.0, help="Float value").tag(sync=True, echo_update=False)


def _without_echo(slider) -> None:
    """Let this one slider, like a _WeightSlider, take its page's values without echoing them
    back: a control's echo reached the page before the picture it moved and held it back
    (benchmarks/README.md, "The sliders' echo"). The value trait is copied with echo_update off
    onto this instance alone (add_traits gives it a class of its own); its checks stay. (And a
    SelectionSlider's index, which is what its page sends.)"""
    quiet = {}
    for name in ("value", "index"):  # a SelectionSlider's page sends its index
        trait = slider.traits().get(name)
        echoes = trait is not None and trait.metadata.get("echo_update") in (None, True)
        if echoes and trait.metadata.get("sync"):
            quiet[name] = copy.copy(trait)
            quiet[name].metadata = {**trait.metadata, "echo_update": False}
    if quiet:
        slider.add_traits(**quiet)


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
    in_browser: True (the default) draws the picture in the browser from the numbers;
        False draws every move with matplotlib in the kernel (slower, the same charts).
    """

    def __init__(self, compute, views, *, weights=None, controls=None,
                 value_range=(-2.0, 2.0), step=0.1, figsize=None, dpi=72, in_browser=True):
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
            _without_echo(control)
        self.sliders = {k: s for group in self._weight_sliders.values() for k, s in group.items()}
        self.sliders.update(self.controls)

        # The static twin: one Axes per heatmap or bar chart, side by side.
        drawn = [v for v in self.views if v["kind"] != "text"]
        self.figure = Figure(figsize=figsize or (4.2 * max(1, len(drawn)), 3.4), dpi=dpi,
                             layout="constrained")
        FigureCanvasAgg(self.figure)
        axes = iter(self.figure.subplots(1, len(drawn), squeeze=False)[0] if drawn else [])
        results = self._results()
        # A colour scale chosen from the sliders covers what a student reaches moving one slider
        # at a time: every slider at its extremes together (products of weights) would stretch it
        # so far that the lesson's values all look alike. Beyond it a cell takes the end colour.
        options = _scales_from_the_ends(self.views, lambda: self._results_at_the_ends(together=False))
        self.artists = [_make_view(view | more, next(axes), result) if view["kind"] != "text" else None
                        for view, more, result in zip(self.views, options, results)]
        # At the sliders' ends: one value axis per bar chart, and room beside each free colour
        # bar for the widest label it can show, so the layout stays put while a student drags.
        free = [k for k, a in enumerate(self.artists) if isinstance(a, Heatmap) and a.colorbar
                and not a.fixed_limits]
        if free or any(isinstance(a, Bars) and not a.probabilities for a in self.artists):
            ends = self._results_at_the_ends(mixes=16 if free else 0)
            self._fix_value_axes(ends)
            for k in free:
                self.artists[k].keep_room_for([_value_range(r[k]) for r in ends])
        # Constrained layout measures the figure as last drawn: one draw settles the layout,
        # which the browser's picture then takes over.
        self.figure.canvas.draw()

        self._lock = threading.RLock()  # slider callbacks may run in a subshell thread beside the cells
        # NumPy's print options belong to a thread: a callback borrows the notebook's.
        self._printoptions = np.get_printoptions()
        self._holding = False
        self._shown = self._results_now = None  # the sliders' settings of the picture shown, and its results
        self.fallback_reason = None  # why the pictures are drawn in the kernel, if they are
        self.view = self.image = None
        self.readout, self.described = W.HTML(), W.HTML()  # the kernel's pictures' read-out and words
        if in_browser and BrowserView is None:
            self._warn(_NO_BROWSER_VIEW)
        if in_browser and BrowserView is not None:
            self.view = BrowserView(self.figure, self.artists, name=self._name(), caption=self._caption(),
                                    describe=self._words)
            self.widget = W.VBox([self._controls_box(), self.view])
        else:
            self.fallback_reason = self.fallback_reason or "in_browser=False"
            self.widget = W.VBox([self._controls_box(), self._kernel_image(), self.readout, self.described])
        self._show(results)
        for slider in self.sliders.values():
            slider.observe(self._on_change, names="value")

    # ---- values -------------------------------------------------------
    def values(self, settings=None) -> dict:
        """Weight matrices and control values by name: the sliders' current ones,
        or those of `settings` ({slider key: value}) where it has a key."""
        settings = self._settings() | dict(settings or {})
        out = {name: np.zeros(shape) for name, shape in self._shapes.items()}
        for key, (name, ij) in self._entries.items():
            out[name][ij] = _clean(settings[key])
        out.update({name: _clean(settings[name]) for name in self.controls})
        return out

    def _settings(self) -> dict:
        """{slider key: its value now}: what a picture is drawn from."""
        return {key: s.value for key, s in self.sliders.items()}

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

    # ---- a move: compute -> send the numbers (or draw them here) ----------
    def _results(self, settings=None):
        results = self.compute(**self.values(settings))
        if len(results) != len(self.views):
            raise ValueError(f"compute returned {len(results)} results for {len(self.views)} views")
        return results

    def _update(self, results) -> None:
        """Set the static twin's charts to `results` (drawn by whoever draws the figure next)."""
        for artist, result in zip(self.artists, results):
            if artist is not None:
                artist.update(result)

    def _show(self, results, moving=False) -> None:
        widened = self._fix_value_axes([results])  # a value beyond a bar chart's axis widens it
        texts = [str(r) for artist, r in zip(self.artists, results) if artist is None]
        if self.view is not None:
            self.view.show(results, texts, widened=widened)
        else:
            self._update(results)
            self.readout.value = "<pre>" + html.escape("\n".join(texts)) + "</pre>" if texts else ""
            png = _full_draw(self.figure)
            self.image.value = _address(png) if _DATA_ADDRESS else png
        self._shown, self._results_now = self._settings(), results  # (the lock holds the sliders still)
        # A cell's redraw says its words at once, as a picture drawn here does; a slider's move in
        # the browser's picture, once it rests (the view asks).
        if not moving or self.view is None:
            self._refresh_words()

    def _words(self) -> str:
        """The picture in words, of the values shown (the static twin says them)."""
        with self._lock:
            if self._results_now is not None:
                self._update(self._results_now)
            return describe(self.figure)

    def _refresh_words(self) -> None:
        words = self._words()
        if self.view is not None:
            self.view.description = words
        else:  # an ipywidgets Image carries neither alt nor a tooltip: the words go under it
            self.described.value = ("<details><summary>The picture in words</summary>"
                                    f"{html.escape(words)}</details>")

    def _on_change(self, change) -> None:
        with self._lock:
            if self._holding or self._settings() == self._shown:
                return  # e.g. a slider clamped by another's observer: one move, drawn once
            if self.view is not None and not self.view.rendered and _from_a_page(change["owner"]):
                # A page moved a slider, so it runs widgets, but it never drew this picture.
                self._draw_in_kernel(self.view.failed or "this front end did not run the panel's "
                                     "browser view (anywidget's JavaScript)")
            try:
                with np.printoptions(**self._printoptions):
                    self._show(self._results(), moving=True)
            except Exception as err:  # shown in the panel, where a learner looks (never the log)
                self._shown = None  # whatever comes next is drawn, and clears this message
                self._error(f"{type(err).__name__}: {err}")

    def _error(self, message: str) -> None:
        if self.view is not None:
            self.view.show_error(message)
        else:
            self.readout.value = f'<pre class="ah-error" style="color:#b00020">{html.escape(message)}</pre>'

    # ---- the kernel's pictures: where the browser cannot draw -------------
    def _kernel_image(self):
        # Shown at its own size (a VBox would stretch it to the cell's width, blurring it).
        self.image = W.Image(format="url" if _DATA_ADDRESS else "png",
                             layout=W.Layout(max_width="100%", align_self="flex-start"))
        return self.image

    def _draw_in_kernel(self, reason: str) -> None:
        """From now on draw every move with matplotlib here, and say so once."""
        self._warn(reason)
        self.view = None
        self.widget.children = [self.widget.children[0], self._kernel_image(), self.readout, self.described]

    def _warn(self, reason: str) -> None:
        self.fallback_reason = reason
        warnings.warn(f"This panel draws its pictures in the kernel with matplotlib (slower, the same "
                      f"charts), because {reason}.", KernelPictureWarning, stacklevel=3)

    def full_draw_png(self) -> bytes:
        """The static twin at the values shown, as matplotlib draws it (a PNG)."""
        with self._lock:
            self._update(self._results())
            return _full_draw(self.figure)

    def redraw(self) -> None:
        """Recompute and draw everything (call it after changing the figure yourself)."""
        with self._lock:
            self._show(self._results())

    # ---- bar charts: one value axis over the sliders' ends ------------------
    def _results_at_the_ends(self, mixes=0, together=True) -> list:
        """compute's results at the start values and with each slider alone at either end; and
        (together=True) with all at their low or all at their high ends, and at `mixes` seeded
        mixes of ends: where values (products of weights) are largest, most often."""
        ends = {key: _ends(s) for key, s in self.sliders.items()}
        rng = np.random.default_rng(0)
        settings = [{}] + [{key: end} for key in ends for end in ends[key]]
        if together:
            settings += ([{key: e[0] for key, e in ends.items()}, {key: e[-1] for key, e in ends.items()}]
                         + [{key: e[rng.integers(len(e))] for key, e in ends.items()} for _ in range(mixes)])
        found = []
        for setting in settings:
            try:
                found.append(self._results(setting))
            except Exception:  # an end that compute rejects is an end no student sees either
                continue
        return found

    def _fix_value_axes(self, many_results) -> list[int]:
        """Fix (or widen) each bar chart's value axis to cover `many_results`; the charts widened."""
        widened = []
        for k, bars in enumerate(self.artists):
            if isinstance(bars, Bars) and not bars.probabilities:
                lo, hi = bars.value_range or (np.inf, -np.inf)
                low, high = _value_range(*(r[k] for r in many_results))
                if low < lo or high > hi:
                    bars.fix_limits(min(lo, low), max(hi, high))
                    widened.append(k)
        return widened

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

    def _titles(self) -> list[str]:
        return [plain(v.get("title") or v["kind"]) for v in self.views if v["kind"] != "text"]

    def _name(self) -> str:
        return "Live picture: " + _and(self._titles())

    def _caption(self) -> str:
        """Said under the picture when a colour scale follows its values (a move recolours every cell)."""
        free = [plain(a.ax.get_title()) or "the heatmap" for a in self.artists
                if isinstance(a, Heatmap) and a.categories is None and not a.fixed_limits]
        if not free:
            return ""
        which = _and(f"'{t}'" for t in free)
        return (f"The colour scale of {which} follows {'its' if len(free) == 1 else 'their'} values: after a "
                "move, compare the numbers in the cells, not their colours.")

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
        # JupyterLab shows the live widget; a page that cannot run widgets (GitHub, nbviewer, an
        # HTML export without the widgets' state) shows the picture at the values shown, with its words.
        if hasattr(self.widget, "_repr_mimebundle_"):  # ipywidgets 8
            bundle = self.widget._repr_mimebundle_(**kwargs)
        else:  # ipywidgets 7 (Colab) shows a widget through this same view bundle
            view = {"version_major": 2, "version_minor": 0, "model_id": self.widget.model_id}
            bundle = {"application/vnd.jupyter.widget-view+json": view}
        bundle["text/plain"] = self.description()
        with self._lock:
            bundle["image/png"] = base64.b64encode(self.full_draw_png()).decode("ascii")
            metadata = {"image/png": {"alt": describe(self.figure)}}
        return bundle, metadata

    def show_static(self) -> None:
        """Show the figure and read-outs at the current values as ordinary output."""
        _inline_pictures()
        with self._lock:
            results = self._results()
            texts = [str(r) for v, r in zip(self.views, results) if v["kind"] == "text"]
            if texts:
                print("\n".join(texts))
            # The static twin, at the notebook's usual resolution (display draws it).
            self._update(results)
            self.figure.set_dpi(mpl.rcParams["figure.dpi"])
            try:
                display(self.figure)
            finally:
                self.figure.set_dpi(self.dpi)


def _from_a_page(slider) -> bool:
    """True while `slider` takes a value a page sent (ipywidgets holds the page's state in
    `_property_lock` while it sets it, in 7 and in 8); False for a value a cell set."""
    return bool(getattr(slider, "_property_lock", None))


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


SCALES = ("sliders", "shared")  # a heatmap view's `scale`: fixed to cover each slider's ends, one at a time


def _scales_from_the_ends(views, at_the_ends) -> list[dict]:
    """vmin and vmax for each heatmap view with scale="sliders" (its own values with each slider
    alone at either end) or scale="shared" (one scale for all such views): rounded out to a round
    number, centred on 0 for a diverging one. {} for every other view."""
    for k, view in enumerate(views):
        scale = view.get("scale")
        if scale is not None and (scale not in SCALES or view["kind"] != "heatmap"):
            raise ValueError(f"view {k}: scale must be one of {SCALES} (heatmaps only), got {scale!r}")
        if view.get("scale") and ({"vmin", "vmax", "categories"} & view.keys() or view.get("probabilities")):
            raise ValueError(f"view {k}: scale={view['scale']!r} chooses vmin and vmax itself; "
                             "leave out vmin, vmax, probabilities and categories")
    chosen = [k for k, v in enumerate(views) if v.get("scale")]
    if not chosen:
        return [{} for _ in views]
    ranges = {k: _value_range(*(r[k] for r in at_the_ends())) for k in chosen}
    shared = [k for k in chosen if views[k]["scale"] == "shared"]
    if shared:
        together = (min(ranges[k][0] for k in shared), max(ranges[k][1] for k in shared))
        ranges.update({k: together for k in shared})
    out = [{} for _ in views]
    for k in chosen:
        low, high = ranges[k]
        if views[k].get("diverging"):
            size = _round_up(max(abs(low), abs(high)))
            low, high = -size, size
        else:
            low, high = -_round_up(-low) if low < 0 else _round_down(low), _round_up(high)
        out[k] = {"vmin": low, "vmax": high if high > low else low + 1.0}
    return out


def _round_up(x: float) -> float:
    """The smallest of 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8 times a power of 10 that is at least x (0 for x <= 0)."""
    if x <= 0:
        return 0.0
    power = 10.0 ** np.floor(np.log10(x))
    return float(next(m * power for m in (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10) if m * power >= x * (1 - 1e-12)))


def _round_down(x: float) -> float:
    """The largest round number (as _round_up) at most x, for x >= 0."""
    if x <= 0:
        return 0.0
    power = 10.0 ** np.floor(np.log10(x))
    return float(next(m * power for m in (8, 6, 5, 4, 3, 2.5, 2, 1.5, 1) if m * power <= x * (1 + 1e-12)))


def _make_view(view, ax, result):
    options = {key: val for key, val in view.items() if key not in ("kind", "scale")}
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


def _and(words) -> str:
    words = list(words)
    return ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else "".join(words)


def _clean(value):
    """Drop the rounding noise of the browser's slider arithmetic (-2 + 30 x 0.1 is
    1.0000000000000004 in JavaScript, -2 + 20 x 0.1 is 4e-16), so a slider moved
    to 1.0 computes with 1.0 and a zero shows as 0.00, not -0.00 (+ 0.0 drops the sign)."""
    return round(value, 10) + 0.0 if isinstance(value, float) else value
