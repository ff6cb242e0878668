"""How far a panel's live picture is from a full draw of its figure.

One measure for two places: tests/test_widgets.py in the test process, and the
slider sweep inside each notebook's kernel (tools/sweep.py sends this module's
source there). Only numpy here, so the kernel can run it.
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
    live, full = live.astype(int), full.astype(int)
    height = full.shape[0]
    numbers = np.zeros(full.shape[:2], bool)
    worst = 0.0
    for text in texts:
        box = text.get_window_extent(renderer)
        rows = slice(int(height - box.y1) - 2, int(height - box.y0) + 3)
        cols = slice(int(box.x0) - 2, int(box.x1) + 3)
        numbers[rows, cols] = True
        a, b = live[rows, cols, :3], full[rows, cols, :3]
        if min(a.shape[:2]) <= 4:  # a text (nearly) off the picture
            continue
        worst = max(worst, min(float(np.abs(np.roll(a, (dy, dx), (0, 1)) - b)[2:-2, 2:-2].mean())
                               for dy in (-1, 0, 1) for dx in (-1, 0, 1)))
    return int(((live != full).any(axis=-1) & ~numbers).sum()), worst
