"""Slider panels: a move redraws the picture quickly and correctly.

Panel(fast=False) draws every move with matplotlib's ordinary full draw; the
default fast path (_fastdraw) redraws only the artists that change on top of a
saved background and pastes the numbers from ready-made pictures. These tests
pin down that the two paths show the same picture (pixel for pixel, except
that a number may sit one pixel off), that every matplotlib private name the
fast path relies on still exists, and that the scales cover every value the
sliders reach.
"""

import base64
import io
import time
import warnings
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import ipywidgets as W  # noqa: E402
import matplotlib.backends.backend_agg  # noqa: E402
import matplotlib.figure  # noqa: E402
import numpy as np  # noqa: E402
import PIL.Image  # noqa: E402
import pytest  # noqa: E402

import attention_helpers as ah  # noqa: E402
from attention_helpers import _fastdraw  # noqa: E402
from attention_helpers.same_picture import picture_differences, visible_texts  # noqa: E402

TOKENS = ["the", "cat", "sat", "on", "a", "mat"]
X = np.array([[0.9, 0.0, 0.6, 0.0], [0.4, 0.4, 0.5, 0.1], [0.8, 0.0, 0.1, 0.6],
              [0.0, 0.9, 0.0, 0.7], [0.0, 0.0, 0.3, 0.0], [0.1, 0.1, 0.1, 0.0]])
W_Q0 = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5], [-0.5, 0.2]])
W_K0 = np.array([[0.3, 1.0], [1.0, 0.0], [0.0, 0.5], [0.2, -0.4]])


def attention(W_Q, W_K, T=1.0):
    scores = (X @ W_Q) @ (X @ W_K).T / np.sqrt(2)
    return [ah.softmax(scores / T), scores, ah.softmax(scores / T)[0], f"T = {T:.2f}"]


def make_panel(**options):
    views = [dict(kind="heatmap", row_labels=TOKENS, col_labels=TOKENS, title="weights", probabilities=True),
             dict(kind="heatmap", row_labels=TOKENS, col_labels=TOKENS, title="scores"),  # free colour scale
             dict(kind="bars", labels=TOKENS, title="row 0"),
             dict(kind="text")]
    T = W.FloatLogSlider(value=1.0, base=10, min=-1, max=1, step=0.1, description="T")
    return ah.Panel(attention, views, weights={"W_Q": W_Q0, "W_K": W_K0}, controls={"T": T}, **options)


def small_panel(**options):
    views = [dict(kind="heatmap", row_labels=TOKENS, col_labels=TOKENS, probabilities=True),
             dict(kind="text")]
    T = W.FloatLogSlider(value=1.0, base=10, min=-1, max=1, step=0.1, description="T")
    return ah.Panel(lambda W_Q, W_K, T: [attention(W_Q, W_K, T)[0], f"T = {T:.2f}"], views,
                    weights={"W_Q": W_Q0, "W_K": W_K0}, controls={"T": T}, **options)


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(PIL.Image.open(io.BytesIO(png)).convert("RGBA"))


def full_draw(panel) -> np.ndarray:
    """The figure drawn the ordinary way: layout solved, every artist drawn."""
    panel.figure.canvas.draw()
    return np.asarray(panel.figure.canvas.buffer_rgba()).copy()


def assert_same_picture(panel, live: np.ndarray, full: np.ndarray, where=""):
    """`live` is `full` pixel for pixel, except that each number (pasted, not
    typeset) may sit one pixel off: every number looks the same."""
    assert live.shape == full.shape, f"{where}: pictures of different sizes, {live.shape} and {full.shape}"
    outside, worst = picture_differences(visible_texts(panel.figure), live, full,
                                         panel.figure.canvas.get_renderer())
    assert worst < 4, f"{where}: a number looks different from Text.draw's"
    assert outside == 0, f"{where}: {outside} pixels differ outside the numbers"


def test_the_image_widget_carries_the_picture_as_a_data_address():
    # What the page gets: ipywidgets 8 shows a "url" Image as the address itself
    # (no blob: address to load); ipywidgets 7's page gets the PNG bytes.
    panel = make_panel()
    panel.sliders["W_Q[0,0]"].value = 1.5
    assert panel.png.startswith(b"\x89PNG\r\n\x1a\n")
    if int(W.__version__.split(".")[0]) >= 8:
        assert panel.image.format == "url"
        prefix = b"data:image/png;base64,"
        address = bytes(panel.image.value)
        assert address.startswith(prefix)
        assert base64.b64decode(address[len(prefix):], validate=True) == panel.png
    else:
        assert (panel.image.format, bytes(panel.image.value)) == ("png", panel.png)


def ends(slider) -> tuple:
    """A slider's two end values (a FloatLogSlider's min and max are exponents)."""
    if isinstance(slider, W.FloatLogSlider):
        return slider.base ** slider.min, slider.base ** slider.max
    if hasattr(slider, "options"):
        return slider.options[0], slider.options[-1]
    return slider.min, slider.max


def all_at(panel, end) -> dict:
    """Panel.set's arguments that put every slider at its low (0) or high (1) end."""
    values = {name: ends(slider)[end] for name, slider in panel.controls.items()}
    for name, matrix in panel.values().items():
        if name not in values:  # a weight matrix: its entries' sliders share one range
            first = next(s for key, s in panel.sliders.items() if key.startswith(name + "["))
            values[name] = np.full(np.shape(matrix), ends(first)[end])
    return values


def count_full_draws(panel) -> list:
    draws = []
    panel.figure.canvas.mpl_connect("draw_event", lambda event: draws.append(event))
    return draws


def assert_same_as_plain(fast, plain, where=""):
    """The fast panel's picture is the plain one's (matplotlib's full draw), within a pixel."""
    assert (fast.fast, plain.fast) == (True, False)
    assert_same_picture(plain, pixels(fast.png), pixels(plain.png), where)


def move(panels, key, value):
    for panel in panels:
        panel.sliders[key].value = value


def masked_panel(**options):
    """As notebook 05: causal weights with the masked cells drawn as such, and the masked scores."""
    def compute(W_Q, W_K):
        scores = np.where(ah.causal_mask(6), (X @ W_Q) @ (X @ W_K).T / np.sqrt(2), -np.inf)
        return [ah.softmax(scores), scores]
    views = [dict(kind="heatmap", row_labels=TOKENS, col_labels=TOKENS, probabilities=True,
                  mask=ah.causal_mask(6), title="causal weights"),
             dict(kind="heatmap", row_labels=TOKENS, col_labels=TOKENS, title="masked scores")]
    return ah.Panel(compute, views, weights={"W_Q": W_Q0, "W_K": W_K0}, **options)


def cache_panel(**options):
    """As notebook 06: bars on a log value axis of their own, a choice slider, a count slider."""
    h_kv = W.SelectionSlider(options=[1, 2, 4, 8], value=8, description="h_kv")
    tokens = W.IntSlider(value=4096, min=256, max=32768, step=256, description="tokens")
    return ah.Panel(lambda h_kv, tokens: [np.array([8.0, h_kv, 1.0]) * tokens * 2 ** -20, f"{h_kv} KV heads"],
                    [dict(kind="bars", labels=["multi-head", "yours", "MQA"], probabilities=False,
                          ylabel="cache size (GiB, log scale)", fmt=".3f", log=True), dict(kind="text")],
                    controls={"h_kv": h_kv, "tokens": tokens}, figsize=(6, 3.3), **options)


def tiles_panel(**options):
    """As notebook 09: a heatmap of named states (a swatch legend), beside one whose scale follows."""
    steps = W.IntSlider(value=3, min=0, max=6, description="steps")

    def compute(steps):
        done = np.where(np.arange(36).reshape(6, 6) < 6 * steps, 1.0, 0.0) - np.triu(np.ones((6, 6)), 1)
        return [done, np.cumsum(np.ones((6, 2)) * steps, axis=0)]
    states = {2: ("now", "#fde725"), 1: ("done", "#21918c"), 0: ("to come", "#8c9ec4"),
              -1: ("skipped", "#4d4d4d")}
    return ah.Panel(compute, [dict(kind="heatmap", categories=states, title="tiles"),
                              dict(kind="heatmap", title="running sums")],
                    controls={"steps": steps}, **options)


@pytest.mark.slow  # the first weight and the controls one by one, then every slider at once, both ways
@pytest.mark.parametrize("make", [make_panel, small_panel, masked_panel, cache_panel, tiles_panel])
def test_the_fast_path_draws_what_the_plain_full_draw_draws_at_every_slider_end(make):
    fast, plain = make(), make(fast=False)
    assert_same_as_plain(fast, plain, "at the start")
    keys = list(fast.sliders)
    for key in keys[:1] + keys[-2:]:  # the first weight and the controls, each to both ends and back
        start = fast.sliders[key].value
        for value in (*ends(fast.sliders[key]), start):
            move((fast, plain), key, value)
            assert_same_as_plain(fast, plain, f"{key} = {value}")
    for end, where in ((0, "all low"), (1, "all high")):  # every slider at that end, in one redraw
        for panel in (fast, plain):
            panel.set(**all_at(panel, end))
        assert_same_as_plain(fast, plain, where)
    fast.redraw(), plain.redraw()
    assert_same_as_plain(fast, plain, "after redraw()")


@pytest.mark.parametrize("dpi", [72.0, 100.0])  # the live picture's and the notebook's
def test_a_pasted_number_is_the_number_text_draw_draws_in_its_place(dpi):
    """A stamp pasted over a background is Text.draw's number drawn over it, pixel for pixel (the
    paste blends as Agg does), at places a fraction of a pixel apart (matplotlib 3.11 draws
    each glyph to 1/64 of a pixel), for the alignments, sizes, weights and colours the panels
    use, and a translucent colour. Most of them are pasted; those Text.draw draws instead are
    texts whose glyphs overlap (3.11 blends each glyph into a pixel in turn, which one paste
    cannot do: the typesetting's own check finds them)."""
    from matplotlib.font_manager import FontProperties

    figure = matplotlib.figure.Figure(figsize=(3.1, 1.3), dpi=dpi)  # a fractional height in pixels
    matplotlib.backends.backend_agg.FigureCanvasAgg(figure)
    figure.patch.set_facecolor("#3b528b")
    figure.canvas.draw()
    background = figure.canvas.copy_from_bbox(figure.bbox)
    stamps, checked = _fastdraw._Stamps(), 0
    for font in (FontProperties(size=8), FontProperties(size=11, weight="bold")):
        for ha, va in (("center", "center"), ("left", "baseline"), ("right", "top")):
            for colour in ((0, 0, 0, 1), (1, 1, 1, 1), (0.2, 0.4, 0.6, 0.8)):
                for text, x in (("0.125", 0.3), ("\u22121.5", 0.31), ("1e-9", 0.5013), ("the cat", 0.7)):
                    number = figure.text(x, 0.437, text, color=colour, fontproperties=font, ha=ha, va=va)
                    pictures = []
                    for draw in (figure.draw_artist, lambda t: stamps.paste(t, eager=True)):
                        figure.canvas.restore_region(background)
                        draw(number)
                        pictures.append(np.asarray(figure.canvas.buffer_rgba()).astype(int))
                    where = f"{text!r} at x={x}, {font.get_size()} pt {ha}/{va}, {colour}"
                    assert (pictures[0] != np.asarray(background)).any(), where  # the number shows
                    assert np.array_equal(pictures[0], pictures[1]), where
                    number.remove()
                    checked += 1
    assert checked == 2 * 3 * 3 * 4
    pasted = [key[0] for key, picture in stamps.pictures.items() if isinstance(picture, _fastdraw._Picture)]
    assert len(pasted) >= checked * 3 // 4, f"only {len(pasted)} of {checked} pasted"
    assert {"0.125", "\u22121.5", "1e-9"} <= set(pasted)


def test_a_number_moved_by_whole_pixels_is_pasted_from_one_picture_and_drawn_as_text_draw_draws_it():
    """A number's picture depends on where it stands to a fraction of a pixel only: moved by whole
    pixels (as every cell's number is on the pixel grid), it is drawn by Text.draw the first time,
    typeset the second, and that one picture is pasted after, Text.draw's there pixel for pixel.
    At another fraction it is a new number."""
    figure = matplotlib.figure.Figure(figsize=(3.0, 2.0), dpi=72.0)
    matplotlib.backends.backend_agg.FigureCanvasAgg(figure)
    figure.patch.set_facecolor("#21918c")
    figure.canvas.draw()
    background = figure.canvas.copy_from_bbox(figure.bbox)
    stamps = _fastdraw._Stamps()
    grid = 1 / 256  # where plots._OnPixelGrid puts a number, to a fraction of a pixel
    places = [(30 + grid, 40 + grid), (31 + grid, 40 + grid), (107 + grid, 95 + grid),
              (31.5 + grid, 40 + grid)]  # the last: another fraction
    for k, (x, y) in enumerate(places):
        number = figure.text(x, y, "0.37", ha="center", va="center", fontsize=10,
                             transform=matplotlib.transforms.IdentityTransform())
        pictures = []
        for draw in (figure.draw_artist, stamps.paste):
            figure.canvas.restore_region(background)
            draw(number)
            pictures.append(np.asarray(figure.canvas.buffer_rgba()).copy())
        assert (pictures[0] != np.asarray(background)).any()
        assert np.array_equal(pictures[0], pictures[1]), f"at {(x, y)}"
        assert len(stamps.pictures) == (1 if k < 3 else 2), f"at {(x, y)}: {len(stamps.pictures)} pictures"
        typeset = [p for p in stamps.pictures.values() if isinstance(p, _fastdraw._Picture)]
        assert len(typeset) == (0 if k == 0 else 1), f"at {(x, y)}"
        number.remove()


def test_every_matplotlib_function_the_fast_path_calls_is_listed_and_there():
    """INTERNALS is complete: every call the fast path makes into matplotlib, while a panel with
    every kind of chart moves (cells, numbers, masked hatching, a free colour bar, bars, a legend),
    is to a function it lists, and each listed function exists."""
    import importlib
    import os
    import sys
    from pathlib import Path

    mpl_dir = os.path.dirname(matplotlib.__file__)
    ours = _fastdraw.__file__
    lines = Path(ours).read_text().splitlines()
    holders = []
    for where, names in _fastdraw.INTERNALS.items():
        try:
            holders.append((importlib.import_module(where), set(names)))
        except ImportError:
            module, _, cls = where.rpartition(".")
            holders.append((getattr(importlib.import_module(module), cls), set(names)))

    def is_listed(name, receiver, module):
        return any(name in names and (isinstance(receiver, holder) if isinstance(holder, type)
                                      else module == holder.__name__) for holder, names in holders)

    called = set()

    def watch(frame, event, arg):
        caller = frame.f_back if event == "call" else frame
        if caller is None or caller.f_code.co_filename != ours:
            return
        if event == "call" and frame.f_code.co_filename.startswith(mpl_dir):
            name, receiver = frame.f_code.co_name, frame.f_locals.get("self")
            module = frame.f_globals.get("__name__")
        elif event == "c_call" and type(getattr(arg, "__self__", None)).__module__.startswith("matplotlib"):
            name, receiver, module = arg.__name__, arg.__self__, type(arg.__self__).__module__
        else:
            return
        # called by name on the caller's line (not a property read, an operator or a hidden helper)
        if f"{name}(" in lines[caller.f_lineno - 1] and not is_listed(name, receiver, module):
            called.add(f"{type(receiver).__qualname__ if receiver is not None else module}.{name}")

    panels = [make_panel(), masked_panel(), cache_panel(), tiles_panel()]
    sys.setprofile(watch)
    try:
        for panel in panels:
            for key in list(panel.sliders)[:1] + list(panel.sliders)[-1:]:
                for value in ends(panel.sliders[key]):
                    move([panel], key, value)
            panel.redraw()
    finally:
        sys.setprofile(None)
    assert all(panel.fast for panel in panels)
    assert not called, f"_fastdraw calls matplotlib functions INTERNALS does not list: {sorted(called)}"
    assert _fastdraw.missing_internals() == []


def broken_by_a_missing_internal(monkeypatch):
    """As if a matplotlib to come had renamed a private function the fast path relies on."""
    import matplotlib.pyplot as plt
    monkeypatch.delattr(plt, "_draw_all_if_interactive")


def broken_by_a_changed_internal(monkeypatch):
    """As if a matplotlib to come had changed the arguments of a method only blitting uses."""
    def restore_region(self, region, bbox, xy):
        raise AssertionError("not reached")
    monkeypatch.setattr(matplotlib.backends.backend_agg.FigureCanvasAgg, "restore_region", restore_region)


def broken_by_a_raising_draw(monkeypatch):
    def fail(*args):
        raise AttributeError("'RendererAgg' object has no attribute 'draw_image'")
    monkeypatch.setattr(_fastdraw._Cells, "draw", fail)


def broken_by_a_wrong_picture(monkeypatch):
    """As 3.11 did to the stamps of the previous version: every number drawn a pixel too low."""
    typeset = _fastdraw._Stamps._typeset
    monkeypatch.setattr(_fastdraw._Stamps, "_typeset", lambda self, text, x, y: (
        lambda p: p and (p[0], p[1], p[2], p[3] + 1))(typeset(self, text, x, y)))


@pytest.mark.parametrize("breaking", [broken_by_a_missing_internal, broken_by_a_changed_internal,
                                      broken_by_a_raising_draw, broken_by_a_wrong_picture])
def test_a_broken_fast_path_falls_back_to_the_plain_picture_with_one_warning(breaking, monkeypatch):
    monkeypatch.setattr(_fastdraw, "_STAMPS", _fastdraw._Stamps())  # no stamps from other tests
    breaking(monkeypatch)
    plain = make_panel(fast=False)
    with pytest.warns(ah.widgets.FastPathWarning) as caught:
        panel = make_panel()
        for value in (1.5, -2.0, 0.5):
            move([panel, plain], "W_Q[0,0]", value)
            assert np.array_equal(pixels(panel.png), pixels(plain.png)), value
        panel.redraw(), plain.redraw()
        assert np.array_equal(pixels(panel.png), pixels(plain.png))
    assert len([w for w in caught if issubclass(w.category, ah.widgets.FastPathWarning)]) == 1
    assert panel.fast is False and panel.fell_back
    assert "Traceback" not in panel.readout.value and "ah-error" not in panel.readout.value


def test_the_plain_path_draws_each_move_with_one_full_draw():
    panel = small_panel(fast=False)
    draws = count_full_draws(panel)
    for value in (0.5, -0.5, 1.5):
        panel.sliders["W_K[1,0]"].value = value
    assert len(draws) == 3
    assert pixels(panel.png).shape[:2] == (244, 302)


# Run first in the kernel: counts every full draw of a figure, in `draws`.
_COUNT_DRAWS = """\
import matplotlib.pyplot as plt
from matplotlib.figure import Figure
draws = []
_draw = Figure.draw
Figure.draw = lambda self, renderer: (draws.append(1), _draw(self, renderer))[1]
"""


def _draws_per_figure(*cells) -> list[int]:
    """Run `cells` in a fresh kernel (inline backend); the full draws of figures in each (every
    figure shown must have been shown as a picture)."""
    import nbclient
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(_COUNT_DRAWS)]
    for source in cells:
        nb.cells += [nbformat.v4.new_code_cell(source),
                     nbformat.v4.new_code_cell("print(len(draws)); draws.clear()")]
    nbclient.NotebookClient(nb, kernel_name="python3", timeout=120).execute()
    assert all("image/png" in o.get("data", {}) for c in nb.cells[1::2] for o in c.outputs
               if o.output_type == "display_data")
    return [int(c.outputs[0]["text"]) for c in nb.cells[2::2]]


def test_a_weight_slider_moved_on_the_page_is_not_echoed_back_and_a_control_is():
    """ipywidgets 8 echoes each value a page sends back to every page; the panel's weight sliders
    opt out (one message fewer per move on a hub), its controls, the notebook's own, do not."""
    panel = small_panel()
    sent = {key: [] for key in panel.sliders}
    for key, slider in panel.sliders.items():  # what the kernel would send to the page
        slider.comm.send = lambda data=None, buffers=None, log=sent[key], **_: log.append(data)
    before = panel.png
    panel.sliders["W_Q[0,0]"].set_state({"value": 1.5})  # as a page's update message arrives
    panel.sliders["T"].set_state({"value": 0.5})
    assert [m["method"] for m in sent["W_Q[0,0]"]] == [], sent["W_Q[0,0]"]
    assert [m["method"] for m in sent["T"]] == ["echo_update"], sent["T"]
    assert panel.values()["W_Q"][0, 0] == 1.5 and panel.png != before  # the move itself is drawn


@pytest.mark.slow  # two kernels
def test_a_figure_shown_inline_is_drawn_only_for_its_picture():
    # print_figure draws a figure twice for the inline backend's PNG (bbox_inches="tight": once to
    # measure, once to draw); pyplot's post-execute hook drew it once more, unseen, before the helper
    # came in, whether pyplot had set up its hook before the import (here) or does so after it.
    figure = "fig, ax = plt.subplots(layout='constrained'); ax.plot([1, 2, 3])"
    assert _draws_per_figure(figure, "import attention_helpers\n" + figure, figure) == [3, 2, 2]
    # under another backend the hook still draws what changed, as matplotlib does
    other = "plt.switch_backend('agg'); plt.ion()\n" + figure
    assert _draws_per_figure("import attention_helpers", other) == [0, 1]


def image_figure(values, facecolor="white"):
    """A figure with one image (nearest-neighbour cells when upsampled); what moves: the
    image and the frame drawn over its edges."""
    figure = matplotlib.figure.Figure(figsize=(3, 2), dpi=72, facecolor=facecolor)
    matplotlib.backends.backend_agg.FigureCanvasAgg(figure)
    ax = figure.subplots()
    ax.tick_params(length=0)  # as a Heatmap: no tick marks over the frame
    image = ax.imshow(values, aspect="auto")
    return figure, image, [image, *ax.spines.values()]


@pytest.mark.parametrize("facecolor, norm",
                         [("white", "linear"), ("none", "linear"), ("white", "two slopes")])
def test_fast_picture_of_cells_is_the_full_draw_exactly(facecolor, norm):
    """Values beyond the scale and masked (NaN) cells too; a linear scale is coloured by the
    fast path's own arithmetic, any other by matplotlib's."""
    from attention_helpers import _fastdraw

    rng = np.random.default_rng(1)
    figure, image, moving = image_figure(rng.normal(size=(5, 7)), facecolor)
    if norm == "two slopes":
        image.set_norm(matplotlib.colors.TwoSlopeNorm(0.5, -4, 4))
    _fastdraw.png(figure, moving)  # learns which cell each pixel shows
    for _ in range(3):
        values = rng.normal(size=(5, 7)) * 3
        values[rng.random((5, 7)) < 0.2] = np.nan
        image.set_data(values)
        if norm == "linear":
            image.set_clim(-4, 4)
        live = pixels(_fastdraw.png(figure, moving))
        assert np.array_equal(live, full_draw(SimpleNamespace(figure=figure)))
        _fastdraw.png(figure, moving, fresh=True)
    assert (live[..., 3] == 0).any() == (facecolor == "none")  # a see-through figure stays see-through


def test_cells_smaller_than_a_pixel_are_drawn_by_matplotlib_not_looked_up():
    from attention_helpers import _fastdraw

    figure, image, moving = image_figure(np.random.default_rng(2).normal(size=(300, 400)))  # cells < a pixel
    figure.canvas.draw()
    assert _fastdraw._Cells.learn(image, figure.canvas.get_renderer()) is None
    small_figure, small, _ = image_figure(np.eye(3))
    small_figure.canvas.draw()
    assert _fastdraw._Cells.learn(small, small_figure.canvas.get_renderer()) is not None
    image.set_data(np.random.default_rng(3).normal(size=(300, 400)))
    assert np.array_equal(pixels(_fastdraw.png(figure, moving)), full_draw(SimpleNamespace(figure=figure)))


def test_a_move_draws_only_the_moving_parts_when_the_layout_cannot_change():
    panel = small_panel()
    panel.sliders["W_K[1,0]"].value = 0.5  # the first move finds the layout settled (or settles it)
    draws = count_full_draws(panel)
    for value in np.linspace(-2, 2, 9):
        panel.sliders["W_K[1,0]"].value = float(value)
    assert draws == []  # probabilities: fixed colour bar, so the background and layout never change
    panel.redraw()  # an explicit redraw draws everything, then twice more: the new layout's checks
    assert len(draws) == 3


def layout(panel) -> list:
    """Where every Axes (colour bars included) sits in the figure."""
    return [ax.get_position().bounds for ax in panel.figure.axes]


def inside_the_figure(panel) -> bool:
    """Every Axes with its tick labels and titles lies within the figure (nothing clipped)."""
    renderer = panel.figure.canvas.get_renderer()
    fig = panel.figure.bbox
    return all(fig.x0 - 1 <= b.x0 and b.x1 <= fig.x1 + 1 and fig.y0 - 1 <= b.y0 and b.y1 <= fig.y1 + 1
               for b in (ax.get_tightbbox(renderer) for ax in panel.figure.axes))


@pytest.mark.slow  # every slider to both ends
def test_at_every_slider_end_the_scales_cover_the_values():
    panel = make_panel()
    heat_scores, bars = panel.artists[1], panel.artists[2]
    bar_limits = bars.limits
    for key, slider in panel.sliders.items():
        start = slider.value
        for end in ends(slider):
            slider.value = end
            # computed here from the sliders' values, independently of the panel's pictures
            _, scores, row0, _ = attention(**panel.values())
            assert heat_scores.limits == (scores.min(), scores.max()), f"{key} at {end}"
            assert bars.limits[0] <= row0.min() and row0.max() <= bars.limits[1]
            assert inside_the_figure(panel)
        slider.value = start
    assert bars.limits == bar_limits  # the value axis fixed at the start covered every end


def test_a_value_beyond_the_scales_widens_them_instead_of_clipping():
    # compute jumps at 1.5 (between the ends), so the ends alone cannot predict it
    def compute(W_Q):
        jump = 1000 if W_Q[0, 0] == 1.5 else 1
        return [W_Q * jump, W_Q[:, 0] * jump]

    views = [dict(kind="heatmap"), dict(kind="bars", labels="abcd", probabilities=False)]
    panel, plain = (ah.Panel(compute, views, weights={"W_Q": W_Q0}, fast=fast) for fast in (True, False))
    heat, bars = panel.artists
    assert bars.limits == (-2.0, 2.0)  # each entry at either end
    where = layout(panel)
    move((panel, plain), "W_Q[0,0]", 1.5)
    shown = 1000 * np.where(np.arange(8).reshape(4, 2) == 0, 1.5, W_Q0)
    assert heat.limits == (shown.min(), shown.max()) == (-500.0, 1500.0)
    assert bars.limits == (-500.0, 1500.0)
    assert layout(panel) != where  # longer tick labels ("1500"): the layout made room for them
    assert inside_the_figure(panel)
    assert_same_as_plain(panel, plain)


def test_a_fixed_value_axis_keeps_room_for_the_numbers_above_the_bars():
    bars = ah.bar_chart([0.5, 2.0], ["a", "b"], probabilities=False, value_range=(0.0, 4.0))
    assert bars.ax.get_ylim() == pytest.approx((0.0, 4.32))
    bars.update([3.9, 1.0])
    assert bars.ax.get_ylim() == pytest.approx((0.0, 4.32))  # fixed: the layout stays


def test_after_a_burst_of_moves_the_picture_shows_the_last_values():
    panel = small_panel()
    for value in np.linspace(-2, 2, 17):
        panel.sliders["W_K[0,1]"].value = float(value)
    panel.sliders["W_Q[2,0]"].value = -1.5
    fresh = small_panel()
    fresh.set(W_K=panel.values()["W_K"], W_Q=panel.values()["W_Q"])
    assert np.array_equal(pixels(panel.png), pixels(fresh.png))


def test_set_moves_many_sliders_with_one_redraw():
    panel = small_panel()
    drawn = []
    panel.image.observe(lambda change: drawn.append(1), names="value")
    panel.set(W_Q=-W_Q0, W_K=W_K0[::-1], T=0.5)
    assert len(drawn) == 1
    assert np.allclose(panel.values()["W_Q"], -W_Q0) and panel.values()["T"] == 0.5
    assert np.allclose(panel.outputs()[0], attention(-W_Q0, W_K0[::-1], 0.5)[0])


def test_a_move_that_clamps_another_slider_is_computed_once():
    # As in notebook 09: a smaller range for `steps` when `block` grows clamps its value,
    # so the panel hears of two changes for one move.
    block = W.SelectionSlider(options=[1, 2, 4], value=2, description="block")
    steps = W.IntSlider(value=4, min=1, max=4, description="steps")
    block.observe(lambda change: setattr(steps, "max", 4 // change["new"]), names="value")
    computed = []

    def compute(block, steps):
        computed.append((block, steps))
        return [np.full((2, 2), float(block * steps))]

    panel = ah.Panel(compute, [dict(kind="heatmap", row_labels=["a", "b"], col_labels=["a", "b"])],
                     controls={"block": block, "steps": steps})
    plain = ah.Panel(lambda block, steps: [np.full((2, 2), float(block * steps))],
                     [dict(kind="heatmap", row_labels=["a", "b"], col_labels=["a", "b"])],
                     controls={"block": W.IntSlider(value=4, min=1, max=4), "steps": W.IntSlider(value=1)},
                     fast=False)
    computed.clear()
    block.value = 4
    assert steps.value == 1
    assert computed == [(4, 1)]
    steps.value = 1  # no change, no notification
    block.value = 1  # steps keeps its value: one change, one redraw
    assert computed == [(4, 1), (1, 1)]
    plain.set(block=1, steps=1)
    assert_same_as_plain(panel, plain)


@pytest.mark.parametrize("values, message", [
    ({"W_V": np.eye(2)}, "no slider or control named 'W_V'"),
    ({"W_Q": np.eye(2)}, "W_Q must have shape (4, 2), got (2, 2)"),
    ({"W_Q": W_Q0 * 3}, "W_Q has entries outside its sliders' range (-2.0, 2.0)"),
])
def test_set_rejects_bad_names_shapes_and_values_before_moving_anything(values, message):
    panel = small_panel()
    before, picture = panel.values(), panel.png
    with pytest.raises(ValueError) as info:
        panel.set(W_K=-W_K0, **values)  # W_K is fine, but must not move either
    assert message in str(info.value)
    assert all(np.array_equal(np.asarray(panel.values()[k]), np.asarray(v)) for k, v in before.items())
    assert panel.png == picture


@pytest.mark.slow  # every slider to both ends
def test_every_slider_at_both_ends_gives_finite_values_and_no_warning():
    panel = small_panel()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for slider in panel.sliders.values():
            start = slider.value
            for end in (slider.min, slider.max):
                slider.value = slider.base ** end if isinstance(slider, W.FloatLogSlider) else end
                assert np.isfinite(panel.outputs()[0]).all()
            slider.value = start


def test_show_static_draws_at_the_notebook_resolution_and_leaves_the_live_picture_alone(monkeypatch, capsys):
    from IPython.core.pylabtools import print_figure

    static = []  # what the inline backend does with display(figure) in a notebook
    monkeypatch.setattr(ah.widgets, "display", lambda fig: static.append(print_figure(fig, "png")))
    panel = small_panel()
    live = panel.png
    panel.show_static()
    assert "T = 1.00" in capsys.readouterr().out
    assert pixels(static[0]).shape[1] > pixels(live).shape[1]  # 100 dpi, cropped tight
    assert panel.figure.dpi == 72
    panel.sliders["W_Q[1,1]"].value = -1.0
    panel.sliders["W_Q[1,1]"].value = W_Q0[1, 1]
    assert panel.png == live


@pytest.mark.parametrize("make", [small_panel, make_panel])
def test_the_first_move_after_showing_a_panel_draws_only_what_moved(make, monkeypatch, capsys):
    # Solving the layout and drawing every artist is most of a slow move: a panel does it
    # while its cell runs (built, or drawn again at its own resolution after show_static),
    # not on the student's first key press.
    monkeypatch.setattr(ah.widgets, "display", lambda fig: fig.canvas.draw())
    for static in (False, True):
        panel = make()
        if static:
            panel.show_static()
        draws = count_full_draws(panel)
        panel.sliders["W_Q[0,0]"].value = 0.5
        assert draws == [], f"show_static={static}"


def test_moving_a_slider_away_and_back_gives_back_the_same_picture():
    panel = small_panel()
    first = panel.png
    for value in (2.0, -2.0, W_K0[2, 1]):
        panel.sliders["W_K[2,1]"].value = value
    assert panel.png == first
    assert pixels(first).shape[:2] == (244, 302)  # 4.2 x 3.4 inches at 72 dpi


def test_redraw_shows_changes_made_to_the_figure_by_hand():
    panel, plain = make_panel(), make_panel(fast=False)
    for p in (panel, plain):
        p.artists[2].ax.set_xlabel("key")
        p.artists[0].ax.set_title("renamed")
        p.redraw()
    assert_same_as_plain(panel, plain)


def test_an_error_during_a_slider_move_is_shown_in_the_panel_and_raised():
    def compute(W_Q):
        if W_Q[0, 0] > 1.5:
            raise ValueError("W_Q[0,0] is too large for this demo")
        return [W_Q]

    panel = ah.Panel(compute, [dict(kind="heatmap")], weights={"W_Q": W_Q0})
    plain = ah.Panel(compute, [dict(kind="heatmap")], weights={"W_Q": W_Q0}, fast=False)
    with pytest.raises(ValueError, match="too large"):
        panel.sliders["W_Q[0,0]"].value = 2.0
    assert "ah-error" in panel.readout.value and "too large for this demo" in panel.readout.value
    panel.sliders["W_Q[0,0]"].value = W_Q0[0, 0]  # back to the values of the picture shown
    assert "ah-error" not in panel.readout.value
    assert_same_as_plain(panel, plain)


def test_a_slider_moved_from_another_thread_prints_arrays_as_the_notebook_does():
    # JupyterLab 4.6 runs widget callbacks in a kernel subshell thread, where
    # NumPy's print options are the defaults unless the panel brings its own.
    import threading

    with np.printoptions(precision=3, suppress=True):
        panel = ah.Panel(lambda W_Q: [W_Q, str(W_Q / 3)], [dict(kind="heatmap"), dict(kind="text")],
                         weights={"W_Q": W_Q0})
    thread = threading.Thread(target=lambda: setattr(panel.sliders["W_Q[0,0]"], "value", 0.5))
    thread.start()
    thread.join()
    assert "0.167" in panel.readout.value and "0.16666" not in panel.readout.value


def test_slider_values_lose_the_browsers_rounding_noise():
    # In JavaScript -2 + 30 * 0.1 is 1.0000000000000004 and -2 + 20 * 0.1 is 4.4e-16.
    panel = ah.Panel(lambda W_Q: [W_Q], [dict(kind="heatmap")], weights={"W_Q": W_Q0})
    panel.sliders["W_Q[0,0]"].value = 1.0000000000000004
    panel.sliders["W_Q[0,1]"].value = -4.4e-16
    assert panel.values()["W_Q"][0, 0] == 1.0 and panel.values()["W_Q"][0, 1] == 0.0
    assert panel.artists[0].texts[0][1].get_text() == "0.00"  # not -0.00


def test_a_stored_live_panel_reads_as_a_sentence_without_a_kernel():
    panel = make_panel()
    bundle = panel._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle  # JupyterLab shows the live panel
    sentence = bundle["text/plain"]
    assert sentence == ("Live panel (needs a running kernel): move the sliders for W_Q, W_K and T "
                        "and it redraws weights, scores, row 0 and a text read-out. "
                        "The same figure follows below as a static picture.")


def test_every_slider_has_a_visible_label():
    unnamed = W.IntSlider(value=1, min=0, max=3)
    panel = ah.Panel(lambda W_Q, n: [W_Q * n], [dict(kind="heatmap")], weights={"W_Q": W_Q0},
                     controls={"n": unnamed})
    assert unnamed.description == "n"
    assert all(s.description for s in panel.sliders.values())


def test_later_calls_once_per_burst_of_calls_and_not_after_cancel():
    calls = []
    later = _fastdraw.Later(0.05, lambda: calls.append(1))
    for burst in (1, 2):  # the second burst after the first has been answered: a new wait
        for _ in range(5):
            later()
            time.sleep(0.01)
        deadline = time.monotonic() + 5
        while len(calls) < burst and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)  # time for a second call, if there were one
        assert len(calls) == burst
    later()
    later.cancel()
    time.sleep(0.2)
    assert len(calls) == 2


def test_panels_moved_in_two_threads_at_once_show_their_own_pictures():
    """Slider callbacks run in a kernel subshell thread while a cell runs in the main one
    (JupyterLab 4.6, ipykernel 7): two panels drawing at once share the stamps (one sample
    text, behind a lock) and matplotlib's fonts (one FT2Font per thread). Each must still show
    exactly what a full draw of its own figure shows, with no fallback."""
    import sys
    import threading

    # two panels of one size: they share a sample canvas
    panels, plains = [make_panel(), make_panel()], [make_panel(fast=False), make_panel(fast=False)]
    values = np.round(np.linspace(-2, 2, 41), 1)
    errors = []

    def drag(panel, key):
        try:
            for value in values:
                panel.sliders[key].value = float(value)
        except Exception as err:  # pragma: no cover - reported below
            errors.append(err)

    panels[1].set(W_Q=-W_Q0)  # other numbers in the same places
    plains[1].set(W_Q=-W_Q0)
    threads = [threading.Thread(target=drag, args=(p, "W_K[1,0]")) for p in panels]
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # the threads take turns every few bytecodes, not every 5 ms
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(switch)
    assert not errors
    for panel, plain in zip(panels, plains):
        plain.sliders["W_K[1,0]"].value = float(values[-1])
        assert panel.fast, panel.fell_back
        assert_same_as_plain(panel, plain, "after two threads dragged at once")
