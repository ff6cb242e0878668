"""Notebook 02 (dot-product scores): the reference solutions pass their checkers,
and each typical wrong answer gets its own hint."""

from pathlib import Path

import numpy as np
import pytest

import attention_helpers as ah
from attention_helpers.checks import check_eats_fish_score, check_scores, check_scores_shape
from tools.notebooks import hint as _message
from tools.notebooks import load_solutions, notebook_value

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "02_dot_product_scores.ipynb"


sol = load_solutions("02")


# ---- exercise 1: one score by hand ------------------------------------------

def test_eats_fish_solution_passes():
    for answer in (sol.score_eats_fish, float(sol.score_eats_fish), np.float64(sol.score_eats_fish),
                   [sol.score_eats_fish]):
        check = check_eats_fish_score(answer)
        assert check, check.message
        assert check.message.startswith("✅")


def test_eats_fish_notebook_shows_the_checked_weights():
    # the notebook types the weights by hand; the checker and the solution read them from examples
    W_Q2, W_K_ex = ah.examples.scores_exercise_weights()
    assert np.array_equal(notebook_value(NOTEBOOK, "W_Q2"), W_Q2)
    assert np.array_equal(notebook_value(NOTEBOOK, "W_K_ex"), W_K_ex)
    _, X, _, W_K, _ = ah.examples.cat_eats_fish()
    assert np.allclose(W_K, np.eye(2))  # K2 of Step 7, which a hint names


@pytest.mark.parametrize("answer, fragment", [
    (sol.Q2[2] @ sol.K_ex[1], "the pair is reversed"),
    (sol.Q2[1] @ sol.K2[2], "fish row of K2 from Step 7"),
    (sol.X[1] @ sol.X[2], "score with identity weights"),
    (sol.Q2[1] * sol.K_ex[2], "add them up"),
    (sol.Q2[1] + sol.K_ex[2], "you added the two vectors"),
    (sol.Q2[1] @ sol.K_ex[1], "q_eats · k_eats"),
    (sol.Q2[2] @ sol.K_ex[2], "q_fish · k_fish"),
    (sol.Q2[0] @ sol.K_ex[0], "q_cat · k_cat"),
    (sol.score_eats_fish - 1, "Multiply the eats row of Q2 and the fish row of K_ex"),
    ([1.0, 2.0, 3.0], "a score is a single number"),
    (None, "still empty"),
    ("twenty", "array of numbers"),
])
def test_eats_fish_wrong_answers_get_their_hint(answer, fragment):
    message = _message(check_eats_fish_score(answer))
    assert fragment in message
    assert f"{sol.score_eats_fish:g}" not in message.replace(f"{sol.score_eats_fish - 1:g}", "")


# ---- exercise 2: my_scores -------------------------------------------------

def test_scores_solution_passes():
    check = check_scores(sol.my_scores)
    assert check, check.message
    assert check.message.startswith("✅")


@pytest.mark.parametrize("fn, fragment", [
    (lambda Q, K: K @ Q.T, "you returned K @ Q.T"),
    (lambda Q, K: Q.T @ K, "Q.T @ K has shape (d_k, d_k)"),
    (lambda Q, K: K.T @ Q, "K.T @ Q has shape (d_k, d_k)"),
    (lambda Q, K: Q @ K, "Did you forget to transpose K?"),
    (lambda Q, K: np.dot(Q, K), "Did you forget to transpose K?"),
    (lambda Q, K: Q * K, "Q * K multiplies entry by entry"),
    (lambda Q, K: Q * K.T, "broadcasting error"),
    (lambda Q, K: (Q * K).sum(axis=1), "only the diagonal"),
    (lambda Q, K: Q @ K.T / np.sqrt(Q.shape[1]), "you divided by √d_k"),
    (lambda Q, K: Q @ K.T + 1.0, "differs at index"),
    (lambda Q, K: None, "still empty"),
    (lambda Q, K: 1 / 0, "ZeroDivisionError"),
    ("not a function", "expected a function"),
])
def test_scores_wrong_answers_get_their_hint(fn, fragment):
    assert fragment in _message(check_scores(fn))


# ---- exercise 3: the shape of QKᵀ ------------------------------------------

def test_shape_solution_passes():
    for answer in (sol.shape_for_5_tokens, list(sol.shape_for_5_tokens)):
        check = check_scores_shape(answer)
        assert check, check.message
        assert check.message.startswith("✅")


@pytest.mark.parametrize("answer, fragment", [
    ((5, 8), "the shape of Q (and of K)"),
    ((8, 8), "would be QᵀK"),
    ((8, 5), "the shape of Kᵀ"),
    ((5,), "only the diagonal"),
    ((3, 3), "one row per query and one column per key"),
    (5, "as a tuple"),
    (None, "still empty"),
])
def test_shape_wrong_answers_get_their_hint(answer, fragment):
    assert fragment in _message(check_scores_shape(answer))
