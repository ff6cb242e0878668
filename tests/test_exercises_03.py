"""Notebook 03 (scaling by sqrt(d_k)): the reference solutions pass their checkers,
and each typical wrong answer gets its own hint."""

from pathlib import Path

import numpy as np
import pytest

import attention_helpers as ah
from attention_helpers.checks import check_dot_variance, check_scaled_attention
from tools.notebooks import load_solutions

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "03_scaling_by_sqrt_dk.ipynb"


sol = load_solutions("03")
D_K = sol.D_K_EXERCISE


# ---- Exercise 1: Var(q·k) ---------------------------------------------------

def test_variance_solution_passes():
    check = check_dot_variance(sol.my_variance, d_k=D_K)
    assert check, check.message
    assert check.message.startswith("✅")


def test_variance_solution_matches_a_simulation():
    rng = np.random.default_rng(0)
    dots = (rng.standard_normal((20000, D_K)) * rng.standard_normal((20000, D_K))).sum(axis=1)
    assert abs(dots.var() / sol.my_variance - 1) < 0.05


@pytest.mark.parametrize("answer, fragment", [
    (None, "still empty"),
    (np.sqrt(D_K), "standard deviation"),
    (11.31, "standard deviation"),  # √128 typed by hand, rounded
    (1, "single product"),
    (D_K**2, "variances simply add"),
    (0, "is the mean of q·k"),
    (-3, "cannot be negative"),
    (125.7, "looks like a measured value"),
    (50, "is not it"),
    ("128", "without quotes"),
    ([128, 128], "one number"),
])
def test_variance_mistakes_get_their_hint(answer, fragment):
    check = check_dot_variance(answer, d_k=D_K)
    assert not check
    assert fragment in check.message, check.message


def test_variance_other_d_k():
    assert check_dot_variance(64, d_k=64)
    assert "standard deviation" in check_dot_variance(8, d_k=64).message


# ---- Exercise 2: fix the unscaled attention ----------------------------------

def test_attention_solution_passes():
    check = check_scaled_attention(sol.my_attention)
    assert check, check.message
    assert check.message.startswith("✅")


def test_attention_solution_equals_helper():
    rng = np.random.default_rng(5)
    Q, K, V = rng.normal(size=(4, 32)), rng.normal(size=(6, 32)), rng.normal(size=(6, 3))
    assert np.allclose(sol.my_attention(Q, K, V), ah.scaled_dot_product_attention(Q, K, V)[0])


def _attention(scale=None, after=None, wrong_axis=False):
    """A wrong attention: scale(Q, K) divides the scores, after(Q) divides the output."""
    def fn(Q, K, V):
        scores = Q @ K.T / (scale(Q, K) if scale else 1.0)
        out = ah.softmax(scores, axis=0 if wrong_axis else -1) @ V
        return out / after(Q) if after else out
    return fn


@pytest.mark.parametrize("fn, fragment", [
    (lambda Q, K, V: None, "still empty"),
    (_attention(), "forgot to scale"),
    (_attention(scale=lambda Q, K: Q.shape[-1]), "divided by d_k instead of sqrt(d_k)"),
    (_attention(scale=lambda Q, K: np.sqrt(K.shape[0])), "number of keys"),
    (_attention(scale=lambda Q, K: np.sqrt(len(Q))), "number of queries"),
    (_attention(scale=lambda Q, K: 1 / np.sqrt(Q.shape[-1])), "multiplied by √d_k instead of dividing"),
    (_attention(after=lambda Q: np.sqrt(Q.shape[-1])), "divided after the softmax"),
    (_attention(scale=lambda Q, K: np.sqrt(64)), "you divided by √64 whatever the input"),
    (_attention(scale=lambda Q, K: np.sqrt(2)), "you divided by √2 whatever the input"),
    (_attention(scale=lambda Q, K: np.sqrt(Q.shape[-1]), wrong_axis=True), "wrong axis"),
    (_attention(scale=lambda Q, K: np.sqrt(Q.shape[-1]) + 1), "differs at index"),  # nothing known
    (lambda Q, K, V: Q @ K.T, "has shape (3, 5), expected (3, 2)"),
])
def test_attention_mistakes_get_their_hint(fn, fragment):
    check = check_scaled_attention(fn)
    assert not check
    assert fragment in check.message, check.message


def test_attention_raising_function_is_reported():
    def broken(Q, K, V):
        raise RuntimeError("boom")
    check = check_scaled_attention(broken)
    assert not check
    assert "raised RuntimeError: boom" in check.message
