"""Notebook 03 (scaling by sqrt(d_k)): the reference solutions pass their checkers,
and each typical wrong answer is named by its own mistake key."""

from pathlib import Path

import numpy as np
import pytest

import attention_helpers as ah
import solutions.nb03 as sol
from attention_helpers.checks import check_dot_variance, check_scaled_attention

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "03_scaling_by_sqrt_dk.ipynb"


D_K = sol.D_K_EXERCISE


# ---- Exercise 1: Var(q·k) ---------------------------------------------------

def test_variance_solution_passes():
    check = check_dot_variance(sol.my_variance, d_k=D_K)
    assert check, check.text


def test_variance_solution_matches_a_simulation():
    rng = np.random.default_rng(0)
    dots = (rng.standard_normal((20000, D_K)) * rng.standard_normal((20000, D_K))).sum(axis=1)
    assert abs(dots.var() / sol.my_variance - 1) < 0.05


@pytest.mark.parametrize("answer, kind, mistake", [
    (None, "empty", None),
    (np.sqrt(D_K), "mistake", "std_not_variance"),
    (11.31, "mistake", "std_not_variance"),  # √128 typed by hand, rounded
    (1, "mistake", "one_product"),
    (D_K**2, "mistake", "d_k_squared"),
    (0, "mistake", "mean_not_variance"),
    (-3, "wrong_value", "negative"),
    (125.7, "wrong_value", "measured"),
    (50, "wrong_value", None),
    ("128", "not_numbers", None),
    ([128, 128], "wrong_shape", None),
])
def test_variance_mistakes_are_named(answer, kind, mistake):
    check = check_dot_variance(answer, d_k=D_K)
    assert (check.kind, check.mistake) == (kind, mistake), check.text


def test_variance_other_d_k():
    assert check_dot_variance(64, d_k=64)
    assert check_dot_variance(8, d_k=64).mistake == "std_not_variance"


# ---- Exercise 2: fix the unscaled attention ----------------------------------

def test_attention_solution_passes():
    check = check_scaled_attention(sol.my_attention)
    assert check, check.text


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


@pytest.mark.parametrize("fn, kind, mistake", [
    (lambda Q, K, V: None, "empty", None),
    (_attention(), "mistake", "no_scale"),
    (_attention(scale=lambda Q, K: Q.shape[-1]), "mistake", "divided_by_d_k"),
    (_attention(scale=lambda Q, K: np.sqrt(K.shape[0])), "mistake", "sqrt_n_keys"),
    (_attention(scale=lambda Q, K: np.sqrt(len(Q))), "mistake", "sqrt_n_queries"),
    (_attention(scale=lambda Q, K: 1 / np.sqrt(Q.shape[-1])), "mistake", "multiplied_by_sqrt"),
    (_attention(after=lambda Q: np.sqrt(Q.shape[-1])), "mistake", "scaled_after_softmax"),
    (_attention(scale=lambda Q, K: np.sqrt(64)), "mistake", "fixed_d_k"),
    (_attention(scale=lambda Q, K: np.sqrt(2)), "mistake", "fixed_d_k"),
    (_attention(scale=lambda Q, K: np.sqrt(Q.shape[-1]), wrong_axis=True), "mistake", "wrong_axis"),
    (_attention(scale=lambda Q, K: np.sqrt(Q.shape[-1]) + 1), "wrong_value", None),  # nothing known
    (lambda Q, K, V: Q @ K.T, "wrong_shape", None),
])
def test_attention_mistakes_are_named(fn, kind, mistake):
    check = check_scaled_attention(fn)
    assert (check.kind, check.mistake) == (kind, mistake), check.text


def test_attention_raising_function_is_reported():
    def broken(Q, K, V):
        raise RuntimeError("boom")
    check = check_scaled_attention(broken)
    assert check.kind == "raised" and isinstance(check.error, RuntimeError)
    assert "RuntimeError: boom" in check.hint  # the student reads their own error
