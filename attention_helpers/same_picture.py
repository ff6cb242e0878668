"""How far a panel's live picture is from a full draw of its figure.

One measure for three places: the fast path's own check of each new layout's first
picture (_fastdraw.Drawer), tests/test_widgets.py, and the slider sweep inside each
notebook's kernel (tools/sweep.py). Only numpy here.
"""

import numpy as np


def visible_texts(figure) -> list:
    """Every text the figure shows (numbers in cells, on bars, beside colour bars, titles)."""
    return [t for t in figure.findobj(lambda a: hasattr(a, "get_text") and hasattr(a, "get_fontproperties"))
            if t.get_visible() and t.get_text() and t.get_alpha() != 0]  # alpha 0: room kept, never seen


def picture_differences(texts, live: np.ndarray, full: np.ndarray, renderer) -> tuple[int, float]:
    """(how many pixels differ outside the boxes of `texts`, the worst text's mean
    difference at its best shift of at most one pixel). Pasted numbers may sit one
    pixel off from where Text.draw puts them; everything else must be identical."""
    if live.shape != full.shape:  # a different layout or size: every pixel differs
        return live.shape[0] * live.shape[1], float("inf")
    height = full.shape[0]  # only the boxes are widened to int (a whole picture: 8 times its bytes)
    numbers = np.zeros(full.shape[:2], bool)
    worst = 0.0
    for text in texts:
        box = text.get_window_extent(renderer)
        rows = slice(int(height - box.y1) - 2, int(height - box.y0) + 3)
        cols = slice(int(box.x0) - 2, int(box.x1) + 3)
        numbers[rows, cols] = True
        a, b = live[rows, cols, :3].astype(int), full[rows, cols, :3].astype(int)
        if min(a.shape[:2]) <= 4:  # a text (nearly) off the picture
            continue
        worst = max(worst, min(float(np.abs(np.roll(a, (dy, dx), (0, 1)) - b)[2:-2, 2:-2].mean())
                               for dy in (-1, 0, 1) for dx in (-1, 0, 1)))
    return int(((live != full).any(axis=-1) & ~numbers).sum()), worst


# A number's mean difference (levels of 0-255, at its best shift) below which it looks the same:
# a pasted number is Text.draw's to the pixel, except where two glyphs touch (matplotlib 3.11
# blends each glyph in on its own: a level here and there). A misplaced number differs by tens.
NUMBER_TOLERANCE = 4


def compare(figure, live: np.ndarray, full: np.ndarray) -> tuple[bool, int, float]:
    """(same, pixels that differ outside the numbers, the worst number's difference): `live`
    shows what `full` shows if no pixel outside the numbers differs and every number is
    within NUMBER_TOLERANCE."""
    outside, worst = picture_differences(visible_texts(figure), live, full, figure.canvas.get_renderer())
    return outside == 0 and worst < NUMBER_TOLERANCE, outside, worst
