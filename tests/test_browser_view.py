"""The browser's picture, without JupyterLab: attention_helpers/browser_view.js in headless Chromium.

Each test builds a panel here, hands its view's state (what the kernel would send) to the ES
module in an empty page with a stand-in for anywidget's model (tools/pictures.py's HARNESS),
and reads back what it drew: every cell's colour and number, the numbers' ink, the colour
bar's and value axis' labels, the bars. That must be what the panel's static twin, its
matplotlib figure, shows at the same values (tools/pictures.py's FACTS, read off
matplotlib's own artists). And the module's number format must be Python's, tie for tie.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import ipywidgets as W
import matplotlib
import numpy as np
import pytest

import attention_helpers as ah
from attention_helpers.plots import _number
from tools.pictures import DOM_FACTS, HARNESS, differences, facts_of, view_state

pytestmark = pytest.mark.browser

ESM = (Path(ah.__file__).parent / "browser_view.js").read_text()
TOKENS = ["the", "cat", "sat", "on"]
X = np.array([[0.9, 0.0, 0.6], [0.4, 0.4, 0.5], [0.8, 0.0, 0.1], [0.0, 0.9, 0.0]])
W0 = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, -0.5]])


@pytest.fixture(scope="module")
def page(browser):
    page = browser.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.on("console", lambda m: m.type == "error" and page.errors.append(m.text))
    page.set_content("<!doctype html><html><body></body></html>")
    page.evaluate(HARNESS, ESM)
    yield page
    page.close()


_count = itertools.count()


def draw(page, panel) -> str:
    """Draw `panel`'s view in the page; its element's id."""
    name = f"view{next(_count)}"
    page.evaluate("([id, state]) => window.__show(id, state)", [name, view_state(panel.view)])
    return name


def send(page, name, panel) -> None:
    """What the kernel's message of a move does: the view's new numbers and extras, in one go."""
    state = view_state(panel.view)
    page.evaluate("([id, s]) => { window.__set(id, 'extras', s.extras); "
                  "window.__set(id, 'values', s.values) }", [name, state])


def drawn(page, name) -> dict:
    page.wait_for_timeout(0)  # the redraw waits for the end of the message's task (one per message)
    return page.evaluate(f"id => ({DOM_FACTS})(document.getElementById(id))", name)


def attention(W_Q, W_K, T=1.0):
    scores = (X @ W_Q) @ (X @ W_K).T / np.sqrt(2)
    weights = ah.softmax(np.where(ah.causal_mask(4), scores, -np.inf) / T)
    return [weights, scores, (X @ W_Q)[:, 0] + 2.5, f"T = {T:.2f}"]


def a_panel(**options):
    views = [dict(kind="heatmap", row_labels=TOKENS, col_labels=TOKENS, probabilities=True,
                  mask=ah.causal_mask(4), title="weights"),
             dict(kind="heatmap", row_labels=TOKENS, col_labels=TOKENS, title="scores", diverging=True),
             dict(kind="bars", labels=TOKENS, title="q, first entry", probabilities=False, fmt=".3f"),
             dict(kind="text")]
    T = W.FloatLogSlider(value=1.0, base=10, min=-1, max=1, step=0.1, description="T")
    return ah.Panel(attention, views, weights={"W_Q": W0, "W_K": W0[::-1]}, controls={"T": T}, **options)


def log_panel():
    n = W.IntSlider(value=4096, min=256, max=32768, step=256, description="tokens")
    return ah.Panel(lambda n: [np.array([8.0, 1.0, 0.125]) * n * 2 ** -20],
                    [dict(kind="bars", labels=["multi-head\n(8 heads)", "GQA", "MQA"], probabilities=False,
                          log=True, fmt=".3f", ylabel="GiB")], controls={"n": n})


def states_panel():
    steps = W.IntSlider(value=2, min=0, max=4, description="steps")
    states = {2: ("now", "#fde725"), 1: ("done", "#21918c"), 0: ("to come", "#8c9ec4"),
              -1: ("skipped", "#4d4d4d")}
    return ah.Panel(lambda steps: [np.where(np.arange(16).reshape(4, 4) < 4 * steps, 1.0, 0.0)
                                   - np.triu(np.ones((4, 4)), 1)],
                    [dict(kind="heatmap", categories=states, title="tiles")], controls={"steps": steps})


def test_numbers_are_written_as_python_writes_them_ties_included(page):
    rng = np.random.default_rng(0)
    values = [0.125, 0.375, 2.5, 0.5, 1.5, -0.125, -2.5, 0.0, -0.0, -1e-9, 1e-9, -0.004, 0.005, 0.015,
              1 / 3, -2 / 3, 1234.5678, 0.1 + 0.2, 1e15 + 0.5, -999.9995, 2.675, 1.005]
    values += list(rng.normal(size=200)) + list(np.round(rng.normal(size=200), 3) + 5e-4)  # many near ties
    values += [k / 8 for k in range(-40, 41)] + [k / 16 for k in range(-40, 41)]  # exact ties in binary
    for fmt in (".0f", ".1f", ".2f", ".3f"):
        written = page.evaluate("([vs, f]) => vs.map(v => window.__module.formatNumber(v, f))",
                                [[float(v) for v in values], fmt])
        expected = [_number(float(v), fmt) for v in values]
        wrong = [(v, w, e) for v, w, e in zip(values, written, expected) if w != e]
        assert not wrong, f"{fmt}: (value, browser, Python) {wrong[:5]}"


def test_a_value_picks_the_colour_matplotlib_picks(page):
    cmap = matplotlib.colormaps["viridis"]
    normalised = [-0.5, -1e-12, 0.0, 1e-12, 0.5 / 256, 1 / 256, 0.5, 127.999 / 256, 0.999999, 1.0,
                  1.0 + 1e-12, 3.0]
    picked = page.evaluate("vs => vs.map(v => window.__module.colourIndex(v, 256))", normalised)
    lut = [matplotlib.colors.to_hex(c) for c in cmap(np.arange(256))]
    assert [lut[k] for k in picked] == [matplotlib.colors.to_hex(cmap(v)) for v in normalised]


def test_the_picture_shows_what_the_static_twin_shows(page):
    panel = a_panel()
    name = draw(page, panel)
    assert not differences(facts_of(panel), drawn(page, name), "at the start"), \
        differences(facts_of(panel), drawn(page, name), "at the start")
    for key, value in (("W_Q[0,0]", 2.0), ("W_K[2,1]", -2.0), ("T", 0.1), ("T", 10.0), ("W_Q[1,1]", -2.0)):
        panel.sliders[key].value = value
        send(page, name, panel)
        problems = differences(facts_of(panel), drawn(page, name), f"{key} = {value}")
        assert not problems, "\n".join(problems)
    assert drawn(page, name)["charts"][0]["masked_key"] is True  # the causal mask's cells, named in the key
    assert not page.errors


@pytest.mark.parametrize("make", [log_panel, states_panel])
def test_log_bars_and_named_states_show_what_the_static_twin_shows(page, make):
    panel = make()
    name = draw(page, panel)
    control = next(iter(panel.controls.values()))
    for value in (control.min, control.value, control.max):
        control.value = value
        send(page, name, panel)
        problems = differences(facts_of(panel), drawn(page, name), f"{control.description} = {value}")
        assert not problems, "\n".join(problems)


def test_bad_numbers_draw_marked_cells_or_a_message_never_a_broken_picture(page):
    panel = ah.Panel(lambda W_Q: [W_Q], [dict(kind="heatmap", title="W")], weights={"W_Q": W0})
    name = draw(page, panel)
    nan, inf = float("nan"), float("inf")
    for values, expect in ((np.array([[nan, 1.0], [2.0, -inf], [inf, 0.0]]), "masked"),
                           (np.zeros(4), "got 4 numbers for a layout of 6")):
        page.evaluate("([id, v]) => window.__set(id, 'values', v)",
                      [name, __import__("base64").b64encode(values.astype("<f8").tobytes()).decode()])
        facts = drawn(page, name)
        assert facts["svg"] and facts["charts"]  # still a picture
        if expect == "masked":
            assert facts["charts"][0]["cells"][0][0] == facts["charts"][0]["cells"][1][1] == "masked"
            assert facts["charts"][0]["cells"][2][0] == "masked"  # +inf: the kernel refuses it; drawn hatched
            assert facts["charts"][0]["numbers"][0][0] == ""
        else:
            assert expect in facts["error"]
    assert not page.errors


def test_the_view_says_it_has_drawn_and_asks_for_its_words_once_it_rests(page):
    panel = a_panel()
    name = draw(page, panel)
    assert page.evaluate("id => window.__sent[id]", name)[0] == {"rendered": True}
    for value in (0.5, 1.0, 1.5):  # three moves in a row, closer together than the rest the view waits for
        panel.sliders["W_Q[0,0]"].value = value
        send(page, name, panel)
    page.wait_for_timeout(600)
    asked = [m for m in page.evaluate("id => window.__sent[id]", name) if "describe" in m]
    assert len(asked) == 1  # once, for the picture it rests on
    page.evaluate("([id, words]) => window.__set(id, 'description', words)", [name, "three cells"])
    assert page.evaluate("id => document.getElementById(id).querySelector('details p').textContent", name) \
        == "three cells"
    svg = page.evaluate("""id => { const s = document.getElementById(id).querySelector('svg');
        const words = document.getElementById(s.getAttribute('aria-describedby'));
        return {role: s.getAttribute('role'), title: s.querySelector('title').textContent,
                described: words.textContent}; }""", name)
    assert svg == {"role": "img", "title": "Live picture: weights, scores and q, first entry",
                   "described": "three cells"}
    # The keyboard: nothing in the picture takes the focus but its words' summary (Tab, then Enter).
    focusable = page.evaluate("""id => [...document.getElementById(id).querySelectorAll('*')]
        .filter(e => e.tabIndex >= 0).map(e => e.tagName.toLowerCase())""", name)
    assert focusable == ["summary"]


def test_the_picture_is_crisp_at_twice_the_pixels(page):
    """At a device pixel ratio of 2 (a laptop's screen) the picture has twice the pixels each way,
    drawn at that resolution (SVG), not the 1x picture blown up; at half size it is the 1x picture."""
    import base64
    import io

    import PIL.Image

    panel = a_panel()
    page.evaluate("() => document.body.replaceChildren()")  # the one picture, at the page's top left
    name = draw(page, panel)
    cdp = page.context.new_cdp_session(page)
    shots = {}
    try:
        for ratio in (1, 2):
            cdp.send("Emulation.setDeviceMetricsOverride",
                     {"width": 1600, "height": 700, "deviceScaleFactor": ratio, "mobile": False})
            box = page.locator(f"#{name} svg").bounding_box()
            shot = cdp.send("Page.captureScreenshot", {"format": "png", "clip": {**box, "scale": 1},
                                                       "captureBeyondViewport": True})
            png = base64.b64decode(shot["data"])  # in device pixels
            shots[ratio] = np.asarray(PIL.Image.open(io.BytesIO(png)).convert("L"), dtype=float)
    finally:
        cdp.send("Emulation.clearDeviceMetricsOverride")
    one, two = shots[1], shots[2]
    # twice the pixels each way (to a pixel: the picture's size in CSS pixels is fractional)
    assert abs(two.shape[0] - 2 * one.shape[0]) <= 1 and abs(two.shape[1] - 2 * one.shape[1]) <= 1
    rows, cols = min(one.shape[0], two.shape[0] // 2), min(one.shape[1], two.shape[1] // 2)
    one, two = one[:rows, :cols], two[:2 * rows, :2 * cols]
    blown_up = np.kron(one, np.ones((2, 2)))  # each 1x pixel made four
    halved = two.reshape(one.shape[0], 2, one.shape[1], 2).mean(axis=(1, 3))
    assert np.abs(halved - one).mean() < np.abs(two - blown_up).mean()  # more detail than 1x has
    assert np.abs(two - blown_up).mean() > 1.0  # drawn anew
    assert np.abs(halved - one).mean() < 6.0  # the same picture
