"""Every picture says in words what it shows: the plotting helpers' text alternatives.

The numbers in a description are checked against what the picture itself
draws (the texts in a heatmap's cells, the heights of the bars, a line's
data), and the IPython hook is checked to put the description into the
image's "alt" metadata even when the inline backend is configured after the
helpers were imported, as happens in a notebook.
"""

import html

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402
from IPython.core.pylabtools import select_figure_formats  # noqa: E402

import attention_helpers as ah  # noqa: E402
from attention_helpers.alt_text import plain  # noqa: E402
from attention_helpers.plots import describe, set_description  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def cat_eats_fish_weights():
    tokens, X, W_Q, W_K, W_V = ah.examples.cat_eats_fish()
    return tokens, ah.self_attention(X, W_Q, W_K, W_V)[1]


def test_a_small_heatmap_reads_out_every_number_its_cells_show():
    tokens, weights = cat_eats_fish_weights()
    hm = ah.heatmap(weights, tokens, tokens, title="weights A", probabilities=True)
    text = hm.describe()
    assert text.startswith("Heatmap 'weights A', 3 × 3: rows = query: cat, eats, fish; "
                           "columns = key: cat, eats, fish.")
    for i, token in enumerate(tokens):  # the numbers are the ones drawn in the row's cells
        assert f"row {token}: {', '.join(t.get_text() for t in hm.texts[i])}" in text


def test_a_large_heatmap_gives_the_range_and_each_rows_largest_entry():
    values = np.arange(36.0).reshape(6, 6)
    values[2, 0] = 99.0
    labels = [f"t{k}" for k in range(6)]
    text = ah.heatmap(values, labels, labels, fmt=".0f").describe()
    assert "Values from 0 to 99." in text
    assert "t2 at t0 99" in text and "t0 at t5 5" in text
    assert "row t0:" not in text  # 36 numbers would be too many to read out


def test_the_description_follows_an_update():
    hm = ah.heatmap([[0.0, 1.0]], ["q"], ["a", "b"], probabilities=True)
    hm.update([[0.25, 0.75]])
    assert "row q: 0.25, 0.75" in hm.describe()


def test_bars_read_out_their_heights():
    bars = ah.bar_chart([0.1, 0.2, 0.7], ["k1", "k2", "k3"], title="softmax", xlabel="key")
    heights = [format(b.get_height(), ".2f") for b in bars.bars]
    assert bars.describe() == f"Bar chart 'softmax' of probability per key: k1 {heights[0]}, " \
                              f"k2 {heights[1]}, k3 {heights[2]}."


def test_a_figure_is_described_panel_by_panel_without_its_colour_bars():
    tokens, weights = cat_eats_fish_weights()
    fig, axes = plt.subplots(1, 2)
    left = ah.heatmap(weights * 2, tokens, tokens, ax=axes[0], title="left")
    right = ah.heatmap(weights, tokens, tokens, ax=axes[1], title="right", probabilities=True)
    assert len(fig.axes) == 4  # two heatmaps and their two colour bars
    assert describe(fig) == (f"Figure with 2 panels. Panel 1 of 2: {left.describe()} "
                             f"Panel 2 of 2: {right.describe()}")


def test_a_plain_matplotlib_chart_is_described_from_what_it_holds():
    fig, ax = plt.subplots()
    d = [1, 4, 16]
    ax.plot(d, [1.02, 3.9, 15.5], "o", label=r"measured $q\cdot k$")
    ax.axhline(1)
    ax.set(xscale="log", xlabel="$d_k$", ylabel="variance", title=r"Scores grow with $\sqrt{d_k}$")
    text = describe(fig)
    assert text.startswith("Chart 'Scores grow with √d_k'; x axis: d_k (log scale), y axis: variance;")
    assert "'measured q·k': 3 points, at x = 1 y = 1.02, at x = 16 y = 15.5" in text
    assert "1 unlabelled line" in text


def test_grouped_bars_drawn_by_hand_are_named_by_their_ticks():
    fig, ax = plt.subplots()
    ax.bar(np.arange(2) - 0.2, [10.0, 2.5], 0.4, label="MHA")
    ax.bar(np.arange(2) + 0.2, [1.25, 0.5], 0.4, label="as built")
    ax.set(xticks=range(2), xticklabels=["LLaMA", "Mistral"])
    assert "bars 'MHA': LLaMA 10, Mistral 2.5; bars 'as built': LLaMA 1.25, Mistral 0.5" in describe(ax)


def test_a_description_written_by_hand_wins():
    fig, ax = plt.subplots()
    ax.text(0, 0, "?")
    set_description(fig, "A 3 × 3 grid of question marks, one per query and key.")
    assert describe(fig) == "A 3 × 3 grid of question marks, one per query and key."


@pytest.mark.parametrize("call, error, message", [
    (lambda: describe("a figure"), TypeError, "describe needs a Figure, an Axes, a Heatmap or a Bars"),
    (lambda: set_description(None, "x"), TypeError, "set_description needs a matplotlib Figure or Axes"),
    (lambda: set_description(plt.figure(), "  "), ValueError, "set_description needs a non-empty text"),
])
def test_bad_arguments_are_named(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert message in str(info.value)


def test_ipython_puts_the_description_into_the_images_alt_metadata():
    shell = InteractiveShell.instance()
    try:
        assert ah.alt_text.register_with_ipython(shell)  # the import did this before the shell existed
        select_figure_formats(shell, {"png"})  # the inline backend, configured afterwards
        tokens, weights = cat_eats_fish_weights()
        hm = ah.heatmap(weights, tokens, tokens, title="weights A", probabilities=True)
        data, metadata = shell.display_formatter.format(hm.ax.figure)
        assert data["image/png"]  # the picture itself still comes from the inline backend
        assert metadata["image/png"]["alt"] == hm.describe()
    finally:
        InteractiveShell.clear_instance()


def weights_panel(**options):
    tokens, X, W_Q, W_K, W_V = ah.examples.cat_eats_fish()
    return ah.Panel(lambda W_Q: [ah.self_attention(X, W_Q, W_K, W_V)[1]],
                    [{"kind": "heatmap", "row_labels": tokens, "col_labels": tokens,
                      "title": "weights", "probabilities": True}], weights={"W_Q": W_Q}, **options)


def test_a_live_panel_describes_its_picture_under_it_and_keeps_it_up_to_date():
    panel = weights_panel()
    assert panel.view.description == describe(panel.figure)  # browser_view.js shows it under the picture
    assert "row fish:" in panel.view.description
    panel.set(W_Q=np.zeros((2, 2)))  # every score 0: every weight 1/3
    assert "row cat: 0.33, 0.33, 0.33" in panel.view.description


def test_after_slider_moves_the_words_follow_once_the_page_asks():
    """While a slider moves no words are sent; browser_view.js asks for them once the picture has
    rested a quarter of a second, and the answer describes the values it shows."""
    panel = weights_panel()
    before = panel.view.description
    sent = []
    panel.view.observe(lambda change: sent.append(change["new"]), names="description")
    for value in (0.0, 0.1, 0.2, 0.0):  # a drag of W_Q[0,0]: four moves, four pictures
        panel.sliders["W_Q[0,0]"].value = value
    assert sent == []
    panel.view._handle_custom_msg({"describe": 4}, [])  # the page's request, after the last picture
    assert len(sent) == 1 and panel.view.description == describe(panel.figure) != before
    tokens, X, W_Q, W_K, W_V = ah.examples.cat_eats_fish()
    W_Q = W_Q.copy()
    W_Q[0, 0] = 0.0  # where the drag came to rest
    row = ah.self_attention(X, W_Q, W_K, W_V)[1][0]
    assert f"row cat: {row[0]:.2f}, {row[1]:.2f}, {row[2]:.2f};" in panel.view.description


def test_a_panel_drawn_in_the_kernel_writes_its_words_under_its_picture():
    panel = weights_panel(in_browser=False)
    assert panel.described in panel.widget.children
    panel.sliders["W_Q[0,0]"].value = 0.0
    assert html.escape(describe(panel.figure)) in panel.described.value


def test_bars_offset_from_their_ticks_are_named_by_the_nearest_tick():
    fig, ax = plt.subplots()
    for k, height in enumerate([0.25, 0.5, 0.75, 1.0]):  # four series side by side, as in notebook 04
        ax.bar(np.arange(2) + 0.2 * (k - 1.5), [height, height / 2], 0.2, label=f"T = {k}")
    ax.set(xticks=range(2), xticklabels=["token 1", "token 2"])
    assert "bars 'T = 0': token 1 0.25, token 2 0.125" in describe(ax)
    assert "bars 'T = 3': token 1 1, token 2 0.5" in describe(ax)


def test_arrows_and_markers_say_where_they_are():
    ax = ah.vectors_2d({"fish": [2.0, 4.0], "cat": [1.0, 2.0]}, title="keys")
    assert describe(ax.figure) == "Arrows 'keys' from the origin: fish to (2, 4); cat to (1, 2)."
    fig, ax = plt.subplots()
    ax.scatter(range(8), np.ones(8))
    ax.scatter([1.5, 5.5], [0, 0])
    ax.set(yticks=[0, 1], yticklabels=["KV heads", "query heads"])
    assert "8 markers on query heads, 2 markers on KV heads" in describe(fig)


def test_masked_cells_are_read_out_as_masked_not_as_zero():
    weights = ah.softmax(np.where(ah.causal_mask(3), 0.0, -np.inf))
    hm = ah.heatmap(weights, ["a", "b", "c"], ["a", "b", "c"], probabilities=True, mask=ah.causal_mask(3))
    assert hm.describe().endswith("row a: 1.00, masked, masked; row b: 0.50, 0.50, masked; "
                                  "row c: 0.33, 0.33, 0.33.")
    big = np.where(ah.causal_mask(5), np.arange(25.0).reshape(5, 5), -np.inf)
    text = ah.heatmap(big, fmt=".0f").describe()
    assert "10 of 25 cells masked." in text and "Values from 0 to 24." in text  # 5 x 4 / 2 above the diagonal


def test_grouped_bars_read_out_each_series():
    chart = ah.grouped_bar_chart({"T = 1": [0.1, 0.9], "T = 10": [0.45, 0.55]}, ["cat", "fish"],
                                 title="softmax", xlabel="key")
    assert describe(chart.ax.figure) == ("Grouped bar chart 'softmax' of probability per key. "
                                         "T = 1: cat 0.10, fish 0.90; T = 10: cat 0.45, fish 0.55.")


@pytest.mark.parametrize("label, said", [
    (r"$QK^\top/\sqrt{d_k}$", "QKᵀ/√d_k"), (r"$d_{model}$", "d_model"),
    (r"softmax($S \cdot T$)", "softmax(S·T)"),
    (r"$\frac{1}{\sqrt{d_k}}$", "1/√d_k"), ("query (row)", "query (row)"), (r"$\alpha \to \infty$", "α → ∞"),
])
def test_labels_lose_the_tex_a_screen_reader_would_spell_out(label, said):
    assert plain(label) == said


def test_a_heatmap_of_states_is_read_out_by_state_not_as_numbers():
    states = {2: ("now", "#fde725"), 1: ("done", "#21918c"), 0: ("to come", "#8c9ec4"),
              -1: ("skipped", "#4d4d4d")}
    tiles = np.array([[2, 2, -1, -1], [2, 2, -1, -1], [1, 1, 0, 0], [1, 1, 0, 0]], dtype=float)  # by hand
    labels = ["t0", "t1", "t2", "t3"]
    hm = ah.heatmap(tiles, labels, labels, categories=states, title="tile states")
    text = describe(hm.ax.figure)
    assert text == ("Heatmap 'tile states', 4 × 4: rows = query: t0, t1, t2, t3; "
                    "columns = key: t0, t1, t2, t3. "
                    "Cells per state: 4 now, 4 done, 4 to come, 4 skipped. States by row: "
                    "row t0: t0–t1 now, t2–t3 skipped; row t1: t0–t1 now, t2–t3 skipped; "
                    "row t2: t0–t1 done, t2–t3 to come; row t3: t0–t1 done, t2–t3 to come.")
    hm.update(np.where(np.arange(16).reshape(4, 4) == 5, 2.0, 1.0))  # one lone cell "now", the rest done
    text = hm.describe()
    assert "Cells per state: 1 now, 15 done, 0 to come, 0 skipped." in text  # a state with no cell counts 0
    assert "row t1: t0 done, t1 now, t2–t3 done;" in text  # a run of one cell is named by its column
    assert "Values from" not in text and "\\n" not in text


def test_log_bars_say_their_scale_once():
    bars = ah.bar_chart([10.0, 0.156], ["MHA", "MQA"], probabilities=False, log=True, fmt=".3f",
                        ylabel="cache size (GiB)", title="cache")
    assert bars.describe() == "Bar chart 'cache' of cache size (GiB) on a log scale: MHA 10.000, MQA 0.156."
    bars.ax.set_ylabel("cache size (GiB, log scale)")  # the label says it already
    assert bars.describe() == "Bar chart 'cache' of cache size (GiB, log scale): MHA 10.000, MQA 0.156."
