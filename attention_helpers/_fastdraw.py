"""Fast redraws of a panel's figure: the drawing tricks behind Panel(fast=True), in one place.

    drawer = Drawer(figure, charts)   # charts: the Heatmaps and Bars drawn in it
    drawer.png() -> PNG bytes         # after each move's chart.update(...)

gives the same picture as matplotlib's ordinary full draw of the figure
(Panel(fast=False)), faster. It checks that itself: the first picture of each layout
(drawn afresh, and again over the saved background, as a move draws it) is
compared with a full draw, and `Mismatch` is raised if they differ (Panel then
draws the plain way for good). The tricks:

- the layout is solved again only when what constrained layout measures
  changed (the extent of a colour bar's labels, a legend appearing);
- the parts that never move (axes, tick labels, titles) are drawn once and
  saved; a slider move puts the saved picture back and draws only the moving
  artists over it (matplotlib's "blitting");
- a heatmap's cells are coloured by table lookup: which cell each pixel shows
  is learned once per layout (`_Cells`), so a move only looks up colours;
- a number is drawn once by Text.draw, and that picture is pasted wherever the same number
  stands at the same fraction of a pixel: in every cell, as plots puts the numbers on a
  pixel grid; a text whose paste would not be Text.draw's picture is drawn by it (`_Stamps`);
- a heatmap's frame and its masked cells' hatching are blended from their coverage, learned
  once per layout and mask (`_Overlay`);
- the PNG is written without row filters at zlib level 1 (`_encode`);
- `Later` sends the picture's text alternative once a slider rests, not per step;
- `skip_inline_predraw` spares every figure shown inline a draw no one sees.

This is the one module that reaches below matplotlib's artists. INTERNALS lists every
matplotlib function it calls; a Drawer checks that each is still there before it starts
(tests/test_widgets.py checks that the list is complete). benchmarks/README.md says
what each trick saves, and how it was measured.
"""

from __future__ import annotations

import contextlib
import importlib
import math
import struct
import threading
import time
import weakref
import zlib

import matplotlib as mpl
import numpy as np
from matplotlib.axis import Axis
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PolyCollection
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.spines import Spine
from matplotlib.text import Text
from matplotlib.transforms import IdentityTransform

from .same_picture import compare

__all__ = ["Drawer", "Later", "Mismatch", "png", "moving", "skip_inline_predraw"]

# Every matplotlib function this module calls, where it is looked up: the private ones
# (underscore) and the public ones alike, since a change to any of them can change the
# picture. Drawer checks that each is still there; tests/test_widgets.py watches the fast
# path draw and fails if it calls one that is not listed.
INTERNALS = {
    "matplotlib.artist.Artist": ["get_alpha", "get_clip_box", "get_clip_on", "get_clip_path", "get_transform",
                                 "get_visible", "set_clip_on", "set_visible"],
    "matplotlib.axes.Axes": ["get_position"],
    "matplotlib.axis.Axis": ["_update_ticks"],
    "matplotlib.axis.Tick": ["get_visible"],
    "matplotlib.backend_bases.FigureCanvasBase": ["mpl_connect"],
    "matplotlib.backend_bases.GraphicsContextBase": ["restore", "set_alpha"],
    "matplotlib.backends.backend_agg.FigureCanvasAgg": [
        "buffer_rgba", "copy_from_bbox", "draw", "get_renderer", "restore_region"],
    "matplotlib.backends.backend_agg.RendererAgg": ["clear", "get_image_magnification", "new_gc"],
    "matplotlib.backends._backend_agg.RendererAgg": ["draw_image"],
    "matplotlib.collections.Collection": ["get_paths"],
    "matplotlib.colors": ["to_rgba"],
    "matplotlib.colors.Colormap": ["__call__"],
    "matplotlib.figure.Figure": ["draw_artist", "get_layout_engine", "get_size_inches", "set_layout_engine",
                                 "text"],
    "matplotlib.font_manager.FontProperties": ["copy"],
    "matplotlib.image.AxesImage": ["_get_scalar_alpha", "_set_gc_clip", "get_array", "get_cmap",
                                   "make_image", "set_data", "to_rgba"],
    "matplotlib.layout_engine.LayoutEngine": ["execute"],
    "matplotlib.patches.Patch": ["get_facecolor"],
    "matplotlib.pyplot": ["_draw_all_if_interactive", "get_backend"],
    "matplotlib.text.Text": ["get_color", "get_fontproperties", "get_fontsize", "get_horizontalalignment",
                             "get_position", "get_rotation", "get_text", "get_verticalalignment",
                             "get_window_extent", "set_position", "set_text", "set_transform",
                             "update_from"],
    "matplotlib.transforms.Transform": ["transform"],
}


def missing_internals() -> list:
    """The INTERNALS this matplotlib no longer has (callable), as "module.Class.name"."""
    missing = []
    for where, names in INTERNALS.items():
        try:
            holder = importlib.import_module(where)
        except ImportError:
            module, _, cls = where.rpartition(".")
            holder = getattr(importlib.import_module(module), cls, None)
        missing += [f"{where}.{name}" for name in names if not callable(getattr(holder, name, None))]
    return missing


class Mismatch(Exception):
    """The fast picture of a layout is not the picture a full draw gives."""


class Drawer:
    """The fast picture of one figure whose `charts` (Heatmaps, Bars) change from move to move."""

    def __init__(self, figure, charts):
        missing = missing_internals()
        if missing:
            raise Mismatch(f"this matplotlib ({mpl.__version__}) no longer has {', '.join(missing)}")
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
            pixels = draw(figure, moving(self.charts), fresh=True).copy()
            self._check(pixels)
            # and as the next move will draw it, over the saved background: checked as well
            self._check(draw(figure, moving(self.charts)).copy())
            self._solved, self._draws_seen = self._measured(), self._draws
            return encode(figure, pixels)
        return encode(figure, draw(figure, moving(self.charts), ticks=ticks))

    def _check(self, pixels):
        """Raise Mismatch unless `pixels`, a fast picture of a new layout (drawn afresh, and
        over the saved background), is what a full draw of the figure in that layout gives
        (numbers within same_picture's tolerance)."""
        figure, saved = self.figure, _saved[self.figure]
        try:
            with _frozen_layout(figure):
                figure.canvas.draw()
            full = np.asarray(figure.canvas.buffer_rgba())
            same, outside, worst = compare(figure, pixels, full)
        finally:
            _saved[figure] = saved  # this draw leaves the saved background as it was
        if not same:
            raise Mismatch(f"with matplotlib {mpl.__version__} the fast picture differs from a full draw: "
                           f"{outside} pixels outside the numbers, the worst number by {worst:.1f}")

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
    return encode(figure, draw(figure, moving, fresh, ticks))


def encode(figure, pixels) -> bytes:
    return _encode(pixels, opaque=_opaque(figure))


def draw(figure, moving, fresh=False, ticks=None) -> np.ndarray:
    """png's picture as the canvas's own RGBA pixels (not a copy)."""
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
            _STAMPS.paste(artist, saved.anchors, eager=fresh)
        elif isinstance(artist, Axis):
            _draw_axis(artist, canvas, saved.anchors, (ticks or {}).get(artist), eager=fresh)
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
    return np.asarray(canvas.buffer_rgba())


def _outline(collection) -> bytes:
    """The vertices of a collection's polygons: the same bytes draw the same hatching."""
    paths = collection.get_paths()
    return np.concatenate([path.vertices.ravel() for path in paths]).tobytes() if paths else b""


def _draw_axis(axis, canvas, anchors, ticks=None, eager=False):
    """Draw an Axis as Axis.draw does, its tick labels pasted (an offset text: Axis.draw itself)."""
    ticks = axis._update_ticks() if ticks is None else ticks
    if not axis.get_visible() or axis.offsetText.get_text() or axis.label.get_text():
        return axis.figure.draw_artist(axis)
    shown = [tick for tick in ticks if tick.get_visible()]
    for tick in shown:
        for line in (tick.gridline, tick.tick1line, tick.tick2line):
            if line.get_visible():
                axis.figure.draw_artist(line)
    for tick in shown:
        for label in (tick.label1, tick.label2):
            _STAMPS.paste(label, anchors, eager)  # found again whenever its tick moves


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
            colours = image.get_cmap()(scaled, bytes=True)
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
        _blend(np.asarray(canvas.buffer_rgba()).reshape(-1, 4), self.where, self.colour, self.alpha)


def _blend(pixels, where, colour, alpha):
    """Agg's blend_pix into opaque `pixels` (n x 4) at `where`: `colour` (n x 3) at `alpha`
    (n x 1), both int64, as drawn on a transparent canvas (agg_workaround.h)."""
    under = pixels[where, :3].astype(np.int64) * 255
    total = ((alpha + 255) << 8) - alpha * 255
    blended = (((colour << 8) - under) * alpha + (under << 8)) // total
    pixels[where, :3] = np.where(alpha == 255, colour, blended)


class _Stamps:
    """Pictures of short texts: drawn by Text.draw, then pasted.

    Drawing a number (Text.draw) costs about as much as everything else in a redraw of
    a small heatmap. Its picture depends on its text, colour, font and alignment, and on
    where it stands to a fraction of a pixel (matplotlib 3.11 places each glyph to 1/64 of
    a pixel), not on the whole pixels: moved by whole pixels, FreeType draws the same
    glyphs moved by as much. A heatmap puts every cell's number at the same fraction
    (plots._OnPixelGrid), so one picture of "0.25" serves every cell that shows it.

    The first time a number is seen at its fraction, Text.draw draws it, and the pixels
    under it are kept, before and after. The second time, it is typeset: drawn by Text.draw
    on a transparent canvas of the figure's size, and that picture pasted over the kept
    pixels must give what Text.draw gave there; if not (where two glyphs overlap, Agg blends
    each in turn, a paste blends once), Text.draw draws that text every time. A number typeset
    before it is seen (`eager`: the first picture of a layout) is checked the same way over
    two noisy backgrounds.
    """

    def __init__(self):
        self.canvases = {}  # (figure size, dpi) -> a transparent figure of that size with one Text
        self.pictures = {}  # key -> a picture, None (Text.draw draws it), or _Seen
        self.styles = {}  # (font, alignments, rotation, alpha) -> a number (hashing a font is slow)
        self.lock = threading.Lock()  # cells in the kernel's main thread and slider callbacks in a
        # subshell thread both paste: one sample text, drawn by one of them at a time

    def paste(self, text, anchors=None, eager=False):
        """Paste `text` (or draw it); `anchors` remembers where each text's position lands in
        this layout."""
        if not text.get_visible():
            return
        position = text.get_position()
        anchors = {} if anchors is None else anchors
        anchor = anchors.get(text)
        if anchor is None or anchor[0] != position:
            x, y = text.get_transform().transform(position)
            style = (text.get_fontproperties().copy(), text.get_horizontalalignment(),
                     text.get_verticalalignment(), text.get_rotation(), text.get_alpha())
            style = self.styles.setdefault(style, len(self.styles))
            figure = text.figure
            # (_blend is Agg's blend onto opaque pixels only)
            anchor = anchors[text] = (position, float(x), float(y), style, tuple(figure.bbox.size),
                                      figure.dpi, _opaque(figure))
        if not anchor[-1] or not text.get_text() or _special(text.get_text()) or text.get_rotation() != 0:
            return text.figure.draw_artist(text)
        colour = text.get_color()
        x, y = anchor[1], anchor[2]
        column, row = math.floor(x), math.floor(y)
        key = (text.get_text(), colour if isinstance(colour, str) else tuple(colour), x - column,
               y - row, *anchor[3:])
        pixels = np.asarray(text.figure.canvas.buffer_rgba())  # the canvas's own pixels
        with self.lock:
            found = self.pictures.get(key)
            if found is None and key not in self.pictures:
                if len(self.pictures) > 5000:  # ~10 MB: start afresh rather than grow without end
                    self.pictures.clear()
                if not eager:  # the first time: Text.draw draws it, the pixels are kept
                    self.pictures[key] = _Seen.watch(text, pixels, x, y)
                    return
                found = self.pictures[key] = self._typeset(text, x, y)
            elif isinstance(found, _Seen):
                found = self.pictures[key] = self._typeset(text, x, y, found)
        where = None if found is None else found.place(text, column, row, pixels.shape)
        if where is None:
            return text.figure.draw_artist(text)
        found.blend_into(pixels, *where)

    def _typeset(self, text, x, y, seen=None):
        """Text.draw's picture of `text` with its anchor at pixel (x, y), y up, unclipped, checked
        against `seen` (or over noise); or None."""
        figure = text.figure
        size = (tuple(figure.get_size_inches()), figure.dpi)
        if size not in self.canvases:
            blank = Figure(figsize=size[0], dpi=size[1], facecolor="none")
            FigureCanvasAgg(blank)
            self.canvases[size] = blank.text(0, 0, "", transform=IdentityTransform())
        sample = self.canvases[size]
        sample.update_from(text)  # colour, font, alignment, rotation, clipping; and the transform:
        sample.set_transform(IdentityTransform())  # the sample's anchor is given in pixels
        sample.set_clip_on(False)  # where it is pasted, its own clipping is checked
        sample.set_text(text.get_text())
        sample.set_position((x, y))
        canvas = sample.figure.canvas
        sample.figure.draw_artist(sample)
        pixels = np.asarray(canvas.buffer_rgba())  # the canvas's own pixels
        window = _window(text, pixels.shape, x, y)
        band = pixels[window].copy()
        pixels[window] = 0
        picture = _Picture.crop(band, window, x, y)
        if picture is None:
            canvas.get_renderer().clear()  # it may reach beyond the window
            return None  # nothing to paste, or at the window's edge: Text.draw will do
        if seen is not None:
            return picture if seen.shows(picture) else None
        for noise in _noises(band.shape):
            pixels[window] = noise
            sample.figure.draw_artist(sample)
            drawn = pixels[window].copy()
            pixels[window] = 0
            if not np.array_equal(picture.over(noise, window, x, y), drawn):
                return None
        return picture


def _window(text, shape, x, y):
    """The pixels around anchor (x, y), y up, that a short text stays within: a few font
    sizes up and down, and four times as far left and right."""
    reach = int(3 * text.get_fontsize() * text.figure.dpi / 72) + 2
    height, width = shape[:2]
    return (slice(max(int(height - y) - reach, 0), min(int(height - y) + reach, height)),
            slice(max(int(x) - 4 * reach, 0), min(int(x) + 4 * reach, width)))


class _Picture:
    """A text as drawn on a transparent canvas: the pixels it covers (`where`, in a box of
    `shape`), their colour and alpha, and its top-left pixel from its anchor's pixel."""

    def __init__(self, shape, where, colour, alpha, top, left):
        self.shape, self.where, self.colour, self.alpha, self.top, self.left = \
            shape, where, colour, alpha, top, left

    @classmethod
    def crop(cls, band, window, x, y):
        """The picture in `band` (the pixels of `window`), or None if it is empty or touches
        the window's edge (it may reach beyond)."""
        alpha = band[..., 3]
        rows, cols = np.flatnonzero(alpha.any(axis=1)), np.flatnonzero(alpha.any(axis=0))
        if len(rows) == 0 or rows[0] == 0 or rows[-1] == band.shape[0] - 1 or cols[0] == 0 \
                or cols[-1] == band.shape[1] - 1:
            return None
        crop = band[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1].reshape(-1, 4).astype(np.int64)
        where = np.flatnonzero(crop[:, 3])
        shape = (rows[-1] - rows[0] + 1, cols[-1] - cols[0] + 1)
        return cls(shape, where, crop[where, :3], crop[where, 3:],
                   window[0].start + rows[0] + math.floor(y), window[1].start + cols[0] - math.floor(x))

    def place(self, text, column, row, shape):
        """(top, left) of the picture for an anchor in pixel (column, row), y up, in a canvas of
        `shape`; None where Text.draw must draw it (beyond the canvas, or clipped)."""
        top, left = self.top - row, self.left + column
        if top < 0 or left < 0 or top + self.shape[0] > shape[0] or left + self.shape[1] > shape[1]:
            return None
        if text.get_clip_on() and (text.get_clip_path() is not None or not _inside(
                text.get_clip_box(), left, top, self.shape, shape[0])):
            return None  # clipped here: Text.draw clips it
        return top, left

    def over(self, pixels, window, x, y):
        """A copy of `pixels` (the opaque pixels of `window`) with the picture pasted for the
        anchor (x, y), or None if it does not lie within them."""
        top = self.top - math.floor(y) - window[0].start
        left = self.left + math.floor(x) - window[1].start
        if top < 0 or left < 0 or top + self.shape[0] > pixels.shape[0] \
                or left + self.shape[1] > pixels.shape[1]:
            return None
        pasted = pixels.copy()
        self.blend_into(pasted, top, left)
        return pasted

    def blend_into(self, pixels, top, left):
        """Blend the picture into opaque `pixels` with its top-left pixel at (top, left), as Agg
        blends the text into them."""
        region = pixels[top:top + self.shape[0], left:left + self.shape[1]]
        flat = region.reshape(-1, 4)  # a copy where the region is not contiguous (always: it is a crop)
        _blend(flat, self.where, self.colour, self.alpha)
        region[:] = flat.reshape(region.shape)


class _Seen:
    """A text drawn once by Text.draw: the pixels around it before and after."""

    def __init__(self, window, x, y, before, after):
        self.window, self.x, self.y, self.before, self.after = window, x, y, before, after

    @classmethod
    def watch(cls, text, pixels, x, y):
        window = _window(text, pixels.shape, x, y)
        before = pixels[window].copy()
        text.figure.draw_artist(text)
        return cls(window, x, y, before, pixels[window].copy())

    def shows(self, picture) -> bool:
        """True if `picture` pasted over the pixels before gives the pixels after."""
        pasted = picture.over(self.before, self.window, self.x, self.y)
        return pasted is not None and np.array_equal(pasted, self.after)


_NOISES = {}  # shape -> the two noise pictures


def _noises(shape):
    """Two pictures of opaque pixels of random colours, each pixel's colours in one the
    complement of the other's; the same for the same shape (made once)."""
    if shape not in _NOISES:
        noise = np.random.default_rng(0).integers(0, 256, shape, dtype=np.uint8)
        noise[..., 3] = 255
        inverse = 255 - noise
        inverse[..., 3] = 255
        _NOISES[shape] = (noise, inverse)
    return _NOISES[shape]


def _inside(box, left, top, shape, height) -> bool:
    """True if the pixels from (left, top), y down, of `shape` lie a pixel or more inside
    `box` (display coordinates, y up), so that clipping to it changes none of them."""
    return box is None or (box.x0 + 1 <= left and left + shape[1] + 1 <= box.x1
                           and box.y0 + 1 <= height - top - shape[0] and height - top + 1 <= box.y1)


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
