"""Notebook 02 (dot-product scores): the reference solutions pass their checkers,
and each typical wrong answer is named by its own mistake key."""

from pathlib import Path

import numpy as np
import pytest

import attention_helpers as ah
import solutions.nb02 as sol
from attention_helpers.checks import check_eats_fish_score, check_scores, check_scores_shape
from tools.notebooks import notebook_value

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "02_dot_product_scores.ipynb"


# ---- exercise 1: one score by hand ------------------------------------------

def test_eats_fish_solution_passes():
    for answer in (sol.score_eats_fish, float(sol.score_eats_fish), np.float64(sol.score_eats_fish),
                   [sol.score_eats_fish]):
        check = check_eats_fish_score(answer)
        assert check, check.text


def test_eats_fish_notebook_shows_the_checked_weights():
    # the notebook types the weights by hand; the checker and the solution read them from examples
    W_Q2, W_K_ex = ah.examples.scores_exercise_weights()
    assert np.array_equal(notebook_value(NOTEBOOK, "W_Q2"), W_Q2)
    assert np.array_equal(notebook_value(NOTEBOOK, "W_K_ex"), W_K_ex)
    _, X, _, W_K, _ = ah.examples.cat_eats_fish()
    assert np.allclose(W_K, np.eye(2))  # K2 of Step 7, which a hint names


@pytest.mark.parametrize("answer, kind, mistake", [
    (sol.Q2[2] @ sol.K_ex[1], "mistake", "reversed_pair"),
    (sol.Q2[1] @ sol.K2[2], "mistake", "K2_not_K_ex"),
    (sol.X[1] @ sol.X[2], "mistake", "identity_weights"),
    (sol.Q2[1] * sol.K_ex[2], "mistake", "products_not_summed"),
    (sol.Q2[1] + sol.K_ex[2], "mistake", "vectors_added"),
    (sol.Q2[1] @ sol.K_ex[1], "mistake", "q_eats_k_eats"),
    (sol.Q2[2] @ sol.K_ex[2], "mistake", "q_fish_k_fish"),
    (sol.Q2[0] @ sol.K_ex[0], "mistake", "q_cat_k_cat"),
    (sol.score_eats_fish - 1, "wrong_value", None),
    ([1.0, 2.0, 3.0], "wrong_shape", None),
    (None, "empty", None),
    ("twenty", "not_numbers", None),
])
def test_eats_fish_wrong_answers_are_named(answer, kind, mistake):
    check = check_eats_fish_score(answer)
    assert (check.kind, check.mistake) == (kind, mistake), check.text
    # no hint gives the answer away
    assert f"{sol.score_eats_fish:g}" not in check.hint.replace(f"{sol.score_eats_fish - 1:g}", "")


# ---- exercise 2: my_scores -------------------------------------------------

def test_scores_solution_passes():
    check = check_scores(sol.my_scores)
    assert check, check.text


@pytest.mark.parametrize("fn, kind, mistake", [
    (lambda Q, K: K @ Q.T, "mistake", "transposed_product"),
    (lambda Q, K: Q.T @ K, "mistake", "QT_K"),
    (lambda Q, K: K.T @ Q, "mistake", "KT_Q"),
    (lambda Q, K: Q @ K, "raised", "K_not_transposed"),
    (lambda Q, K: np.dot(Q, K), "raised", "K_not_transposed"),
    (lambda Q, K: Q * K, "mistake", "elementwise"),
    (lambda Q, K: Q * K.T, "raised", "elementwise"),
    (lambda Q, K: (Q * K).sum(axis=1), "mistake", "diagonal_only"),
    (lambda Q, K: Q @ K.T / np.sqrt(Q.shape[1]), "mistake", "scaled_too_early"),
    (lambda Q, K: Q @ K.T + 1.0, "wrong_value", None),
    (lambda Q, K: None, "empty", None),
    (lambda Q, K: 1 / 0, "raised", None),
    ("not a function", "not_callable", None),
])
def test_scores_wrong_answers_are_named(fn, kind, mistake):
    check = check_scores(fn)
    assert (check.kind, check.mistake) == (kind, mistake), check.text


# ---- exercise 3: the shape of QKᵀ ------------------------------------------

def test_shape_solution_passes():
    for answer in (sol.shape_for_5_tokens, list(sol.shape_for_5_tokens)):
        check = check_scores_shape(answer)
        assert check, check.text


@pytest.mark.parametrize("answer, kind, mistake", [
    ((5, 8), "mistake", "shape_of_Q"),
    ((8, 8), "mistake", "QT_K"),
    ((8, 5), "mistake", "shape_of_KT"),
    ((5,), "mistake", "diagonal_only"),
    ((3, 3), "wrong_value", None),
    (5, "wrong_type", None),
    (None, "empty", None),
])
def test_shape_wrong_answers_are_named(answer, kind, mistake):
    check = check_scores_shape(answer)
    assert (check.kind, check.mistake) == (kind, mistake), check.text
