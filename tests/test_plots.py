"""The plot helpers show what a reader needs: labels, axis titles, values a student can
read at 100 % zoom, masked cells that look masked, one colour scale where two are compared."""

import os
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import attention_helpers as ah  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_heatmap_labels_tokens_axes_and_values():
    w = ah.softmax(np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 5.0], [2.0, 2.0, 2.0]]))
    hm = ah.heatmap(w, ["cat", "eats", "fish"], ["cat", "eats", "fish"], title="weights", probabilities=True)
    assert [t.get_text() for t in hm.ax.get_xticklabels()] == ["cat", "eats", "fish"]
    assert [t.get_text() for t in hm.ax.get_yticklabels()] == ["cat", "eats", "fish"]
    assert hm.ax.get_xlabel() == "key (column)" and hm.ax.get_ylabel() == "query (row)"
    assert hm.texts[1][2].get_text() == f"{w[1, 2]:.2f}"
    assert hm.image.get_clim() == (0.0, 1.0)  # probabilities: fixed scale
    assert hm.colorbar is not None
    assert hm.image.get_cmap().name == "viridis"


def test_heatmap_update_changes_values_in_place_without_new_artists():
    hm = ah.heatmap(np.zeros((2, 2)) + [[0, 1], [2, 3]])
    n_artists = len(hm.ax.get_children())
    hm.update([[5.0, 6.0], [7.0, 9.0]])
    assert hm.texts[1][1].get_text() == "9.00"
    assert hm.image.get_clim() == (5.0, 9.0)  # free scale follows the values
    assert len(hm.ax.get_children()) == n_artists


def test_heatmap_update_with_constant_values_keeps_a_valid_colour_scale():
    hm = ah.heatmap(np.ones((2, 2)))
    lo, hi = hm.image.get_clim()
    assert hi > lo


def test_heatmap_annotation_colour_contrasts_with_the_cell():
    hm = ah.heatmap([[0.0, 1.0]], probabilities=True)
    assert hm.texts[0][0].get_color() == "white"  # dark purple cell
    assert hm.texts[0][1].get_color() == "black"  # yellow cell


@pytest.mark.parametrize("call, message", [
    (lambda: ah.heatmap(np.ones(3)), "heatmap values must be 2-D"),
    (lambda: ah.heatmap(np.ones((2, 3)), ["a", "b"], ["x", "y"]), "got 2 row labels and 2 column labels"),
    (lambda: ah.heatmap(np.ones((2, 2))).update(np.ones((3, 3))), "update needs values of shape (2, 2)"),
    (lambda: ah.bar_chart([0.5, 0.5], ["a"]), "one label per value"),
])
def test_plot_helpers_reject_mismatched_shapes(call, message):
    with pytest.raises(ValueError) as info:
        call()
    assert message in str(info.value)


def test_bar_chart_updates_heights_and_labels():
    bars = ah.bar_chart([0.2, 0.8], ["a", "b"], title="p", xlabel="key")
    bars.update([0.6, 0.4])
    assert [b.get_height() for b in bars.bars] == [0.6, 0.4]
    assert [t.get_text() for t in bars.texts] == ["0.60", "0.40"]
    assert bars.ax.get_ylabel() == "probability" and bars.ax.get_xlabel() == "key"


def test_heatmap_draws_into_a_given_axes():
    fig, axes = plt.subplots(1, 2)
    hm = ah.heatmap(np.eye(2), ax=axes[1])
    assert hm.ax is axes[1]


def test_vectors_2d_labels_each_vector():
    ax = ah.vectors_2d({"q": [2, 4], "k": [1, 2]}, title="vectors")
    assert {t.get_text().strip() for t in ax.texts} - {""} == {"q", "k"}
    assert ax.get_xlabel() and ax.get_ylabel()
    with pytest.raises(ValueError, match="length 2"):
        ah.vectors_2d({"q": [1, 2, 3]})


def test_a_constant_heatmap_still_gets_a_colour_bar_that_spans_its_value():
    hm = ah.heatmap(np.full((2, 2), -1.5))
    lo, hi = hm.limits
    assert lo <= -1.5 <= hi and lo < hi
    hm.ax.figure.canvas.draw()
    labels = [t.get_text() for t in hm.colorbar.ax.get_yticklabels() if t.get_text()]
    assert labels  # the colour bar says which value its colour is


@pytest.mark.parametrize("fmt, negative_zero, shown", [
    (".3f", -4e-4, "0.000"), (".2f", -0.0, "0.00"), (".1e", -0.0, "0.0e+00"), (".1%", -1e-5, "0.0%"),
])
def test_numbers_that_round_to_zero_show_no_minus_sign(fmt, negative_zero, shown):
    # A minus sign with no digit behind it says nothing but "rounding happened here".
    hm = ah.heatmap(np.array([[negative_zero, -0.5]]), ["q"], ["k0", "k1"], fmt=fmt)
    assert hm.texts[0][0].get_text() == shown
    # a real negative keeps its sign: a true minus, as on matplotlib's tick labels (read as "minus")
    assert hm.texts[0][1].get_text() == format(-0.5, fmt).replace("-", "\N{MINUS SIGN}")
    bars = ah.bar_chart(np.array([negative_zero, 0.5]), ["a", "b"], fmt=fmt)
    assert bars.texts[0].get_text() == shown


def rendered_at(ax, dpi=72):
    """Draw ax's figure at `dpi` (the live panels' resolution); its renderer."""
    ax.figure.set_dpi(dpi)
    ax.figure.canvas.draw()
    return ax.figure.canvas.get_renderer()


def test_numbers_in_cells_and_on_bars_are_at_least_10_px_high_in_a_live_panel():
    hm = ah.heatmap(np.array([[0.25, -1.5], [3.0, 0.0]]))
    bars = ah.bar_chart([0.2, 0.8], ["a", "b"])
    for chart, texts in ((hm, [t for row in hm.texts for t in row]), (bars, bars.texts)):
        renderer = rendered_at(chart.ax)
        for text in texts:
            assert text.get_fontsize() * 72 / 72 >= 10  # points at 72 dpi: pixels
            assert text.get_window_extent(renderer).height >= 10


def pixel(ax, x, y):
    """The colour drawn at data point (x, y) of ax, as 0-255 RGB."""
    ax.figure.canvas.draw()
    px, py = ax.transData.transform((x, y))
    rgba = np.asarray(ax.figure.canvas.buffer_rgba())
    return rgba[int(rgba.shape[0] - py), int(px), :3].astype(int)


def test_a_masked_cell_looks_unlike_a_weight_of_zero_and_the_legend_says_masked():
    weights = np.array([[1.0, 0.0], [0.5, 0.5]])  # row 0: key 1 masked; row 1: nothing masked
    mask = np.array([[True, False], [True, True]])
    hm = ah.heatmap(weights, ["q0", "q1"], ["k0", "k1"], probabilities=True, mask=mask)
    assert hm.texts[0][1].get_text() == ""  # no "0.00" in a masked cell
    assert hm.masked.tolist() == [[False, True], [False, False]]
    assert [t.get_text() for t in hm.legend.get_texts()] == ["masked"] and hm.legend.get_visible()
    masked = pixel(hm.ax, 1.15, -0.15)  # off the hatch lines' centre: the grey behind them
    zero = ah.heatmap(np.array([[0.0]]), probabilities=True)
    zero_colour = pixel(zero.ax, 0.15, 0.15)
    assert np.abs(masked - zero_colour).sum() > 200  # light grey, not viridis' dark purple
    assert (np.ptp(masked) < 10) and masked.min() > 150  # grey: equal channels, light


@pytest.mark.parametrize("hidden", [-np.inf, np.nan])
def test_minus_infinity_or_nan_scores_are_drawn_masked_and_kept_off_the_colour_scale(hidden):
    scores = np.array([[1.0, hidden], [-2.0, 3.0]])
    hm = ah.heatmap(scores)
    assert hm.limits == (-2.0, 3.0)  # the scale spans the scores that are there
    assert hm.texts[0][1].get_text() == "" and hm.texts[0][0].get_text() == "1.00"
    assert len(hm.hatch.get_paths()) == 1
    hm.update(np.array([[1.0, 2.0], [-2.0, 3.0]]))  # nothing masked any more
    assert len(hm.hatch.get_paths()) == 0 and not hm.legend.get_visible()
    assert hm.texts[0][1].get_text() == "2.00"


@pytest.mark.parametrize("kwargs, message", [
    (dict(mask=np.ones((2, 3), bool)), "mask must be a boolean array of the values' shape (2, 2)"),
    (dict(mask=np.ones((2, 2))), "mask must be a boolean array"),
    (dict(vmin=1.0), "vmin and vmax go together"),
    (dict(vmin=2.0, vmax=1.0), "vmin < vmax"),
])
def test_bad_mask_or_scale_options_are_named(kwargs, message):
    with pytest.raises(ValueError) as info:
        ah.heatmap(np.zeros((2, 2)), **kwargs)
    assert message in str(info.value)
    with pytest.raises(ValueError, match=r"\+inf"):
        ah.heatmap(np.array([[np.inf, 0.0]]))


def test_shared_scale_gives_two_heatmaps_one_colour_for_one_value():
    A = np.array([[0.0, 2.0], [1.0, 1.0]])
    B = np.array([[-1.0, 4.0], [np.nan, 3.0]])
    scale = ah.shared_scale(A, B)
    assert scale == {"vmin": -1.0, "vmax": 4.0}  # by hand: the lowest and highest finite entries
    assert ah.shared_scale(A, B, symmetric=True) == {"vmin": -4.0, "vmax": 4.0}
    fig, axes = plt.subplots(1, 2)
    left, right = ah.heatmap(A, ax=axes[0], **scale), ah.heatmap(B, ax=axes[1], **scale)
    assert left.limits == right.limits == (-1.0, 4.0)
    assert np.array_equal(left.image.to_rgba(2.0), right.image.to_rgba(2.0))
    with pytest.raises(ValueError, match="at least one finite value"):
        ah.shared_scale(np.full(2, np.nan))


def test_bars_can_go_without_their_value_labels():
    bars = ah.bar_chart([0.2, 0.8], ["a", "b"], value_labels=False)
    assert not any(t.get_visible() for t in bars.texts)
    assert [b.get_height() for b in bars.bars] == [0.2, 0.8]


def test_grouped_bars_write_each_value_on_its_bar():
    series = {"T = 1": [0.1, 0.9], "T = 10": [0.45, 0.55]}
    chart = ah.grouped_bar_chart(series, ["cat", "fish"], xlabel="key")
    for name, values in series.items():
        assert [b.get_height() for b in chart.bars[name]] == values
    drawn = {(round(t.get_position()[0], 6), t.get_text()) for t in chart.texts}
    expected = {(round(b.get_x() + b.get_width() / 2, 6), f"{b.get_height():.2f}")
                for container in chart.bars.values() for b in container}
    assert drawn == expected  # every bar carries its own value, centred on it
    assert [t.get_text() for t in chart.ax.get_legend().get_texts()] == ["T = 1", "T = 10"]
    assert not ah.grouped_bar_chart(series, ["cat", "fish"], value_labels=False).texts
    with pytest.raises(ValueError, match="series 'x' needs one value per label"):
        ah.grouped_bar_chart({"x": [1.0]}, ["cat", "fish"])


@pytest.mark.parametrize("values, fmt", [([[5.0, 20.0]], ".0f"), ([[-0.98, 0.82]], ".2f"),
                                         ([[0.013, 0.047]], ".2f")])
def test_colour_bar_labels_say_the_value_of_the_colour_beside_them(values, fmt):
    hm = ah.heatmap(np.zeros((1, 2)), fmt=fmt)
    hm.update(values)  # the bar is drawn once: its labels must follow the new scale
    figure = hm.ax.figure
    figure.canvas.draw()
    pixels = np.asarray(figure.canvas.buffer_rgba())
    bar = hm.colorbar.ax
    low, high = min(values[0]), max(values[0])
    shown = [(tick, label.get_text()) for tick, label in zip(bar.get_yticks(), bar.get_yticklabels())
             if label.get_text() and 0 <= tick <= 1]
    assert len(shown) >= 2
    for tick, label in shown:  # written as the cells are where that is exact (7.5 is not "8")
        value = float(label.replace("\N{MINUS SIGN}", "-"))
        assert tick == pytest.approx((value - low) / (high - low), abs=1e-9)  # the label's height
        # the bar's colour level with the label (2 px inside the bar's black outline at its ends)
        bottom, top = bar.bbox.y0, bar.bbox.y1
        y = min(max(bottom + tick * (top - bottom), bottom + 2), top - 2)
        colour = pixels[int(figure.bbox.height - y), int(bar.bbox.x0 + bar.bbox.width / 2), :3]
        expected = np.array(plt.get_cmap("viridis")((y - bottom) / (top - bottom))[:3]) * 255
        assert np.abs(colour - expected).max() <= 6, (label, colour, expected)


STATES = {2: ("now", "#fde725"), 1: ("done", "#21918c"), 0: ("to come", "#8c9ec4"),
          -1: ("skipped", "#4d4d4d")}  # notebook 09's tiles


def test_a_heatmap_of_states_colours_each_cell_by_its_state_and_names_them_in_a_legend():
    tiles = np.array([[2.0, -1.0, -1.0], [2.0, 0.0, -1.0], [1.0, 0.0, 0.0]])
    hm = ah.heatmap(tiles, categories=STATES, title="tile states")
    assert hm.colorbar is None and hm.ax.get_title() == "tile states"  # the key is the legend, not the title
    assert hm.limits == (-1.0, 2.0)  # its colours cover every state's value
    assert all(t.get_text() == "" for row in hm.texts for t in row)  # a state is a colour, not a number
    legend = hm.key
    assert [t.get_text() for t in legend.get_texts()] == ["now", "done", "to come", "skipped"]  # as given
    swatches = [matplotlib.colors.to_hex(h.get_facecolor()) for h in legend.legend_handles]
    assert swatches == ["#fde725", "#21918c", "#8c9ec4", "#4d4d4d"]
    for (i, j), state in np.ndenumerate(tiles):  # each cell's pixels are its state's swatch colour
        expected = np.array(matplotlib.colors.to_rgb(STATES[int(state)][1])) * 255
        assert np.abs(pixel(hm.ax, j + 0.2, i + 0.2) - expected).max() <= 1, (i, j)
    hm.update(np.ones((3, 3)))  # every tile done: still the same four-entry key
    assert np.abs(pixel(hm.ax, 0.2, 0.2) - np.array(matplotlib.colors.to_rgb("#21918c")) * 255).max() <= 1
    assert [t.get_text() for t in hm.key.get_texts()] == ["now", "done", "to come", "skipped"]


@pytest.mark.parametrize("call, message", [
    (lambda: ah.heatmap(np.array([[3.0, 0.0]]), categories=STATES), "[3.0] are none of the categories"),
    (lambda: ah.heatmap(np.array([[np.nan, 0.0]]), categories=STATES), "none of the categories"),
    (lambda: ah.heatmap(np.zeros((1, 2)), categories=STATES, vmin=0, vmax=1), "no probabilities, vmin/vmax"),
    (lambda: ah.heatmap(np.zeros((1, 2)), categories={}), "at least one"),
])
def test_a_heatmap_of_states_names_a_value_that_is_no_state(call, message):
    with pytest.raises(ValueError) as info:
        call()
    assert message in str(info.value)


def bar_heights_px(bars, dpi=72):
    renderer = rendered_at(bars.ax, dpi)
    return [bar.get_window_extent(renderer).height for bar in bars.bars]


def test_log_bars_show_values_a_thousand_times_apart_and_keep_their_axis():
    # 06's panel at its start, on the value axis its sliders' ends give (0.0098 .. 80 GiB)
    values, ends = [10.0, 1.25, 0.15625], (0.009765625, 80.0)
    linear = ah.bar_chart(values, ["a", "b", "c"], probabilities=False, value_range=ends)
    bars = ah.bar_chart(values, ["a", "b", "c"], probabilities=False, value_range=ends, log=True)
    assert min(bar_heights_px(linear)) < 2  # the smallest bar is lost on a linear axis ...
    assert min(bar_heights_px(bars)) >= 40  # ... and stands tall on a log one
    assert bars.ax.get_yscale() == "log"
    low, high = bars.ax.get_ylim()
    assert low == pytest.approx(0.001) and low <= ends[0] / 3  # the shortest bar stands half a decade
    assert high > ends[1]  # room above the tallest bar for its number
    renderer = rendered_at(bars.ax)
    shown = [t.get_text() for t in bars.ax.get_yticklabels()
             if t.get_text() and low <= t.get_position()[1] <= high]
    assert shown == ["0.001", "0.01", "0.1", "1", "10", "100"]  # powers of 10, written plainly
    assert all(t.get_window_extent(renderer).y1 <= bars.ax.bbox.y1 for t in bars.texts)  # numbers inside
    bars.update([80.0, 80.0, 1.25])
    assert bars.ax.get_ylim() == (low, high)  # fixed: the axis stays as the values move
    free = ah.bar_chart([2.0, 0.5], ["a", "b"], probabilities=False, log=True)
    assert free.ax.get_ylim()[0] == pytest.approx(0.1) and free.ax.get_ylim()[1] > 2.0  # follows the values


@pytest.mark.parametrize("call, message", [
    (lambda: ah.bar_chart([1.0, 0.0], ["a", "b"], probabilities=False, log=True), "values above 0"),
    (lambda: ah.bar_chart([1.0, 2.0], ["a", "b"], probabilities=False, value_range=(0, 2), log=True),
     "values above 0"),
    (lambda: ah.bar_chart([0.5, 0.5], ["a", "b"], log=True), "pass probabilities=False"),
])
def test_log_bars_name_what_a_log_axis_cannot_show(call, message):
    with pytest.raises(ValueError) as info:
        call()
    assert message in str(info.value)


def test_colour_bar_ticks_are_the_ones_matplotlibs_auto_locator_picks_at_every_bar_length():
    """_ScaleTicks works out how many ticks fit once per bar length, not at every move."""
    from matplotlib.ticker import MaxNLocator

    hm = ah.heatmap(np.zeros((2, 2)))
    figure, axis = hm.ax.figure, hm.colorbar.ax.yaxis
    for height in (1.5, 3, 6, 12):  # inches: from 2 ticks' room to more than 9
        figure.set_size_inches(4, height)
        figure.canvas.draw()
        auto = MaxNLocator(nbins="auto", steps=[1, 2, 2.5, 5, 10])
        auto.set_axis(axis)
        for low, high in ((0.0, 1.0), (-0.98, 0.82), (0.013, 0.047), (5.0, 2000.0)):
            close = 1e-9 * (high - low)
            expected = [v for v in auto.tick_values(low, high) if low - close <= v <= high + close]
            assert hm.colorbar.locator.values(low, high) == expected, (height, low, high)


ROOM = """
import numpy as np, attention_helpers as ah
hm = ah.heatmap(np.zeros((2, 2)), fmt=".2f")
hm.keep_room_for([(-2.0, 0.0), (-0.5, 0.5)])  # labels -2.00, -1.50, -1.00, -0.50, ...: some as wide
print(hm.label_room.get_text())
"""


@pytest.mark.slow  # three Pythons importing the package: seconds, not milliseconds
def test_the_room_kept_for_a_colour_bars_labels_is_the_same_in_every_python_process():
    """Which of equally wide labels the room copies must not follow Python's string hashing
    (a set's order, new in each process): the layout, and the stored pictures, would change
    from one run of a notebook to the next."""
    root = Path(__file__).resolve().parents[1]
    runs = [subprocess.Popen([sys.executable, "-c", ROOM], cwd=root, stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONHASHSEED": str(seed), "MPLBACKEND": "agg"})
            for seed in (1, 2, 3)]
    rooms = {run.communicate(timeout=120)[0].strip() for run in runs}
    assert len(rooms) == 1 and "" not in rooms, rooms


def test_every_number_stands_where_its_data_puts_it():
    """Each number of a heatmap stands at its cell's middle and each bar's on its bar's top, where
    the data's transform puts it (the browser's picture takes the same places from the layout)."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(7.3, 3.1), dpi=72, layout="constrained")
    hm = ah.heatmap(np.arange(12.0).reshape(3, 4) / 7, ax=left)
    bars = ah.bar_chart(np.array([0.2, 0.5, 0.3]), ["a", "b", "c"], ax=right)
    fig.canvas.draw()
    for (i, j), text in np.ndenumerate(np.array(hm.texts, dtype=object)):
        assert text.get_transform() == left.transData and text.get_position() == (j, i)
    for bar, text in zip(bars.bars, bars.texts):
        assert text.get_position() == pytest.approx((bar.get_x() + bar.get_width() / 2, bar.get_height()))


def test_signed_values_get_a_diverging_map_centred_on_zero():
    hm = ah.heatmap(np.array([[-0.5, 2.0], [1.0, 0.0]]), diverging=True)
    assert hm.image.get_cmap().name.startswith("RdBu_r") and hm.limits == (-2.0, 2.0)
    middle = hm.image.to_rgba(0.0)  # 0 is the map's middle, nearly white
    assert min(middle[:3]) > 0.9
    with pytest.raises(ValueError, match="diverging=True centres the colour scale on 0"):
        ah.heatmap(np.eye(2), diverging=True, vmin=0, vmax=1)
    plt.close("all")


@pytest.mark.parametrize("layout", ["constrained", "tight", None])
def test_a_colour_bar_leaves_a_gap_before_the_next_picture_in_a_constrained_figure_only(layout):
    fig, axes = plt.subplots(1, 2, layout=layout)
    wspace = fig.get_layout_engine().get().get("wspace") if layout == "constrained" else None
    ah.heatmap(np.eye(2), ax=axes[0])  # any layout: no error
    ah.heatmap(np.eye(2), ax=axes[1], colorbar=False)
    if layout == "constrained":
        assert wspace < ah.plots.BAR_GAP == fig.get_layout_engine().get()["wspace"]
    plt.close(fig)
