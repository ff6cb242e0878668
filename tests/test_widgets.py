"""Slider panels in the kernel: what a move sends, and the static twin it keeps.

A panel's live picture is drawn in the browser (attention_helpers/browser_view.js) from what
the kernel sends: the layout once, then per move one message with the charts' numbers. These
tests read those messages and check them against values computed here from the sliders,
and against the panel's matplotlib figure (its static twin) as matplotlib itself draws it.
What the browser makes of them is tests/test_browser_view.py's (without JupyterLab) and
tests/test_browser.py's (in JupyterLab). Where the browser cannot draw, the panel draws in
the kernel: that fallback is tested here too.
"""

import base64
import io
import threading
import warnings

import matplotlib

matplotlib.use("Agg")

import ipywidgets as W  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import PIL.Image  # noqa: E402
import pytest  # noqa: E402

import attention_helpers as ah  # noqa: E402
from attention_helpers import browser_view, widgets  # noqa: E402

TOKENS = ["the", "cat", "sat", "on", "a", "mat"]
X = np.array([[0.9, 0.0, 0.6, 0.0], [0.4, 0.4, 0.5, 0.1], [0.8, 0.0, 0.1, 0.6],
              [0.0, 0.9, 0.0, 0.7], [0.0, 0.0, 0.3, 0.0], [0.1, 0.1, 0.1, 0.0]])
W_Q0 = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5], [-0.5, 0.2]])
W_K0 = np.array([[0.3, 1.0], [1.0, 0.0], [0.0, 0.5], [0.2, -0.4]])
IPYWIDGETS_8 = int(W.__version__.split(".")[0]) >= 8


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


def cache_panel(**options):
    """As notebook 06: bars on a log value axis of their own, a choice slider, a count slider."""
    h_kv = W.SelectionSlider(options=[1, 2, 4, 8], value=8, description="h_kv")
    tokens = W.IntSlider(value=4096, min=256, max=32768, step=256, description="tokens")
    return ah.Panel(lambda h_kv, tokens: [np.array([8.0, h_kv, 1.0]) * tokens * 2 ** -20, f"{h_kv} KV heads"],
                    [dict(kind="bars", labels=["multi-head", "yours", "MQA"], probabilities=False,
                          ylabel="cache size (GiB, log scale)", fmt=".3f", log=True), dict(kind="text")],
                    controls={"h_kv": h_kv, "tokens": tokens}, figsize=(6, 3.3), **options)


def sent_messages(widget) -> list:
    """Every message the kernel sends `widget`'s page from now on: (data, buffers)."""
    log = []

    def send(data=None, buffers=None, **_):
        log.append((data, [bytes(b) for b in buffers or ()]))
    widget.comm.send = send
    return log


def numbers(view) -> np.ndarray:
    """The charts' numbers the view was last sent, as the page reads them (float64, little-endian)."""
    return np.frombuffer(view.values, dtype="<f8")


def shown(panel) -> list:
    """The charts' numbers in the view, cut back into one array per chart."""
    flat, out, k = numbers(panel.view), [], 0
    for artist in panel.artists:
        if artist is not None:
            size = int(np.prod(artist.shape)) if isinstance(artist, ah.Heatmap) else len(artist.bars)
            out.append(flat[k:k + size].reshape(artist.shape if isinstance(artist, ah.Heatmap) else -1))
            k += size
    return out


# ---- what a move sends --------------------------------------------------------------------

def test_a_move_sends_one_message_of_numbers_and_not_the_layout():
    panel = make_panel()
    log = sent_messages(panel.view)
    panel.sliders["W_Q[0,0]"].value = 1.5
    assert len(log) == 1, [m["state"].keys() for m, _ in log]
    message, buffers = log[0]
    assert message["method"] == "update" and message["buffer_paths"] == [["values"]]
    assert set(message["state"]) == {"extras"}
    assert "spec" not in message["state"]  # the layout went once, when the panel was made
    assert len(buffers) == 1 and len(buffers[0]) == 8 * (36 + 36 + 6)  # two 6x6 heatmaps and 6 bars, float64
    expected = attention(W_Q0 + np.where(np.arange(8).reshape(4, 2) == 0, 0.5, 0), W_K0)  # computed here
    weights, scores, bars = (np.frombuffer(buffers[0], "<f8")[a:b] for a, b in ((0, 36), (36, 72), (72, 78)))
    assert np.allclose(weights, np.ravel(expected[0])) and np.allclose(scores, np.ravel(expected[1]))
    assert np.allclose(bars, expected[2])
    assert panel.view.extras["texts"] == ["T = 1.00"]


def test_a_move_that_changes_nothing_the_page_shows_sends_nothing():
    panel = small_panel()
    panel.sliders["W_Q[0,0]"].value = 1.5
    log = sent_messages(panel.view)
    panel.sliders["W_Q[0,0]"].value = 1.5  # the same value again: traitlets does not notify
    assert log == []


def test_the_layout_says_where_each_chart_stands_as_the_figure_draws_it():
    panel = make_panel()
    spec, fig = panel.view.spec, panel.figure
    width, height = fig.canvas.get_width_height()
    assert (spec["width"], spec["height"]) == (width, height) == (int(12.6 * 72), int(3.4 * 72))
    for chart, artist in zip(spec["charts"], [a for a in panel.artists if a is not None]):
        size = (fig.bbox.width, fig.bbox.height) * 2  # the figure's own size, a fraction of a pixel more
        x0, y0, w, h = (v * s for v, s in zip(artist.ax.get_position().bounds, size))
        assert chart["box"] == pytest.approx([x0, height - y0 - h, w, h], abs=0.01)  # y from the top
        assert chart["title"]["text"] == artist.ax.get_title()
    heat = spec["charts"][1]
    assert [t["text"] for t in heat["xticks"]] == TOKENS == [t["text"] for t in heat["yticks"]]
    assert heat["lut"] == [matplotlib.colors.to_hex(c) for c in plt.get_cmap("viridis")(np.arange(256))]
    assert heat["scale"] is None  # free: each move sends its ends
    assert spec["charts"][0]["scale"]["lo"] == 0.0 and spec["charts"][0]["scale"]["hi"] == 1.0


def contrast(a, b) -> float:
    """WCAG's contrast ratio of two colours, worked out here from its definition."""
    def luminance(c):
        r, g, b = (x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4 for x in c[:3])
        return 0.2126 * r + 0.7152 * g + 0.0722 * b
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@pytest.mark.parametrize("cmap", ["viridis", "RdBu_r", "twilight"])
def test_every_number_is_written_in_the_ink_that_stands_out_on_its_cell(cmap):
    colours = plt.get_cmap(cmap)(np.arange(256))
    _, ink = browser_view._colours(colours)
    for colour, letter in zip(colours, ink):
        chosen, other = ((0, 0, 0), (1, 1, 1)) if letter == "b" else ((1, 1, 1), (0, 0, 0))
        assert contrast(colour, chosen) >= 4.5  # WCAG AA for text, on every colour of the map
        assert contrast(colour, chosen) >= contrast(colour, other) - 1e-9
    heat = ah.heatmap(np.linspace(0, 1, 12).reshape(3, 4), cmap=cmap)  # the static twin writes the same
    for (i, j), t in np.ndenumerate(np.array(heat.texts, dtype=object)):
        rgba = heat.image.to_rgba(heat.image.get_array()[i, j])
        assert matplotlib.colors.to_rgb(t.get_color()) == ((0, 0, 0) if ah.plots.ink_for(rgba) == "black"
                                                           else (1, 1, 1))
    plt.close("all")


def colourbar_labels(artist) -> list[str]:
    """The colour bar's tick labels as matplotlib draws them on the static twin."""
    artist.ax.figure.canvas.draw()
    low, high = (0, 1)
    return [t.get_text() for t in artist.colorbar.ax.yaxis.get_ticklabels()
            if t.get_visible() and t.get_text() and low <= t.get_position()[1] <= high]


def test_a_free_colour_scale_sends_its_ends_and_the_static_twins_tick_labels():
    panel = make_panel()
    for value in (-2.0, 0.7, 2.0):
        panel.sliders["W_K[1,0]"].value = value
        scores = attention(**panel.values())[1]  # computed here
        scale = panel.view.extras["scales"]["1"]
        assert (scale["lo"], scale["hi"]) == (scores.min(), scores.max())
        panel.full_draw_png()  # the static twin at these values
        assert [t["text"] for t in scale["ticks"]] == colourbar_labels(panel.artists[1])
    assert "scores" in panel.view.spec["caption"] and "weights" not in panel.view.spec["caption"]


def drawn_value_ticks(bars) -> list[str]:
    """The value axis' tick labels as matplotlib draws them on the static twin."""
    ax = bars.ax
    ax.figure.canvas.draw()
    where = [ax.transData.transform((0, t.get_position()[1]))[1] for t in ax.get_yticklabels()]
    return [t.get_text() for t, y in zip(ax.get_yticklabels(), where)  # those on the axis, to half a pixel
            if ax.bbox.y0 - 0.5 <= y <= ax.bbox.y1 + 0.5]


def test_a_value_axis_has_the_static_twins_ticks_and_widens_with_them():
    def compute(W_Q):
        jump = 1000 if W_Q[0, 0] == 1.5 else 1  # between the ends: no end predicts it
        return [W_Q[:, 0] * jump]

    panel = ah.Panel(compute, [dict(kind="bars", labels="abcd", probabilities=False)], weights={"W_Q": W_Q0})
    bars = panel.artists[0]

    def static_ticks():
        return drawn_value_ticks(bars)

    start = panel.view.spec["charts"][0]["scale"]
    assert [t["text"] for t in start["ticks"]] == static_ticks()
    panel.sliders["W_Q[0,0]"].value = 1.5
    widened = panel.view.extras["scales"]["0"]
    assert (widened["lo"], widened["hi"]) == bars.ax.get_ylim() and widened["hi"] > 1500
    assert [t["text"] for t in widened["ticks"]] == static_ticks()


def test_a_log_axis_sends_the_static_twins_decades_and_its_minor_ticks_unlabelled():
    panel = cache_panel()
    axis = panel.view.spec["charts"][0]["scale"]
    major = [t for t in axis["ticks"] if not t.get("minor")]
    minor = [t for t in axis["ticks"] if t.get("minor")]
    assert [t["text"] for t in major] == drawn_value_ticks(panel.artists[0])
    low, high = panel.artists[0].ax.get_ylim()  # 1e-05 to 0.56 (256 tokens, one KV head, to 32768 and 8)
    decades = [10.0 ** k for k in range(int(np.ceil(np.log10(low))), int(np.floor(np.log10(high))) + 1)]
    assert [t["value"] for t in major] == pytest.approx(decades, rel=1e-9)
    steps = [m * d for d in decades for m in range(2, 10) if low <= m * d <= high]  # 2 ... 9 times a decade
    assert [t["value"] for t in minor] == pytest.approx(steps, rel=1e-9)
    assert all(t["text"] == "" for t in minor)


def test_scales_chosen_from_the_sliders_cover_every_end_and_stay_put():
    def compute(X):
        return [X, X + 2 * np.tanh(X @ X.T) @ X]  # an input and a wider, signed result

    views = [dict(kind="heatmap", title=t, diverging=True, scale="shared") for t in ("X", "X1")]
    X0 = np.array([[0.5, -0.2], [0.1, 0.8]])
    panel = ah.Panel(compute, views, weights={"X": X0}, value_range=(-1, 1))
    (lo, hi), (lo1, hi1) = (a.limits for a in panel.artists)
    assert (lo, hi) == (lo1, hi1) and lo == -hi  # one scale for both, centred on 0
    for key, slider in panel.sliders.items():  # every end, computed here
        for end in (slider.min, slider.max):
            for result in compute(panel.values({key: end})["X"]):
                assert lo <= result.min() and result.max() <= hi
    assert "extras" not in panel.view.spec and panel.view.extras.get("scales") is None
    assert panel.view.spec["caption"] == ""  # every scale is fixed: nothing to warn of
    with pytest.raises(ValueError, match="scale='sliders' chooses vmin and vmax itself"):
        ah.Panel(compute, [dict(kind="heatmap", scale="sliders", vmin=0, vmax=1), dict(kind="heatmap")],
                 weights={"X": X0})


def test_a_number_format_the_browser_cannot_write_is_refused_at_once():
    with pytest.raises(ValueError, match=r"format like '\.2f'; got fmt='\.2e'"):
        ah.Panel(lambda W_Q: [W_Q], [dict(kind="heatmap", fmt=".2e")], weights={"W_Q": W_Q0})


# ---- bad input: a message in the panel, never a broken picture ------------------------------

@pytest.mark.parametrize("bad, message", [
    (lambda W: W + np.inf, "got +inf"),
    (lambda W: W[:2], "needs values of shape (4, 2), got (2, 2)"),
    (lambda W: np.zeros((0, 2)), "needs values of shape (4, 2), got (0, 2)"),
])
def test_a_move_that_computes_what_a_heatmap_cannot_show_says_so_in_the_panel(bad, message):
    def compute(W_Q):
        return [bad(W_Q) if W_Q[0, 0] > 1.5 else W_Q]

    panel = ah.Panel(compute, [dict(kind="heatmap")], weights={"W_Q": W_Q0})
    before = numbers(panel.view).copy()
    panel.sliders["W_Q[0,0]"].value = 2.0  # no exception reaches the slider's page
    assert message in panel.view.extras["error"]
    assert np.array_equal(numbers(panel.view), before)  # the picture stays as it was
    panel.sliders["W_Q[0,0]"].value = 1.0
    assert "error" not in panel.view.extras  # the next good move clears it


def test_a_panel_whose_first_picture_would_be_empty_says_so_when_it_is_made():
    with pytest.raises(ValueError, match=r"at least one of each, got shape \(0, 2\)"):
        ah.Panel(lambda W_Q: [W_Q[:0]], [dict(kind="heatmap")], weights={"W_Q": W_Q0})


def test_nan_and_minus_infinity_are_sent_and_drawn_as_masked_cells():
    panel = ah.Panel(lambda W_Q: [np.where(W_Q > 0.9, np.nan, np.where(W_Q < -0.4, -np.inf, W_Q))],
                     [dict(kind="heatmap")], weights={"W_Q": W_Q0})
    sent = shown(panel)[0]
    assert np.isnan(sent[0, 0]) and np.isneginf(sent[3, 0])
    assert panel.artists[0].masked[0, 0] and panel.artists[0].masked[3, 0]  # the static twin hatches them


# ---- where the browser cannot draw: the kernel draws -----------------------------------------

def pixels(png: bytes) -> np.ndarray:
    return np.asarray(PIL.Image.open(io.BytesIO(png)).convert("RGBA"))


def test_in_browser_false_draws_each_move_with_matplotlib_in_the_kernel():
    panel = small_panel(in_browser=False)
    assert panel.view is None and panel.image in panel.widget.children
    panel.sliders["W_Q[0,0]"].value = 1.5
    png = bytes(panel.image.value)
    if IPYWIDGETS_8:  # a data: address, decoded by the page without a trip through a blob: address
        prefix = b"data:image/png;base64,"
        assert png.startswith(prefix) and panel.image.format == "url"
        png = base64.b64decode(png[len(prefix):])
    assert np.array_equal(pixels(png), pixels(panel.full_draw_png()))
    assert "T = 1.00" in panel.readout.value and "The picture in words" in panel.described.value


def test_without_anywidget_the_panel_draws_in_the_kernel_and_says_so_once(monkeypatch):
    monkeypatch.setattr(widgets, "BrowserView", None)
    monkeypatch.setattr(widgets, "_NO_BROWSER_VIEW", "anywidget is not installed (for this test)")
    with pytest.warns(widgets.KernelPictureWarning, match="anywidget is not installed") as caught:
        panel = small_panel()
        panel.sliders["W_Q[0,0]"].value = 1.5
    assert len(caught) == 1 and panel.view is None and panel.image is not None
    assert panel.fallback_reason.startswith("anywidget is not installed")


def test_a_page_that_moves_a_slider_but_never_drew_the_picture_gets_the_kernels_pictures():
    panel = small_panel()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        panel.sliders["W_Q[0,0]"].value = 1.5  # a cell's move: no page involved, nothing to decide
    with pytest.warns(widgets.KernelPictureWarning, match="did not run the panel's browser view") as caught:
        panel.sliders["W_Q[0,0]"].set_state({"value": 1.0})  # as a page's update message arrives
        panel.sliders["W_Q[0,1]"].set_state({"value": 1.0})
    assert len(caught) == 1  # decided once
    assert panel.view is None and panel.image in panel.widget.children
    assert np.array_equal(pixels(panel.image.value if not IPYWIDGETS_8 else
                                 base64.b64decode(bytes(panel.image.value).split(b",")[1])),
                          pixels(panel.full_draw_png()))


def test_a_page_that_drew_the_picture_keeps_it():
    panel = small_panel()
    panel.view._handle_custom_msg({"rendered": True}, [])  # what browser_view.js sends once it has drawn
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        panel.sliders["W_Q[0,0]"].set_state({"value": 1.5})
    assert panel.view is not None and np.isclose(shown(panel)[0], attention(**panel.values())[0]).all()


def test_a_page_that_could_not_draw_the_picture_says_why_in_the_warning():
    panel = small_panel()
    panel.view._handle_custom_msg({"failed": "TypeError: no SVG here"}, [])
    with pytest.warns(widgets.KernelPictureWarning, match="TypeError: no SVG here"):
        panel.sliders["W_Q[0,0]"].set_state({"value": 1.5})


# ---- the picture in words (tests/test_alt_text.py says what the words are) ---------------

def test_a_cells_redraw_says_the_picture_in_words_at_once():
    panel = small_panel()
    panel.set(T=10.0)
    weights = attention(W_Q0, W_K0, 10.0)[0]  # near-uniform rows, about 1/6 each
    assert f"Values from {weights.min():.2f} to {weights.max():.2f}." in panel.view.description


# ---- sliders, set() and the static twin --------------------------------------------------

def test_no_slider_of_a_panel_echoes_its_pages_value_back_and_other_sliders_still_do():
    """ipywidgets 8 echoes each value a page sends back to every page; a panel's sliders, weights
    and controls alike, opt out (a message fewer per move, which held the picture back), each on
    its own: a slider of the same kind outside the panel still echoes, and a control keeps its
    checks."""
    panel = small_panel()
    panel.view.rendered = True
    other = W.FloatLogSlider(value=1.0, base=10, min=-1, max=1, step=0.1)  # the control's kind
    sent = {key: sent_messages(slider) for key, slider in panel.sliders.items()}
    sent["other"] = sent_messages(other)
    panel.sliders["W_Q[0,0]"].set_state({"value": 1.5})  # as a page's update message arrives
    panel.sliders["T"].set_state({"value": 0.5})
    other.set_state({"value": 0.5})
    assert [m["method"] for m, _ in sent["W_Q[0,0]"]] == [] == [m["method"] for m, _ in sent["T"]]
    assert [m["method"] for m, _ in sent["other"]] == (["echo_update"] if IPYWIDGETS_8 else [])
    assert panel.values()["W_Q"][0, 0] == 1.5 and panel.values()["T"] == 0.5
    assert type(panel.sliders["T"]).__name__ == "FloatLogSlider"
    panel.sliders["T"].value = 100.0  # beyond its range: clamped as before
    assert panel.sliders["T"].value == 10.0
    choice = W.SelectionSlider(options=[1, 2, 4], value=2)  # its page sends the index
    chosen = ah.Panel(lambda k: [np.full((2, 2), float(k))], [dict(kind="heatmap")], controls={"k": choice})
    chosen.view.rendered = True
    log = sent_messages(choice)
    choice.set_state({"index": 2})
    assert log == [] and chosen.values()["k"] == 4


def test_set_moves_many_sliders_with_one_message():
    panel = small_panel()
    log = sent_messages(panel.view)
    panel.set(W_Q=-W_Q0, W_K=W_K0[::-1], T=0.5)
    assert [sorted([*m["state"], *(path[0] for path in m["buffer_paths"])]) for m, _ in log] == [
        ["extras", "values"], ["description"]]  # the picture, then its words
    assert np.allclose(shown(panel)[0], attention(-W_Q0, W_K0[::-1], 0.5)[0])


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
    computed.clear()
    block.value = 4
    assert steps.value == 1 and computed == [(4, 1)]
    steps.value = 1  # no change, no notification
    block.value = 1  # steps keeps its value: one change, one redraw
    assert computed == [(4, 1), (1, 1)]
    assert np.array_equal(shown(panel)[0], np.full((2, 2), 1.0))


@pytest.mark.parametrize("values, message", [
    ({"W_V": np.eye(2)}, "no slider or control named 'W_V'"),
    ({"W_Q": np.eye(2)}, "W_Q must have shape (4, 2), got (2, 2)"),
    ({"W_Q": W_Q0 * 3}, "W_Q has entries outside its sliders' range (-2.0, 2.0)"),
])
def test_set_rejects_bad_names_shapes_and_values_before_moving_anything(values, message):
    panel = small_panel()
    before, picture = panel.values(), numbers(panel.view).copy()
    with pytest.raises(ValueError) as info:
        panel.set(W_K=-W_K0, **values)  # W_K is fine, but must not move either
    assert message in str(info.value)
    assert all(np.array_equal(np.asarray(panel.values()[k]), np.asarray(v)) for k, v in before.items())
    assert np.array_equal(numbers(panel.view), picture)


def ends(slider) -> tuple:
    """A slider's two end values (a FloatLogSlider's min and max are exponents)."""
    if isinstance(slider, W.FloatLogSlider):
        return slider.base ** slider.min, slider.base ** slider.max
    if hasattr(slider, "options"):
        return slider.options[0], slider.options[-1]
    return slider.min, slider.max


def test_at_every_slider_end_the_picture_shows_the_values_and_the_scales_cover_them():
    panel = make_panel()
    bar_limits = panel.artists[2].limits
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for key, slider in panel.sliders.items():
            start = slider.value
            for end in ends(slider):
                slider.value = end
                expected = attention(**panel.values())  # computed here from the sliders' values
                for sent, value in zip(shown(panel), expected[:3]):
                    assert np.allclose(sent, value) and np.isfinite(sent).all(), f"{key} at {end}"
                scale = panel.view.extras["scales"]["1"]
                assert (scale["lo"], scale["hi"]) == (expected[1].min(), expected[1].max())
                lo, hi = panel.artists[2].limits
                assert lo <= expected[2].min() and expected[2].max() <= hi
            slider.value = start
    assert panel.artists[2].limits == bar_limits  # the value axis fixed at the start covered every end


def test_show_static_draws_the_twin_at_the_notebook_resolution(monkeypatch, capsys):
    from IPython.core.pylabtools import print_figure

    static = []  # what the inline backend does with display(figure) in a notebook
    monkeypatch.setattr(ah.widgets, "display", lambda fig: static.append(print_figure(fig, "png")))
    panel = small_panel()
    panel.sliders["W_Q[1,1]"].value = -1.0
    panel.show_static()
    assert "T = 1.00" in capsys.readouterr().out
    assert pixels(static[0]).shape[1] > panel.view.spec["width"]  # 100 dpi, cropped tight
    assert panel.figure.dpi == 72
    heat = panel.artists[0]
    weights = attention(**panel.values())[0]  # the twin shows the values of the sliders now
    assert [[t.get_text() for t in row] for row in heat.texts] == [[f"{v:.2f}" for v in r] for r in weights]


def test_moving_a_slider_away_and_back_sends_the_same_numbers():
    panel = small_panel()
    first = numbers(panel.view).copy()
    for value in (2.0, -2.0, W_K0[2, 1]):
        panel.sliders["W_K[2,1]"].value = value
    assert np.array_equal(numbers(panel.view), first)


def test_a_slider_moved_from_another_thread_prints_arrays_as_the_notebook_does():
    # JupyterLab 4.6 runs widget callbacks in a kernel subshell thread (unless the course's
    # settings keep them in the main one), where NumPy's print options are the defaults.
    with np.printoptions(precision=3, suppress=True):
        panel = ah.Panel(lambda W_Q: [W_Q, str(W_Q / 3)], [dict(kind="heatmap"), dict(kind="text")],
                         weights={"W_Q": W_Q0})
    thread = threading.Thread(target=lambda: setattr(panel.sliders["W_Q[0,0]"], "value", 0.5))
    thread.start()
    thread.join()
    text = panel.view.extras["texts"][0]
    assert "0.167" in text and "0.16666" not in text


def test_panels_moved_in_two_threads_at_once_each_show_their_own_values():
    import sys

    panels = [make_panel(), make_panel()]
    panels[1].set(W_Q=-W_Q0)
    values = np.round(np.linspace(-2, 2, 41), 1)
    errors = []

    def drag(panel):
        try:
            for value in values:
                panel.sliders["W_K[1,0]"].value = float(value)
        except Exception as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=drag, args=(p,)) for p in panels]
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # the threads take turns every few bytecodes
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(switch)
    assert not errors
    for panel in panels:
        expected = attention(**panel.values())
        assert all(np.allclose(s, e) for s, e in zip(shown(panel), expected[:3]))


def test_slider_values_lose_the_browsers_rounding_noise():
    # In JavaScript -2 + 30 * 0.1 is 1.0000000000000004 and -2 + 20 * 0.1 is 4.4e-16.
    panel = ah.Panel(lambda W_Q: [W_Q], [dict(kind="heatmap")], weights={"W_Q": W_Q0})
    panel.sliders["W_Q[0,0]"].value = 1.0000000000000004
    panel.sliders["W_Q[0,1]"].value = -4.4e-16
    assert panel.values()["W_Q"][0, 0] == 1.0 and panel.values()["W_Q"][0, 1] == 0.0
    assert shown(panel)[0][0, 1] == 0.0 and not np.signbit(shown(panel)[0][0, 1])  # drawn 0.00, not -0.00


def test_a_stored_live_panel_carries_a_sentence_and_its_picture_for_pages_without_widgets():
    panel = make_panel()
    bundle, metadata = panel._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle  # JupyterLab shows the live panel
    assert bundle["text/plain"] == (
        "Live panel (needs a running kernel): move the sliders for W_Q, W_K and T and it redraws weights, "
        "scores, row 0 and a text read-out. The same figure follows below as a static picture.")
    png = base64.b64decode(bundle["image/png"])  # what GitHub or an export without widget state shows
    assert np.array_equal(pixels(png), pixels(panel.full_draw_png()))
    assert metadata["image/png"]["alt"].startswith("Figure with 3 panels. Panel 1 of 3: Heatmap 'weights'")


def test_every_slider_has_a_visible_label():
    unnamed = W.IntSlider(value=1, min=0, max=3)
    panel = ah.Panel(lambda W_Q, n: [W_Q * n], [dict(kind="heatmap")], weights={"W_Q": W_Q0},
                     controls={"n": unnamed})
    assert unnamed.description == "n"
    assert all(s.description for s in panel.sliders.values())


def test_importing_the_helper_leaves_pyplot_as_it_is():
    import importlib

    before = plt._draw_all_if_interactive
    importlib.reload(ah.plots)
    assert plt._draw_all_if_interactive is before
