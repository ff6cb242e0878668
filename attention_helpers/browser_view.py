"""A slider panel's live picture, drawn in the student's browser from numbers.

    view = BrowserView(figure, charts, n_texts)   # the layout, measured once on the figure
    view.show(results)                            # a move: the charts' new numbers, and the texts

`figure` is the panel's matplotlib figure (its static twin, drawn once so its layout is
solved) and `charts` the Heatmap and Bars objects drawn in it (None for a text read-out).
From them the view takes, once, where every chart, label and colour bar stands and the
colours of each colour map (`spec`); then each move sends only the numbers (`values`, one
float64 buffer for all charts) and what else changed (`extras`: the read-outs, the ends and
ticks of a colour scale that follows its values, an error). browser_view.js, in this
folder, draws them as SVG, in the static figure's colours and number formats.

It is an anywidget: the ES module ships in the package and nothing is fetched. The view says
when it has drawn (so the panel can tell a front end that runs it from one that does not),
and asks for "the picture in words" once a slider rests; `describe` answers.
"""

from __future__ import annotations

import re
import secrets
from pathlib import Path

import anywidget
import matplotlib as mpl
import numpy as np
import traitlets

from .alt_text import plain
from .plots import HATCH_COLOUR, MASKED_COLOUR, Bars, Heatmap, free_limits, tick_labels

__all__ = ["BrowserView", "spec_of", "frame_of"]

FONT = '"DejaVu Sans", "Bitstream Vera Sans", Verdana, Arial, sans-serif'  # matplotlib's, then similar
ERROR_COLOUR = "#b00020"  # a cell or bar whose value cannot be drawn (never a colour of a map)
CSS = """
.ah-picture { font-family: %s; color: black; background: white; width: max-content; }
.ah-picture svg { display: block; max-width: 100%%; height: auto; }
.ah-picture .ah-caption { margin: 2px 0; font-size: 12px; color: #333; }
.ah-picture .ah-readout { margin: 2px 0; font-size: 12px; white-space: pre-wrap; }
.ah-picture .ah-error { margin: 2px 0; color: #b00020; font-size: 12px; }
.ah-picture .ah-error:empty, .ah-picture .ah-readout[hidden] { display: none; }
.ah-picture details { font-size: 12px; max-width: 60em; }
""" % FONT


class BrowserView(anywidget.AnyWidget):
    """The picture of a panel's charts, drawn by browser_view.js from the numbers it is sent."""

    _esm = Path(__file__).with_name("browser_view.js")
    _css = CSS
    spec = traitlets.Dict().tag(sync=True)        # the layout: sent once
    values = traitlets.Bytes().tag(sync=True)     # every chart's numbers, float64 little-endian
    extras = traitlets.Dict().tag(sync=True)      # read-outs, free scales' ends and ticks, an error
    description = traitlets.Unicode("").tag(sync=True)  # the picture in words

    def __init__(self, figure, charts, *, name="", caption="", describe=None):
        super().__init__()
        self.charts = list(charts)
        self.rendered = False   # a front end has drawn this view
        self.failed = None      # what a front end said when it could not draw it
        self._describe = describe  # () -> the picture in words, asked for once a slider rests
        self.spec = spec_of(figure, self.charts, name=name, caption=caption)
        self.on_msg(self._on_message)

    def show(self, results, texts=(), widened=()) -> None:
        """Send the charts' new numbers (`results` in view order, a string for a text view);
        `widened`: the views whose value axis widened (their new ticks go too)."""
        values, extras = frame_of(self.charts, results)
        drawn = [k for k, c in enumerate(self.charts) if c is not None]  # view index -> chart index
        for k in widened:
            extras.setdefault("scales", {})[str(drawn.index(k))] = value_axis(self.charts[k])
        extras["texts"] = list(texts)
        with self.hold_sync():  # one message for both
            self.values = values
            self.extras = extras

    def show_error(self, message: str) -> None:
        """Say under the picture what went wrong; the picture stays as it was."""
        self.extras = {**self.extras, "error": message}

    def _on_message(self, _, content, buffers) -> None:
        if content.get("rendered"):
            self.rendered = True
        if content.get("failed"):
            self.failed = str(content["failed"])
        if "describe" in content and self._describe is not None:
            self.description = self._describe()


# ---- the layout, measured on the figure -------------------------------------------------

def spec_of(figure, charts, *, name="", caption="") -> dict:
    """Where each chart of `figure` stands and how it is coloured, for browser_view.js.
    Positions are in pixels from the top left, as the figure was last drawn."""
    renderer = figure.canvas.get_renderer()
    width, height = figure.canvas.get_width_height()
    px = figure.dpi / 72  # pixels per point
    uid = secrets.token_hex(4)
    specs, offset = [], 0
    for k, chart in enumerate(c for c in charts if c is not None):
        where = _Measure(renderer, height, px)
        common = {"offset": offset, "uid": f"{uid}-{k}", "hatch_id": f"ah-hatch-{uid}",
                  "hatch_colour": HATCH_COLOUR, "error_colour": ERROR_COLOUR,
                  "fmt": chart.fmt, "number_size": _size(chart, px),
                  "box": where.box(chart.ax.bbox), "title": where.text(chart.ax.title),
                  "xlabel": where.text(chart.ax.xaxis.label), "ylabel": where.text(chart.ax.yaxis.label)}
        if isinstance(chart, Heatmap):
            specs.append(common | _heatmap(chart, where))
            offset += chart.shape[0] * chart.shape[1]
        elif isinstance(chart, Bars):
            specs.append(common | _bars(chart, where))
            offset += len(chart.bars)
        else:
            raise TypeError(f"a browser view draws Heatmap and Bars charts, got {type(chart).__name__}")
    _check_formats(specs)
    # Shown at the size the notebook shows the static twin (its inline figures' dpi), in vector:
    # the layout in the figure's own pixels, the picture enlarged as a whole.
    zoom = round(max(1.0, mpl.rcParams["figure.dpi"] / figure.dpi), 4)
    return {"width": width, "height": height, "zoom": zoom, "font": FONT, "name": name, "caption": caption,
            "uid": uid, "size": offset, "charts": specs,
            # masked cells: "///" as matplotlib's Agg hatches it, 9 lines an inch, 1 point wide
            "hatch": {"id": f"ah-hatch-{uid}", "spacing": round(figure.dpi / 9, 3),
                      "background": MASKED_COLOUR, "colour": HATCH_COLOUR, "width": round(px, 3)}}


class _Measure:
    """Pixel places of a drawn figure's artists, with y from the top."""

    def __init__(self, renderer, height, px):
        self.renderer, self.height, self.px = renderer, height, px

    def box(self, bbox) -> list[float]:
        return [round(v, 2) for v in (bbox.x0, self.height - bbox.y1, bbox.width, bbox.height)]

    def right_aligned(self, text) -> dict:
        """A text as self.text has it, placed by its right edge (a y tick label)."""
        spec = self.text(text)
        return dict(spec, x=spec["right"])

    def text(self, text) -> dict | None:
        """A text's string (TeX made plain), size and middle; None if it shows nothing."""
        if text is None or not text.get_visible() or not text.get_text():
            return None
        box = text.get_window_extent(self.renderer)
        string = text.get_text()
        return {"text": plain(string) if "$" in string else string,
                "size": round(text.get_fontsize() * self.px, 2),
                "x": round((box.x0 + box.x1) / 2, 2), "y": round(self.height - (box.y0 + box.y1) / 2, 2),
                "rotate": -round(text.get_rotation()) % 360 or 0,
                "left": round(box.x0, 2), "right": round(box.x1, 2)}


def _size(chart, px) -> float:
    texts = [t for row in chart.texts for t in (row if isinstance(row, list) else [row])]
    return round(texts[0].get_fontsize() * px, 2) if texts else 10 * px


def _colours(cmap_colours) -> tuple[list[str], str]:
    """A colour table as hex strings, and for each entry the ink a number on it is written in
    ("b" black, "w" white): the same table plots.Heatmap writes its numbers with."""
    from .plots import ink_for

    rgba = np.asarray(cmap_colours)
    hexes = [mpl.colors.to_hex(c) for c in rgba]
    return hexes, "".join("b" if ink_for(c) == "black" else "w" for c in rgba)


def _heatmap(h: Heatmap, where: _Measure) -> dict:
    out = {"kind": "heatmap", "shape": list(h.shape), "mask": None, "categories": None,
           "colorbar": None, "key": None, "scale": None,
           "xticks": [where.text(t) for t in h.ax.get_xticklabels()],
           "yticks": [where.right_aligned(t) for t in h.ax.get_yticklabels()]}
    if h.mask is not None:
        out["mask"] = [bool(v) for v in np.ravel(h.mask)]
    cmap = h.image.get_cmap()
    out["lut"], out["ink"] = _colours(cmap(np.arange(cmap.N)))
    if h.categories is not None:
        patches, texts = h.key.get_patches(), h.key.get_texts()
        out["categories"] = [{"value": float(v), "colour": mpl.colors.to_hex(colour),
                              "swatch": where.box(p.get_window_extent(where.renderer)),
                              "text": dict(where.text(t), x=where.text(t)["left"])}
                             for (v, (_, colour)), p, t in zip(h.categories.items(), patches, texts)]
        return out
    if h.fixed_limits:
        out["scale"] = _scale(h, *h.limits)
    if h.colorbar is not None:
        bar = h.colorbar.ax
        tick = mpl.rcParams["ytick.major.size"] * where.px
        out["colorbar"] = {"box": where.box(bar.bbox), "tick": round(tick, 2),
                           "size": round(_tick_size(bar) * where.px, 2),
                           "labels_x": round(bar.bbox.x1 + tick + mpl.rcParams["ytick.major.pad"] * where.px,
                                             2)}
    out["key"] = _masked_key(h, where)
    return out


def _tick_size(ax) -> float:
    labels = ax.yaxis.get_ticklabels()
    return labels[0].get_fontsize() if labels else mpl.font_manager.FontProperties(
        size=mpl.rcParams["ytick.labelsize"]).get_size_in_points()


def _masked_key(h: Heatmap, where: _Measure) -> dict:
    """Where the "masked" key stands: as the figure drew it, or where plots.Heatmap puts it
    (the top left corner under the colour bar, or beside the cells' low corner)."""
    if h.legend is not None and h.legend.get_visible():
        patch, text = h.legend.get_patches()[0], h.legend.get_texts()[0]
        return {"swatch": where.box(patch.get_window_extent(where.renderer)),
                "text": dict(where.text(text), x=where.text(text)["left"])}
    size = h.texts[0][0].get_fontsize() * where.px  # the legend's font: the numbers'
    holder = h.colorbar.ax.bbox if h.colorbar is not None else h.ax.bbox
    x = (holder.x0 if h.colorbar is not None else holder.x1) + 0.6 * size  # borderaxespad + borderpad
    top = where.height - holder.y0 + 0.6 * size
    swatch = [round(x, 2), round(top + 0.15 * size, 2), round(1.4 * size, 2), round(0.7 * size, 2)]
    label = {"text": h.mask_label, "size": round(size, 2), "x": round(x + 1.8 * size, 2),
             "y": round(top + 0.5 * size, 2), "rotate": 0}
    return {"swatch": swatch, "text": label}


def _scale(h: Heatmap, low: float, high: float) -> dict:
    """A heatmap's colour scale for the view: its ends, and the colour bar's ticks as the static
    figure writes them (plots.tick_labels of the values the ticks stand for)."""
    ticks = []
    if h.colorbar is not None:
        # where the static colour bar puts each tick (0 to 1), and the value it labels there
        # (Heatmap.value_at)
        values = [low + (v - low) / (high - low) * (high - low)
                  for v in h.colorbar.locator.values(low, high)]
        ticks = [{"value": v, "text": t} for v, t in zip(values, tick_labels(values, h.fmt))]
    return {"lo": low, "hi": high, "ticks": ticks}


def _bars(b: Bars, where: _Measure) -> dict:
    boxes = [bar.get_window_extent(where.renderer) for bar in b.bars]
    labels = b.ax.get_yticklabels()
    return {"kind": "bars", "log": b.log, "value_labels": b.texts[0].get_visible() if b.texts else False,
            "colour": mpl.colors.to_hex(b.bars[0].get_facecolor()) if b.bars else "#3b528b",
            "bars": [[round(box.x0, 2), round(box.width, 2)] for box in boxes],
            "xticks": [where.text(t) for t in b.ax.get_xticklabels()],
            "tick": round(mpl.rcParams["ytick.major.size"] * where.px, 2),
            "tick_size": round((labels[0].get_fontsize() if labels else 10) * where.px, 2),
            "yticks_x": round(b.ax.bbox.x0 - (mpl.rcParams["ytick.major.size"]
                                              + mpl.rcParams["ytick.major.pad"]) * where.px, 2),
            "scale": value_axis(b)}


def value_axis(b: Bars) -> dict:
    """A bar chart's value axis as the static figure draws it: its ends, and the ticks
    matplotlib's locator and formatter give for them (minor ones unlabelled, on a log axis),
    those within the ends as matplotlib judges it (to 1e-10 of the axis, on its own scale)."""
    low, high = (float(v) for v in b.ax.get_ylim())
    axis = b.ax.yaxis
    scale = axis.get_transform()
    lo, hi = sorted(scale.transform([low, high]))
    close = 1e-10 * (hi - lo)

    def inside(v) -> bool:
        return lo - close <= scale.transform([v])[0] <= hi + close

    locs = list(axis.get_major_locator()())
    labels = axis.get_major_formatter().format_ticks(locs)  # all at once, as matplotlib labels them
    ticks = [{"value": float(v), "text": text} for v, text in zip(locs, labels) if inside(v)]
    if b.log:
        minor = axis.get_minor_locator()()
        ticks += [{"value": float(v), "text": "", "minor": True} for v in minor if inside(v)]
    return {"lo": low, "hi": high, "ticks": ticks}


def _check_formats(specs) -> None:
    for spec in specs:
        if not re.fullmatch(r"\.\d+f", spec["fmt"]):
            raise ValueError(f"a live panel writes numbers with a format like '.2f'; got fmt={spec['fmt']!r}")


# ---- a move: the numbers ------------------------------------------------------------------

def frame_of(charts, results) -> tuple[bytes, dict]:
    """(every chart's values as one float64 buffer, the scales that follow their values) for
    `results` in the order of `charts` (None where a chart is a text read-out)."""
    parts, scales = [], {}
    k = 0
    for chart, result in zip(charts, results):
        if chart is None:
            continue
        values = np.asarray(result, dtype=float)
        if isinstance(chart, Heatmap):
            if values.shape != chart.shape:
                raise ValueError(f"heatmap {chart.ax.get_title()!r} needs values of shape {chart.shape}, "
                                 f"got {values.shape}")
            if np.isposinf(values).any():
                raise ValueError(f"heatmap {chart.ax.get_title()!r} got +inf; a value must be finite, "
                                 "or -inf / NaN for a masked cell")
            if chart.categories is None and not chart.fixed_limits:
                masked = ~np.isfinite(values) if chart.mask is None else ~chart.mask | ~np.isfinite(values)
                scales[str(k)] = _scale(chart, *free_limits(values, masked, chart.diverging))
        elif isinstance(chart, Bars):
            if values.shape != (len(chart.bars),):
                raise ValueError(f"bar chart {chart.ax.get_title()!r} needs {len(chart.bars)} values, "
                                 f"got shape {values.shape}")
            if not np.isfinite(values).all() or (chart.log and not (values > 0).all()):
                raise ValueError(f"bar chart {chart.ax.get_title()!r} got {values}: its values must be finite"
                                 + (" and above 0 (a log axis)" if chart.log else ""))
        parts.append(np.ravel(values))
        k += 1
    values = np.concatenate(parts).astype("<f8") if parts else np.zeros(0, "<f8")
    return values.tobytes(), ({"scales": scales} if scales else {})
