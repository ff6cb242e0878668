"""The heatmap shows what a reader needs: labels, axis titles, values, a colour scale."""

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


@pytest.mark.parametrize("low, high", [(-0.98, 0.82), (0.0, 1.0), (5.0, 20.0), (-192.0, 288.0),
                                       (0.013, 0.047)])
def test_colour_bar_ticks_sit_where_their_labels_say(low, high):
    hm = ah.heatmap([[low, high]])
    positions, labels = hm.colour_bar_ticks(low, high)
    values = [float(label.replace("\N{MINUS SIGN}", "-")) for label in labels]
    assert len(values) >= 3 and all(0 <= p <= 1 for p in positions)
    assert values == sorted(values) and len(set(labels)) == len(labels)
    for p, v in zip(positions, values):  # each label is the value at its height, to its printed digits
        assert abs(low + p * (high - low) - v) <= 0.5 * 10 ** -len(labels[0].partition(".")[2])


def test_a_constant_heatmap_gets_one_colour_bar_label():
    hm = ah.heatmap(np.full((2, 2), -1.5))
    assert [t.get_text() for t in hm.tick_labels if t.get_visible()] == ["\N{MINUS SIGN}1.5"]
    assert hm.colour_bar_ticks(0.013, 0.0141) == ([0.5], ["0.01"])  # narrower than 0.01: one label


@pytest.mark.parametrize("low, high", [(-0.98, 0.82), (5.0, 20.0), (-192.0, 288.0), (0.013, 0.047),
                                       (-0.3, 0.9), (1234.5, 1300.0)])
def test_no_colour_bar_label_is_wider_than_the_widest_one_its_scale_allows(low, high):
    from attention_helpers.plots import widest_tick_label

    hm = ah.heatmap([[low, high]])
    renderer, font = hm.ax.figure.canvas.get_renderer(), hm.tick_labels[0].get_fontproperties()
    width = lambda s: renderer.get_text_width_height_descent(s, font, ismath=False)[0]  # noqa: E731
    widest = width(widest_tick_label(low, high))
    for lo in np.linspace(low, high, 7):  # and every narrower scale inside it
        for hi in np.linspace(lo, high, 5)[1:]:
            assert max(map(width, hm.colour_bar_ticks(lo, hi)[1])) <= widest, (lo, hi)


@pytest.mark.parametrize("fmt, negative_zero, shown", [
    (".3f", -4e-4, "0.000"), (".2f", -0.0, "0.00"), (".1e", -0.0, "0.0e+00"), (".1%", -1e-5, "0.0%"),
])
def test_numbers_that_round_to_zero_show_no_minus_sign(fmt, negative_zero, shown):
    # A minus sign with no digit behind it says nothing but "rounding happened here".
    hm = ah.heatmap(np.array([[negative_zero, -0.5]]), ["q"], ["k0", "k1"], fmt=fmt)
    assert hm.texts[0][0].get_text() == shown
    assert hm.texts[0][1].get_text() == format(-0.5, fmt)  # a real negative keeps its sign
    bars = ah.bar_chart(np.array([negative_zero, 0.5]), ["a", "b"], fmt=fmt)
    assert bars.texts[0].get_text() == shown
