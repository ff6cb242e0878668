"""Notebook 09 (tiled attention): the reference solutions pass their checkers,
and each typical wrong answer gets its own hint."""

import numpy as np
import pytest

from attention_helpers.checks import check_causal_tiles, check_online_update
from tools.notebooks import ROOT, load_solutions, notebook_values
from tools.notebooks import hint as _message

sol = load_solutions("09")


def test_online_update_solution_passes():
    check = check_online_update(sol.my_online_update)
    assert check, check.message


def _update(rescale_l=True, rescale_acc=True, block_max=False, inverted=False):
    def update(m, total, acc, scores, values):
        new = scores.max() if block_max else max(m, scores.max())
        factor = np.exp(new - m) if inverted else np.exp(m - new)
        p = np.exp(scores - new)
        total = (total * factor if rescale_l else total) + p.sum()
        return new, total, (acc * factor if rescale_acc else acc) + p @ values
    return update


@pytest.mark.parametrize("fn, fragment", [
    (_update(rescale_acc=False), "acc was not rescaled"),
    (_update(rescale_l=False), "row_sum was not rescaled"),
    (_update(rescale_l=False, rescale_acc=False), "neither row_sum nor acc"),
    (_update(block_max=True), "not the largest of this block"),
    (_update(inverted=True), "became inf or nan"),
    (lambda m, total, acc, s, v: (m, total), "should return three things"),
    (lambda m, total, acc, s, v: (max(m, s.max()), 1.0, np.zeros(3)), "one number per value column"),
    (lambda m, total, acc, s, v: None, "still empty"),
])
def test_online_update_mistakes_get_their_hint(fn, fragment):
    with np.errstate(over="ignore", invalid="ignore"):
        assert fragment in _message(check_online_update(fn))


def test_causal_tiles_solution_passes():
    assert sol.my_tiles == 528
    check = check_causal_tiles(sol.my_tiles, 4096, 128)
    assert check, check.message


@pytest.mark.parametrize("answer, fragment", [
    (1024, "every tile of the grid"),
    (496, "left out the diagonal tiles"),
    (512, "half the grid"),
    (4096 * 4097 // 2, "counts scores, not tiles"),
    (32, "along one side"),
    (500, "is not it yet"),
    (None, "still empty"),
    ("many", "one whole number"),
])
def test_causal_tiles_mistakes_get_their_hint(answer, fragment):
    assert fragment in _message(check_causal_tiles(answer, 4096, 128))


# ---- the notebook shows the data the solutions use --------------------------------------

def test_notebook_exercise_data_matches_the_solution():
    shown = notebook_values(ROOT / "notebooks" / "09_tiled_attention.ipynb", "n_tokens", "block")
    assert shown == (sol.n_tokens, sol.block)
