"""Fast redraws of a panel's figure: the drawing tricks behind Panel, in one place.

    png(figure, moving, fresh=False) -> PNG bytes

gives the same picture as drawing the whole figure (tests/test_widgets.py
checks it within a pixel), faster: the parts that never move (axes, tick
labels, titles, colour bars) are drawn once and saved; a slider move puts the
saved picture back and draws only the `moving` artists over it
(matplotlib's "blitting"). Numbers are pasted from pictures typeset once
(`_Stamps`), and the PNG is encoded at a fast compression level.
Pass fresh=True after changing anything outside `moving` (the layout, a title).
The README's performance section says what each trick saves, and how it was measured.
"""

from __future__ import annotations

import contextlib
import io
import weakref

import matplotlib as mpl
import numpy as np
import PIL.Image
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

__all__ = ["png"]

_backgrounds = weakref.WeakKeyDictionary()  # figure -> its saved picture without the moving artists


def png(figure, moving, fresh=False) -> bytes:
    """The figure as PNG bytes, redrawing only `moving` over a saved picture of the rest
    (drawn afresh if `fresh`), with the layout as it is."""
    canvas = figure.canvas
    if figure not in _backgrounds:  # first call: forget the picture whenever anything draws the figure
        canvas.mpl_connect("draw_event", lambda event: _backgrounds.__setitem__(event.canvas.figure, None))
        _backgrounds[figure] = None
    if fresh:
        _backgrounds[figure] = None
    if _backgrounds[figure] is None:
        with _frozen_layout(figure), _hidden(moving):
            canvas.draw()
        _backgrounds[figure] = canvas.copy_from_bbox(figure.bbox)
    else:
        canvas.restore_region(_backgrounds[figure])
    for artist in moving:
        if isinstance(artist, Text):
            _STAMPS.paste(artist, canvas)
        else:
            figure.draw_artist(artist)
    buffer = io.BytesIO()  # compression level 1 of 9: a little bigger, several times faster
    PIL.Image.fromarray(np.asarray(canvas.buffer_rgba())).save(buffer, format="png", compress_level=1)
    return buffer.getvalue()


class _Stamps:
    """Pictures of short texts: typeset once by matplotlib, then pasted.

    Typesetting a number (Text.draw) costs about as much as everything else in
    a redraw of a small heatmap. Its picture depends only on its text, colour,
    font and alignment, so each is drawn once on a transparent canvas and
    blended in wherever it is needed, within a pixel of where Text.draw puts it.
    """

    def __init__(self):
        figure = Figure(figsize=(3, 1), facecolor="none")
        FigureCanvasAgg(figure)
        self.sample = figure.text(0.5, 0.5, "")
        self.pictures = {}

    def picture(self, text):
        """(colour premultiplied by alpha, alpha, offset of its top left from the anchor), or None."""
        key = (text.get_text(), mpl.colors.to_rgba(text.get_color()), text.get_fontproperties(),
               text.get_horizontalalignment(), text.get_verticalalignment(), text.figure.dpi)
        if key not in self.pictures:
            if len(self.pictures) > 5000:  # ~10 MB: start afresh rather than grow without end
                self.pictures.clear()
            self.pictures[key] = self._typeset(*key)
        return self.pictures[key]

    def _typeset(self, string, color, font, ha, va, dpi):
        if _special(string) or not string:
            return None
        self.sample.update({"text": string, "color": color, "fontproperties": font,
                            "horizontalalignment": ha, "verticalalignment": va})
        figure = self.sample.figure
        figure.set_dpi(dpi)
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


def _special(string):
    """Mathtext ($...$) and multi-line texts are typeset by Text.draw, not pasted."""
    return "$" in string or "\n" in string


_STAMPS = _Stamps()


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
