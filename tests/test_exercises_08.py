"""Notebook 08 (the decoder block): the reference solutions pass their checkers,
and each typical wrong answer is named by its own mistake key."""

import pytest

import solutions.nb08 as sol
from attention_helpers.checks import check_block_params, check_pre_norm_block
from tools.notebooks import ROOT, notebook_values

D, F = 768, 3072


# ---- exercise 1: the weights of one block ------------------------------------------------

def test_block_params_solution_passes():
    assert sol.my_block_params == 7_079_424  # 4·768² + 2·768·3072 + 2·768, by hand
    check = check_block_params(sol.my_block_params, D, F)
    assert check, check.text


@pytest.mark.parametrize("answer, kind, mistake", [
    (4 * D * D + 2 * D * F, "mistake", "no_gains"),
    (3 * D * D + 2 * D * F + 2 * D, "mistake", "three_attention_matrices"),
    (4 * D * D + D * F + 2 * D, "mistake", "one_ffn_matrix"),
    (4 * D * D + 2 * D * F + 4 * D, "mistake", "norm_bias"),
    (4 * D * D + 2 * D * F + D, "mistake", "one_norm"),
    (4 * D * D, "mistake", "attention_only"),
    (2 * D * F, "mistake", "ffn_only"),
    (123, "wrong_value", None),
    (None, "empty", None),
    ("7M", "not_numbers", None),
])
def test_block_params_mistakes_are_named(answer, kind, mistake):
    check = check_block_params(answer, D, F)
    assert (check.kind, check.mistake) == (kind, mistake), check.text


# ---- exercise 2: the pre-norm block ------------------------------------------------------

def test_pre_norm_block_solution_passes():
    check = check_pre_norm_block(sol.my_block)
    assert check, check.text


def _post_norm(X, attention, ffn, norm):
    h = norm(X + attention(X))
    return norm(h + ffn(h))


@pytest.mark.parametrize("fn, kind, mistake", [
    (_post_norm, "mistake", "post_norm"),
    (lambda X, a, f, n: a(n(X)) + f(n(a(n(X)))), "mistake", "no_first_residual"),
    (lambda X, a, f, n: f(n(X + a(n(X)))), "mistake", "no_second_residual"),
    (lambda X, a, f, n: f(n(a(n(X)))), "mistake", "no_residuals"),
    (lambda X, a, f, n: X + a(n(X)) + f(n(X)), "mistake", "ffn_reads_X"),
    (lambda X, a, f, n: X + a(X) + f(X + a(X)), "mistake", "no_norm"),
    (lambda X, a, f, n: X @ X, "raised", None),
    (lambda X, a, f, n: None, "empty", None),
])
def test_pre_norm_block_mistakes_are_named(fn, kind, mistake):
    check = check_pre_norm_block(fn)
    assert (check.kind, check.mistake) == (kind, mistake), check.text


# ---- the notebook shows the data the solutions use --------------------------------------

def test_notebook_exercise_data_matches_the_solution():
    shown = notebook_values(ROOT / "notebooks" / "08_the_decoder_block.ipynb", "width", "width_ff")
    assert shown == (sol.width, sol.width_ff)
