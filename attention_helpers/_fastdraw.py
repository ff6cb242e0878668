"""Fast redraws of a panel's figure: the drawing tricks behind Panel(fast=True), in one place.

    drawer = Drawer(figure, charts)   # charts: the Heatmaps and Bars drawn in it
    drawer.png() -> PNG bytes         # after each move's chart.update(...)

gives the same picture as matplotlib's ordinary full draw of the figure
(Panel(fast=False); tests/test_widgets.py checks it within a pixel), faster:

- the layout is solved again only when what constrained layout measures
  changed (the extent of a colour bar's labels, a legend appearing);
- the parts that never move (axes, tick labels, titles) are drawn once and
  saved; a slider move puts the saved picture back and draws only the moving
  artists over it (matplotlib's "blitting");
- a heatmap's cells are coloured by table lookup: which cell each pixel shows
  is learned once per layout (`_Cells`), so a move only looks up colours;
- numbers are pasted from pictures typeset once (`_Stamps`), a new one from
  FreeType's glyphs as Agg's draw_text renders them, not by drawing a Text;
- a heatmap's frame and its masked cells' hatching are blended from their coverage, learned
  once per layout and mask (`_Overlay`);
- a colour bar's tick marks are drawn in one draw_markers call per side (`_tick_marks`), as
  each mark's Line2D would draw itself;
- the PNG is written without row filters at zlib level 1 (`_encode`);
- `Later` sends the picture's text alternative once a slider rests, not per step;
- `skip_inline_predraw` spares every figure shown inline a draw no one sees.

This is the one module that uses matplotlib's private API; tests/test_widgets.py
lists every private name it relies on and fails, naming it, if one disappears.
benchmarks/README.md says what each trick saves, and how it was measured.
"""

from __future__ import annotations

import contextlib
import struct
import threading
import time
import weakref
import zlib
from numbers import Real

import matplotlib as mpl
import numpy as np
from matplotlib.axis import Axis
from matplotlib.backends.backend_agg import FigureCanvasAgg, get_hinting_flag
from matplotlib.collections import PolyCollection
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.font_manager import findfont, get_font
from matplotlib.image import AxesImage
from matplotlib.markers import MarkerStyle
from matplotlib.path import Path
from matplotlib.spines import Spine
from matplotlib.text import Text

__all__ = ["Drawer", "Later", "png", "moving", "skip_inline_predraw"]

# Every private matplotlib name this module uses (tests/test_widgets.py checks each exists).
PRIVATE_API = {
    "matplotlib.axis.Axis": ["_update_ticks"],
    "matplotlib.image.AxesImage": ["_set_gc_clip", "_get_scalar_alpha"],
    "matplotlib.lines.Line2D": ["_set_gc_clip", "_get_markerfacecolor"],
    "matplotlib.pyplot": ["_draw_all_if_interactive"],
}


class Drawer:
    """The fast picture of one figure whose `charts` (Heatmaps, Bars) change from move to move."""

    def __init__(self, figure, charts):
        self.figure, self.charts = figure, [c for c in charts if c is not None]
        self._solved = None  # what the layout was last solved for (see _measured)
        self._settled = False  # True once solving again with the same _measured moves nothing
        self._draws = self._draws_seen = 0  # full draws of the figure, by anyone (show_static, ...)
        figure.canvas.mpl_connect("draw_event", self._count_draw)

    def _count_draw(self, event):
        self._draws += 1

    def png(self, fresh=False) -> bytes:
        """PNG bytes of the figure as a full draw (constrained layout as usual) would show it.

        A full draw solves the layout once per draw. Solving it again changes nothing
        once it has settled and nothing it measures has changed: only then is it skipped."""
        figure = self.figure
        ticks = {}  # each measured axis's ticks, worked out once for measuring and drawing
        measured = self._measured(ticks)
        changed = fresh or measured != self._solved or self._draws != self._draws_seen
        if changed or not self._settled:
            engine = figure.get_layout_engine()
            for _ in range(3):  # solved until it stays put, so that the next move needs no solving
                before = _positions(figure)
                if engine is not None:
                    engine.execute(figure)
                self._settled = _positions(figure) == before
                if self._settled:
                    break
            # drawn afresh even if nothing moved: a draw also places each colour bar in its slot
            picture = png(figure, moving(self.charts), fresh=True)
            self._solved, self._draws_seen = self._measured(), self._draws
            return picture
        return png(figure, moving(self.charts), ticks=ticks)

    def _measured(self, ticks=None) -> tuple:
        """What changes from move to move among what constrained layout measures: how far the
        labels beside each free colour bar and on each free value axis reach, which legends show.
        `ticks`, a dict, gets each of those axes' ticks."""
        ticks = {} if ticks is None else ticks
        found = []
        for chart in self.charts:
            if hasattr(chart, "image"):  # a Heatmap
                found.append(chart.legend is not None and chart.legend.get_visible())
                if chart.colorbar is not None and not chart.fixed_limits:
                    found.append(_labels(chart.colorbar.ax.yaxis, ticks))
            elif chart.value_range is None:  # Bars whose value axis follows the values
                found.append(_labels(chart.ax.yaxis, ticks))
        return tuple(found)


def _labels(axis, ticks) -> tuple:
    """How far the tick labels of a vertical Axis reach out to either side of its Axes, in
    pixels, and its offset text ("1e-9"): what constrained layout reads of them. (How high
    they reach matters only beyond the parent Axes' own titles and labels: never here.)"""
    renderer = axis.figure.canvas.get_renderer()
    box = axis.axes.bbox
    left = right = 0.0
    ticks[axis] = axis._update_ticks()
    labels = [label for tick in ticks[axis] for label in (tick.label1, tick.label2)]
    labels += axis.axes.texts  # a Heatmap's room kept for its widest label (keep_room_for)
    for label in labels:
        if label.get_visible() and label.get_text():
            # A vertical axis's label moves up and down only: how far it reaches sideways
            # depends on its text and where its column stands, so it is measured once.
            x = label.get_transform().transform(label.get_position())[0]
            key = (label.get_text(), label.get_horizontalalignment(), label.get_fontsize(), round(x, 3),
                   axis.figure.dpi)
            if key not in _REACH:
                if len(_REACH) > 5000:  # start afresh rather than grow without end
                    _REACH.clear()
                extent = label.get_window_extent(renderer)
                _REACH[key] = extent.x0 - x, extent.x1 - x
            x0, x1 = _REACH[key]
            left, right = max(left, box.x0 - (x + x0)), max(right, x + x1 - box.x1)
    return round(left, 3), round(right, 3), axis.offsetText.get_text()


_REACH = {}  # (text, alignment, size, column, dpi) -> how far left and right of its anchor it reaches


def _positions(figure) -> list:
    """Where each Axes sits, to a millionth of the figure (solving again jitters by 1e-16)."""
    return [tuple(np.round(ax.get_position(original=True).bounds, 6)) for ax in figure.axes]


def moving(charts) -> list:
    """What changes when the charts update, in matplotlib's drawing order: a heatmap's
    cells, masked-cell hatching, frame and numbers, and its colour bar's ticks when its
    scale follows the values; a bar chart's bars, frame and numbers (or the whole chart when its
    value axis follows the values)."""
    found = []
    for chart in charts:
        if hasattr(chart, "image"):  # a Heatmap
            cells = [t for row in chart.texts for t in row]
            found += [chart.image, chart.hatch, *chart.ax.spines.values(), *cells]
            if chart.colorbar is not None and not chart.fixed_limits:
                found.append(chart.colorbar.ax.yaxis)  # the bar itself never changes: its labels do
        elif chart.value_range is None:  # Bars whose value axis follows the values
            found.append(chart.ax)
        else:
            found += [*chart.bars, *chart.ax.spines.values(), *chart.texts]
    return found


class Later:
    """Call `function` once, `seconds` after the last of a burst of calls (a slider's drag).

    One thread waits while calls keep coming and ends once it has called `function`
    (starting a thread for every call would cost each move about a millisecond)."""

    def __init__(self, seconds, function):
        self.seconds, self.function = seconds, function
        self._due, self._thread, self._wake = None, None, threading.Condition()

    def __call__(self):
        with self._wake:
            self._due = time.monotonic() + self.seconds
            if self._thread is None:
                self._thread = threading.Thread(target=self._wait, daemon=True)
                self._thread.start()

    def cancel(self):
        with self._wake:
            self._due = None
            self._wake.notify()

    def _wait(self):
        with self._wake:
            try:
                while self._due is not None:
                    left = self._due - time.monotonic()
                    if left > 0:
                        self._wake.wait(left)  # a call meanwhile moves _due on: wait again
                        continue
                    self._due = None
                    self._wake.release()
                    try:
                        self.function()
                    finally:
                        self._wake.acquire()
            finally:
                self._thread = None


_saved = weakref.WeakKeyDictionary()  # figure -> _Saved, or None when it must be drawn afresh


class _Saved:
    """What one layout of a figure lets a move reuse."""

    def __init__(self, background):
        self.background = background  # the picture without the moving artists
        self.cells = {}  # image -> _Cells (or None: draw it the ordinary way)
        self.overlays = {}  # a frame, or (hatching, its outline) -> _Overlay (None: draw it as usual)
        self.anchors = {}  # text -> (its position, where that puts it in pixels)


def png(figure, moving, fresh=False, ticks=None) -> bytes:
    """The figure as PNG bytes, redrawing only `moving` over a saved picture of the rest
    (drawn afresh if `fresh`), with the layout as it is. `ticks`: {axis: its ticks} already
    worked out for this picture."""
    canvas = figure.canvas
    if figure not in _saved:  # first call: forget the picture whenever anything draws the figure
        canvas.mpl_connect("draw_event", lambda event: _saved.__setitem__(event.canvas.figure, None))
        _saved[figure] = None
    saved = None if fresh else _saved[figure]
    if saved is None:
        with _frozen_layout(figure), _hidden(moving):
            canvas.draw()
        saved = _saved[figure] = _Saved(canvas.copy_from_bbox(figure.bbox))
    else:
        canvas.restore_region(saved.background)
    renderer = canvas.get_renderer()
    for artist in moving:
        if isinstance(artist, Text):
            _STAMPS.paste(artist, canvas, saved.anchors)
        elif isinstance(artist, Axis):
            _draw_axis(artist, canvas, saved.anchors, (ticks or {}).get(artist))
        elif isinstance(artist, (Spine, PolyCollection)) and artist.get_visible():
            # a frame never changes in a layout; masked cells' hatching changes with the mask
            key = artist if isinstance(artist, Spine) else (artist, _outline(artist))
            if key not in saved.overlays:
                saved.overlays[key] = _Overlay.learn(artist, canvas)
            if saved.overlays[key] is None:
                figure.draw_artist(artist)
            else:
                saved.overlays[key].draw(canvas)
        elif isinstance(artist, AxesImage) and artist.get_visible():
            if artist not in saved.cells:
                saved.cells[artist] = _Cells.learn(artist, renderer)
            if saved.cells[artist] is None:
                figure.draw_artist(artist)
            else:
                saved.cells[artist].draw(artist, renderer)
        else:
            figure.draw_artist(artist)
    return _encode(np.asarray(canvas.buffer_rgba()), opaque=_opaque(figure))


def _outline(collection) -> bytes:
    """The vertices of a collection's polygons: the same bytes draw the same hatching."""
    paths = collection.get_paths()
    return np.concatenate([path.vertices.ravel() for path in paths]).tobytes() if paths else b""


def _draw_axis(axis, canvas, anchors, ticks=None):
    """Draw an Axis as Axis.draw does, its tick labels pasted (an offset text: Axis.draw itself)."""
    ticks = axis._update_ticks() if ticks is None else ticks
    if not axis.get_visible() or axis.offsetText.get_text() or axis.label.get_text():
        return axis.figure.draw_artist(axis)
    shown = [tick for tick in ticks if tick.get_visible()]
    for tick in shown:
        if tick.gridline.get_visible():
            axis.figure.draw_artist(tick.gridline)
    renderer = canvas.get_renderer()
    for side in ("tick1line", "tick2line"):  # the marks on each side, in one draw (they never overlap)
        _tick_marks([getattr(tick, side) for tick in shown if getattr(tick, side).get_visible()], renderer)
    for tick in shown:
        for label in (tick.label1, tick.label2):
            _STAMPS.paste(label, canvas, anchors)  # found again whenever its tick moves


def _tick_marks(lines, renderer):
    """Draw tick marks (Line2Ds of one point and a marker each) as Line2D.draw draws each
    one's marker, in one draw_markers call for all the marks that look alike."""
    groups = {}
    for line in lines:
        groups.setdefault(_mark_style(line), []).append(line)
    for style, alike in groups.items():
        first = alike[0]
        marker = MarkerStyle(first.get_marker(), first.get_fillstyle())
        if style is None or marker.get_alt_path() is not None:  # not a plain tick mark: drawn as usual
            for line in alike:
                line.figure.draw_artist(line)
            continue
        size = renderer.points_to_pixels(first.get_markersize())
        gc = renderer.new_gc()
        first._set_gc_clip(gc)
        gc.set_linewidth(first.get_markeredgewidth())
        gc.set_antialiased(first.get_antialiased())
        gc.set_foreground(mpl.colors.to_rgba(first.get_markeredgecolor(), first.get_alpha()), isRGBA=True)
        snap = marker.get_snap_threshold()
        gc.set_snap(size >= snap if isinstance(snap, Real) else snap)
        gc.set_joinstyle(marker.get_joinstyle())
        gc.set_capstyle(marker.get_capstyle())
        transform = first.get_transform()  # every line's in the group (the same object)
        points = Path(np.concatenate([line.get_xydata() for line in alike]))
        renderer.draw_markers(gc, marker.get_path(), marker.get_transform().scale(size),
                              transform.transform_path_non_affine(points), transform.get_affine().frozen(),
                              mpl.colors.to_rgba(first._get_markerfacecolor(), first.get_alpha()))
        gc.restore()


def _mark_style(line):
    """What a tick mark's picture depends on besides where it is (None: not a plain mark)."""
    if (line.get_linestyle() not in ("None", "none", "", " ") or line.get_drawstyle() != "default"
            or line.get_markevery() is not None or line.get_sketch_params() is not None
            or line.get_path_effects() or line.get_url() is not None or line.get_clip_path() is not None
            or line.get_marker() in (None, "None", "none", "", " ") or not line.get_markersize() > 0
            or len(line.get_xydata()) != 1):
        return None
    box = line.get_clip_box()
    return (id(line.get_transform()), line.get_marker(), line.get_fillstyle(), line.get_markersize(),
            line.get_markeredgewidth(), line.get_antialiased(), str(line.get_markeredgecolor()),
            str(line._get_markerfacecolor()), line.get_alpha(), line.get_clip_on(),
            None if box is None else tuple(box.bounds))


class _Cells:
    """A heatmap's cells drawn by table lookup.

    matplotlib draws an image by resampling its matrix to the pixels of its
    Axes (about a millisecond for a small heatmap). With nearest-neighbour
    sampling every pixel shows one cell, and which cell depends only on the
    layout. So the image is drawn once with each cell's number as its colour;
    from then on a move colours the cells (norm and colour map, as matplotlib
    does) and looks up each pixel's colour by its cell number.
    """

    def __init__(self, index, left, bottom):
        self.index, self.left, self.bottom = index, left, bottom

    @classmethod
    def learn(cls, image, renderer):
        """The lookup table for `image` in its present layout, or None if a lookup
        would not give exactly matplotlib's picture (then it is drawn the ordinary way)."""
        data = image.get_array()
        if data is None or data.ndim != 2 or data.size >= 2 ** 24:
            return None
        magnification = renderer.get_image_magnification()
        real, left, bottom, _ = image.make_image(renderer, magnification, unsampled=False)
        number = np.arange(data.size).reshape(data.shape)
        coded = np.stack([number & 255, number >> 8 & 255, number >> 16, np.full_like(number, 255)], -1)
        image.set_data(coded.astype(np.uint8))
        try:
            drawn, left_, bottom_, _ = image.make_image(renderer, magnification, unsampled=False)
        finally:
            image.set_data(data)
        drawn = np.asarray(drawn, dtype=np.int64)
        if (left_, bottom_) != (left, bottom) or drawn.shape != np.shape(real) \
                or (drawn[..., 3] != 255).any():
            return None
        number = (drawn[..., 0] | drawn[..., 1] << 8 | drawn[..., 2] << 16).astype(np.int32)
        cells = cls(number, left, bottom)
        return cells if np.array_equal(cells.picture(image), real) else None

    def picture(self, image):
        data, norm = image.get_array(), image.norm
        if type(norm) is Normalize and not norm.clip and norm.vmin < norm.vmax and data.dtype == np.float64:
            # Normalize's own arithmetic on a plain array (NaN where masked: the colour map's "bad")
            scaled = (np.ma.filled(data, np.nan) - float(norm.vmin)) / (float(norm.vmax) - float(norm.vmin))
            colours = image.cmap(scaled, bytes=True)
        else:
            colours = image.to_rgba(data, bytes=True)
        colours = np.ascontiguousarray(colours).reshape(-1).view(np.uint32)
        return np.take(colours, self.index).view(np.uint8).reshape(*self.index.shape, 4)

    def draw(self, image, renderer):
        """Draw as AxesImage.draw does, with the looked-up picture."""
        gc = renderer.new_gc()
        image._set_gc_clip(gc)
        gc.set_alpha(image._get_scalar_alpha())
        renderer.draw_image(gc, self.left, self.bottom, self.picture(image))
        gc.restore()


class _Overlay:
    """An artist that does not change while the layout stands (a heatmap's frame), blended
    into the pixels exactly as Agg blends it, without drawing it again.

    Agg draws a path by giving each pixel it touches a coverage and blending the path's
    colour in by it. Drawn once on a transparent canvas, the artist leaves that coverage
    in the alpha channel and its colour in the others; from then on a move blends them in
    with Agg's own integer formula (agg_workaround.h). `learn` checks the blend against
    Agg's on random pixels: if they differ anywhere, the artist is drawn the ordinary way.
    """

    def __init__(self, where, colour, alpha):
        self.where, self.colour, self.alpha = where, colour, alpha  # flat pixel numbers; int64

    @classmethod
    def learn(cls, artist, canvas):
        if not _opaque(artist.figure):  # the blend below is Agg's onto opaque pixels only
            return None
        pixels = np.asarray(canvas.buffer_rgba())  # the canvas's own pixels, not a copy
        before = pixels.copy()
        try:
            pixels[:] = 0
            artist.figure.draw_artist(artist)
            drawn = pixels.reshape(-1, 4).astype(np.int64)
            where = np.flatnonzero(drawn[:, 3])
            overlay = cls(where, drawn[where, :3], drawn[where, 3:])
            noise = np.random.default_rng(0).integers(0, 256, pixels.shape, dtype=np.uint8)
            noise[..., 3] = 255
            pixels[:] = noise
            artist.figure.draw_artist(artist)
            agg = pixels.copy()
            pixels[:] = noise
            overlay.draw(canvas)
            same = np.array_equal(pixels, agg)
        finally:
            pixels[:] = before
        return overlay if same else None

    def draw(self, canvas):
        """Blend the artist into opaque pixels: Agg's blend_pix with the destination's alpha 255
        (a pixel it covers wholly with an opaque colour, Agg copies)."""
        pixels = np.asarray(canvas.buffer_rgba()).reshape(-1, 4)
        under = pixels[self.where, :3].astype(np.int64) * 255
        alpha = self.alpha
        total = ((alpha + 255) << 8) - alpha * 255
        blended = (((self.colour << 8) - under) * alpha + (under << 8)) // total
        pixels[self.where, :3] = np.where(alpha == 255, self.colour, blended)


class _Stamps:
    """Pictures of short texts: typeset once, then pasted.

    Typesetting a number (Text.draw) costs about as much as everything else in
    a redraw of a small heatmap. Its picture depends only on its text, colour,
    font and alignment, so each is drawn once on a transparent canvas and
    blended in wherever it is needed, within a pixel of where Text.draw puts it.

    A new number (a slider's drag brings many) is typeset from its glyphs
    (`_from_glyphs`) as Agg's draw_text does, at about a third of the cost of
    drawing it. Each colour and style is first typeset both ways: only if the
    pictures are the same is the quicker way used for it from then on.
    """

    def __init__(self):
        figure = Figure(figsize=(3, 1), facecolor="none")
        FigureCanvasAgg(figure)
        self.sample = figure.text(0.5, 0.5, "")
        self.pictures = {}
        # (font, alignments, dpi) -> its number, and back: hashing a font at every paste is slow
        self.styles, self.style_of = {}, []
        self.fonts = {}  # style -> (its FT2Font, its size, the height and descent of "lp")
        self.quick = {}  # (style, colour) -> True if _from_glyphs gives _typeset's pictures

    def picture(self, text, style):
        """(what to add: 255 x colour x alpha + 0.5 for rounding, what to keep of the pixels
        under it: 1 - alpha, offset of its top left from the anchor), or None.
        `style` is a number from self.styles."""
        colour = text.get_color()
        key = (text.get_text(), colour if isinstance(colour, str) else tuple(colour), style)
        if key not in self.pictures:
            if len(self.pictures) > 5000:  # ~10 MB: start afresh rather than grow without end
                self.pictures.clear()
            self.pictures[key] = self._new(key[0], mpl.colors.to_rgba(colour), style)
        return self.pictures[key]

    def _new(self, string, color, style):
        if _special(string) or not string:
            return None
        quick = self.quick.get((style, color))
        if quick:
            return self._from_glyphs(string, color, style)
        drawn = self._typeset(string, color, *self.style_of[style])
        if quick is None:  # the first text of this colour and style: typeset both ways
            self.quick[style, color] = _same_stamp(drawn, self._from_glyphs(string, color, style))
        return drawn

    def _from_glyphs(self, string, color, style):
        """_typeset's picture of `string`, made as Text.draw lays out one line (Text._get_layout)
        and Agg's draw_text renders it: the glyphs' coverage from FreeType, blended by Agg's
        formula into transparent pixels. Or None."""
        font, ha, va, dpi = self.style_of[style]
        if style not in self.fonts:
            ft = get_font(findfont(font))
            ft.clear()
            ft.set_size(font.get_size_in_points(), dpi)
            ft.set_text("lp", 0, flags=get_hinting_flag())  # a line is at least as tall as "lp"
            lp = ft.get_width_height()[1] / 64, ft.get_descent() / 64
            self.fonts[style] = ft, font.get_size_in_points(), *lp
        ft, size, lp_height, lp_descent = self.fonts[style]
        ft.clear()  # the font is matplotlib's own (shared): set up as RendererAgg._prepare_font does
        ft.set_size(size, dpi)
        ft.set_text(string, 0, flags=get_hinting_flag())
        width, height = (v / 64 for v in ft.get_width_height())
        descent = ft.get_descent() / 64
        height, line_descent = max(height, lp_height), max(descent, lp_descent)
        if ha not in ("left", "center", "right") or va not in ("top", "center", "bottom", "baseline"):
            return None
        # The line's baseline and left end from the anchor (y up), as the alignment puts them.
        x = -{"left": 0, "center": width / 2, "right": width}[ha]
        y = -(height - line_descent) - {"top": 0, "center": -height / 2, "bottom": -height,
                                        "baseline": -height + line_descent}[va]
        ft.draw_glyphs_to_bitmap(antialiased=mpl.rcParams["text.antialiased"])
        x0, y0 = (v / 64 for v in ft.get_bitmap_offset())
        cover = np.asarray(ft.get_image()).astype(np.int32)
        left, bottom = round(x + x0), round(-y + y0 + descent) + 1  # rows count down
        rgba = np.array([int(c * 255 + 0.5) for c in color])  # Agg's colour, in bytes
        product = rgba[3] * cover + 128
        alpha = ((product >> 8) + product) >> 8  # Agg's alpha x coverage
        rows, cols = np.flatnonzero(alpha.any(axis=1)), np.flatnonzero(alpha.any(axis=0))
        if len(rows) == 0:
            return None
        # In bytes, then in float32 as _typeset reads the canvas (its clear pixels are white).
        alpha = alpha[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1, None].astype(np.uint8) / np.float32(255)
        colour = np.where(alpha > 0, rgba[:3].astype(np.uint8) / np.float32(255), np.float32(1))
        return 255 * colour * alpha + 0.5, 1 - alpha, left + cols[0], bottom - cover.shape[0] + rows[0]

    def _typeset(self, string, color, font, ha, va, dpi):
        self.sample.update({"text": string, "color": color, "fontproperties": font,
                            "horizontalalignment": ha, "verticalalignment": va})
        figure, canvas = self.sample.figure, self.sample.figure.canvas
        if figure.dpi != dpi:
            figure.set_dpi(dpi)
        renderer = canvas.get_renderer()
        renderer.clear()  # a transparent canvas with just this text on it
        figure.draw_artist(self.sample)
        alpha = np.asarray(canvas.buffer_rgba())[..., 3]
        rows, cols = np.flatnonzero(alpha.any(axis=1)), np.flatnonzero(alpha.any(axis=0))
        height, width = alpha.shape
        if len(rows) == 0 or rows[0] == 0 or cols[0] == 0 or rows[-1] == height - 1 or cols[-1] == width - 1:
            return None  # nothing to paste, or too big for this canvas: Text.draw will do
        x, y = self.sample.get_transform().transform(self.sample.get_position())
        crop = np.asarray(canvas.buffer_rgba())[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1] / np.float32(255)
        alpha = crop[..., 3:]
        return 255 * crop[..., :3] * alpha + 0.5, 1 - alpha, cols[0] - x, rows[0] - (figure.bbox.height - y)

    def paste(self, text, canvas, anchors=None):
        """Paste `text`; `anchors` remembers where each text's position lands in this layout."""
        if not text.get_visible():
            return
        position = text.get_position()
        anchors = {} if anchors is None else anchors
        anchor = anchors.get(text)
        if anchor is None or anchor[0] != position:
            style = (text.get_fontproperties().copy(), text.get_horizontalalignment(),
                     text.get_verticalalignment(), text.figure.dpi)
            if style not in self.styles:
                self.styles[style] = len(self.style_of)
                self.style_of.append(style)
            style = self.styles[style]
            x, y = text.get_transform().transform(position)
            # Rows count from the top, from the figure's (fractional) height, as matplotlib's Agg does.
            anchor = anchors[text] = position, x, canvas.figure.bbox.height - y, style
        _, x, y_down, style = anchor
        picture = self.picture(text, style)
        if picture is None:
            return text.figure.draw_artist(text)
        add, keep, dx, dy = picture
        left, top = round(x + dx), round(y_down + dy)
        buffer = canvas.buffer_rgba()  # the canvas's own pixels, not a copy
        region = np.asarray(buffer)[max(top, 0):top + add.shape[0], max(left, 0):left + add.shape[1], :3]
        if region.shape[:2] != add.shape[:2]:  # partly off the canvas
            return text.figure.draw_artist(text)
        region[:] = region * keep + add  # blended as Agg blends the text into the pixels


def skip_inline_predraw() -> None:
    """After each cell, pyplot draws every figure that changed (its post_execute hook in
    IPython); the inline backend then draws each new figure twice more to show it (once to
    find its tight bounding box, once for the PNG). Under the inline backend the first draw
    is never seen: this makes the hook skip it there, and draw as before under any other
    (ipympl, a window). About 0.3 s of a notebook's Run All; all the drawing of a run that
    makes no PNGs (nbgrader's, with figure_formats set empty)."""
    import matplotlib.pyplot as plt

    draw_all = plt._draw_all_if_interactive
    if getattr(draw_all, "skips_inline", False):
        return

    def draw_all_unless_inline():
        if "inline" not in mpl.get_backend():
            draw_all()

    draw_all_unless_inline.skips_inline = True
    plt._draw_all_if_interactive = draw_all_unless_inline  # what pyplot registers from now on
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    hooks = shell.events.callbacks.get("post_execute", []) if shell is not None else []
    if draw_all in hooks:  # registered already: swapped in its place
        hooks[hooks.index(draw_all)] = draw_all_unless_inline


def _same_stamp(a, b) -> bool:
    if a is None or b is None:
        return False
    return all(x.shape == y.shape and np.array_equal(x, y) for x, y in zip(a[:2], b[:2])) and a[2:] == b[2:]


def _special(string):
    """Mathtext ($...$) and multi-line texts are typeset by Text.draw, not pasted."""
    return "$" in string or "\n" in string


_STAMPS = _Stamps()


def _opaque(figure) -> bool:
    """True if every pixel is opaque (the figure's background is), so the PNG needs no alpha."""
    return figure.patch.get_visible() and mpl.colors.to_rgba(figure.patch.get_facecolor())[3] == 1


def _encode(rgba: np.ndarray, opaque: bool) -> bytes:
    """PNG bytes of an RGBA picture: each row unfiltered, deflated at level 1.

    Pillow chooses a filter for every row, which takes longer than the
    compression; our pictures are mostly flat colour and compress about as
    well without (and the browser decodes them a little faster).
    """
    height, width, _ = rgba.shape
    channels = 3 if opaque else 4
    rows = np.empty((height, 1 + width * channels), np.uint8)  # each row: filter type 0, then its bytes
    rows[:, 0] = 0
    for k in range(channels):  # a channel at a time: numpy copies 3 of 4 bytes per pixel 8x slower
        rows[:, 1 + k::channels] = rgba[..., k]
    header = struct.pack(">IIBBBBB", width, height, 8, 2 if opaque else 6, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(rows, 1))
            + _chunk(b"IEND", b""))


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


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
