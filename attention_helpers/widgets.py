"""Slider panels: sliders for the entries of weight matrices (and for d_k)
next to heatmaps that redraw on every move.

A Panel owns one matplotlib figure. When a slider moves it recomputes,
updates the existing artists in place (see plots.Heatmap.update), renders the
figure to PNG and hands the bytes to an image widget; it never builds a new
figure. `panel.show_static()` draws the same figure as an ordinary output, for
readers without a kernel and for nbval to check.
"""

from __future__ import annotations

import io

import ipywidgets as W
import numpy as np
from IPython.display import display
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .plots import Bars, Heatmap

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
        self.figure = Figure(figsize=figsize, layout="constrained")
        FigureCanvasAgg(self.figure)
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

        self.image = W.Image(format="png", layout=W.Layout(max_width="100%"))
        self.readout = W.HTML()
        self._show(results)
        for slider in self.sliders.values():
            slider.observe(self._on_change, names="value")
        self._holding = False
        self.widget = W.VBox([self._controls_box(), self.image, self.readout])

    # ---- values -------------------------------------------------------
    def values(self) -> dict:
        """Current weight matrices (from the sliders) and control values, by name."""
        out = {}
        for name, sliders in self._weight_sliders.items():
            m = np.zeros(self._shapes[name])
            for key, s in sliders.items():
                i, j = map(int, key[len(name) + 1:-1].split(","))
                m[i, j] = s.value
            out[name] = m
        out.update({name: c.value for name, c in self.controls.items()})
        return out

    def outputs(self) -> list:
        """What the views show right now, in view order."""
        return self._results()

    def set(self, **values) -> None:
        """Set weight matrices and controls by name, then redraw once."""
        self._holding = True
        try:
            for name, value in values.items():
                if name in self._weight_sliders:
                    value = np.asarray(value, dtype=float)
                    if value.shape != self._shapes[name]:
                        raise ValueError(f"{name} must have shape {self._shapes[name]}, got {value.shape}")
                    for (i, j), v in np.ndenumerate(value):
                        self.sliders[f"{name}[{i},{j}]"].value = float(v)
                elif name in self.controls:
                    self.controls[name].value = value
                else:
                    raise ValueError(f"no slider or control named {name!r}; "
                                     f"this panel has {sorted(self._weight_sliders) + sorted(self.controls)}")
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
        for view, artist, result in zip(self.views, self.artists, results):
            if artist is None:
                texts.append(str(result))
            else:
                artist.update(result)
        self.readout.value = "<pre>" + "\n".join(texts) + "</pre>" if texts else ""
        self.image.value = self.png()

    def png(self) -> bytes:
        buffer = io.BytesIO()
        self.figure.savefig(buffer, format="png", dpi=self.dpi)
        return buffer.getvalue()

    def redraw(self) -> None:
        self._show(self._results())

    def _on_change(self, change) -> None:
        if not self._holding:
            self.redraw()

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
        display(self.figure)

    def _ipython_display_(self):
        display(self.widget)
