"""Notebook 08 (the decoder block): the reference solutions pass their checkers,
and each typical wrong answer gets its own hint."""

import pytest

from attention_helpers.checks import check_block_params, check_pre_norm_block
from tools.notebooks import ROOT, load_solutions, notebook_values
from tools.notebooks import hint as _message

sol = load_solutions("08")
D, F = 768, 3072


# ---- exercise 1: the weights of one block ------------------------------------------------

def test_block_params_solution_passes():
    assert sol.my_block_params == 7_079_424  # 4·768² + 2·768·3072 + 2·768, by hand
    check = check_block_params(sol.my_block_params, D, F)
    assert check, check.message


@pytest.mark.parametrize("answer, fragment", [
    (4 * D * D + 2 * D * F, "the two RMSNorm gains"),
    (3 * D * D + 2 * D * F + 2 * D, "attention has four matrices"),
    (4 * D * D + D * F + 2 * D, "the feed-forward block has two matrices"),
    (4 * D * D + 2 * D * F + 4 * D, "no bias β"),
    (4 * D * D + 2 * D * F + D, "there are two norms"),
    (4 * D * D, "that is attention alone"),
    (2 * D * F, "that is the feed-forward block alone"),
    (123, "is not it yet"),
    (None, "still empty"),
    ("7M", "one whole number"),
])
def test_block_params_mistakes_get_their_hint(answer, fragment):
    assert fragment in _message(check_block_params(answer, D, F))


# ---- exercise 2: the pre-norm block ------------------------------------------------------

def test_pre_norm_block_solution_passes():
    check = check_pre_norm_block(sol.my_block)
    assert check, check.message


def _post_norm(X, attention, ffn, norm):
    h = norm(X + attention(X))
    return norm(h + ffn(h))


@pytest.mark.parametrize("fn, fragment", [
    (_post_norm, "post-norm block"),
    (lambda X, a, f, n: a(n(X)) + f(n(a(n(X)))), "first residual is missing"),
    (lambda X, a, f, n: f(n(X + a(n(X)))), "second residual is missing"),
    (lambda X, a, f, n: f(n(a(n(X)))), "both residuals are missing"),
    (lambda X, a, f, n: X + a(n(X)) + f(n(X)), "must read h"),
    (lambda X, a, f, n: X + a(X) + f(X + a(X)), "norm is missing"),
    (lambda X, a, f, n: X @ X, "your function raised ValueError"),
    (lambda X, a, f, n: None, "still empty"),
])
def test_pre_norm_block_mistakes_get_their_hint(fn, fragment):
    assert fragment in _message(check_pre_norm_block(fn))


# ---- the notebook shows the data the solutions use --------------------------------------

def test_notebook_exercise_data_matches_the_solution():
    shown = notebook_values(ROOT / "notebooks" / "08_the_decoder_block.ipynb", "width", "width_ff")
    assert shown == (sol.width, sol.width_ff)
