"""Notebook 09 (tiled attention): the reference solutions pass their checkers,
and each typical wrong answer is named by its own mistake key."""

import numpy as np
import pytest

import solutions.nb09 as sol
from attention_helpers.checks import check_causal_tiles, check_online_update
from tools.notebooks import ROOT, notebook_values


def test_online_update_solution_passes():
    check = check_online_update(sol.my_online_update)
    assert check, check.text


def _update(rescale_l=True, rescale_acc=True, block_max=False, inverted=False):
    def update(m, total, acc, scores, values):
        new = scores.max() if block_max else max(m, scores.max())
        factor = np.exp(new - m) if inverted else np.exp(m - new)
        p = np.exp(scores - new)
        total = (total * factor if rescale_l else total) + p.sum()
        return new, total, (acc * factor if rescale_acc else acc) + p @ values
    return update


@pytest.mark.parametrize("fn, kind, mistake", [
    (_update(rescale_acc=False), "mistake", "acc_not_rescaled"),
    (_update(rescale_l=False), "mistake", "row_sum_not_rescaled"),
    (_update(rescale_l=False, rescale_acc=False), "mistake", "neither_rescaled"),
    (_update(block_max=True), "mistake", "block_max"),
    (_update(inverted=True), "mistake", "not_finite"),
    (lambda m, total, acc, s, v: (m, total), "wrong_type", None),
    (lambda m, total, acc, s, v: (max(m, s.max()), 1.0, np.zeros(3)), "wrong_shape", None),
    (lambda m, total, acc, s, v: None, "empty", None),
])
def test_online_update_mistakes_are_named(fn, kind, mistake):
    with np.errstate(over="ignore", invalid="ignore"):
        check = check_online_update(fn)
        assert (check.kind, check.mistake) == (kind, mistake), check.text


def test_causal_tiles_solution_passes():
    assert sol.my_tiles == 528
    check = check_causal_tiles(sol.my_tiles, 4096, 128)
    assert check, check.text


@pytest.mark.parametrize("answer, kind, mistake", [
    (1024, "mistake", "whole_grid"),
    (496, "mistake", "no_diagonal"),
    (512, "mistake", "half_grid"),
    (4096 * 4097 // 2, "mistake", "counted_scores"),
    (32, "mistake", "blocks_per_side"),
    (500, "wrong_value", None),
    (None, "empty", None),
    ("many", "not_numbers", None),
])
def test_causal_tiles_mistakes_are_named(answer, kind, mistake):
    check = check_causal_tiles(answer, 4096, 128)
    assert (check.kind, check.mistake) == (kind, mistake), check.text


# ---- the notebook shows the data the solutions use --------------------------------------

def test_notebook_exercise_data_matches_the_solution():
    shown = notebook_values(ROOT / "notebooks" / "09_tiled_attention.ipynb", "n_tokens", "block")
    assert shown == (sol.n_tokens, sol.block)
