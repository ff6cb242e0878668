"""Notebook 05 (weighted sum and self-attention): the reference solutions pass their
checkers, and each typical wrong answer gets its own hint."""

from pathlib import Path

import numpy as np
import pytest
from notebook_tools import code_sources, load_solutions
from notebook_tools import hint as _message

import attention_helpers as ah
from attention_helpers.checks import check_masked_attention, check_output_row

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "05_weighted_sum_and_self_attention.ipynb"


sol = load_solutions("05")


# ---- exercise 1: one output row by hand --------------------------------------

def _row_check(answer):
    return check_output_row(answer, sol.q_sat, sol.K_ex, sol.V_ex)


def test_output_row_solution_passes():
    check = _row_check(sol.out_sat)
    assert check, check.message
    assert check.message.startswith("✅")


def test_output_row_solution_matches_library():
    expected, _ = ah.scaled_dot_product_attention(sol.q_sat[None, :], sol.K_ex, sol.V_ex)
    assert np.allclose(sol.out_sat, expected[0])


def test_output_row_accepts_a_one_row_matrix():
    assert _row_check(sol.out_sat[None, :])


def _row_pieces():
    scores = sol.K_ex @ sol.q_sat
    weights = ah.softmax(scores / np.sqrt(2))
    return scores, weights


@pytest.mark.parametrize("wrong, fragment", [
    (lambda s, w: (s / np.sqrt(2)) @ sol.V_ex, "scaled scores by V"),
    (lambda s, w: s @ sol.V_ex, "raw scores by V"),
    (lambda s, w: w @ sol.K_ex, "multiplied the weights by K"),
    (lambda s, w: ah.softmax(s) @ sol.V_ex, "forgot to scale"),
    (lambda s, w: ah.softmax(s / 2) @ sol.V_ex, "instead of sqrt(d_k)"),
    (lambda s, w: w, "row of weights"),
    (lambda s, w: None, "still empty"),
    (lambda s, w: w @ sol.V_ex + 0.1, "differs at index"),
])
def test_output_row_mistakes_get_their_hint(wrong, fragment):
    scores, weights = _row_pieces()
    assert fragment in _message(_row_check(wrong(scores, weights)))


# ---- exercise 2: the whole attention function, with a mask ---------------------

def test_my_attention_solution_passes():
    check = check_masked_attention(sol.my_attention)
    assert check, check.message
    assert "with and without a mask" in check.message


def test_my_attention_solution_matches_library_with_causal_mask():
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(5, 3)), rng.normal(size=(5, 3)), rng.normal(size=(5, 4))
    mask = ah.causal_mask(5)
    expected, _ = ah.scaled_dot_product_attention(Q, K, V, mask=mask)
    assert np.allclose(sol.my_attention(Q, K, V, mask), expected)


def _scaled(Q, K):
    return Q @ K.T / np.sqrt(Q.shape[-1])


def _unscaled(Q, K, V, mask=None):
    return ah.softmax(Q @ K.T) @ V


def _wrong_axis(Q, K, V, mask=None):
    return ah.softmax(_scaled(Q, K), axis=0) @ V


def _returns_weights(Q, K, V, mask=None):
    return ah.softmax(_scaled(Q, K))


def _ignores_mask(Q, K, V, mask=None):
    return ah.softmax(_scaled(Q, K)) @ V


def _inverted_mask(Q, K, V, mask=None):
    s = _scaled(Q, K)
    if mask is not None:
        s = np.where(mask, -np.inf, s)
    return ah.softmax(s) @ V


def _zero_for_hidden(Q, K, V, mask=None):
    s = _scaled(Q, K)
    if mask is not None:
        s = np.where(mask, s, 0.0)
    return ah.softmax(s) @ V


def _mask_after_softmax(Q, K, V, mask=None):
    w = ah.softmax(_scaled(Q, K))
    if mask is not None:
        w = w * mask
    return w @ V


def _nan_with_mask(Q, K, V, mask=None):
    s = _scaled(Q, K)
    if mask is not None:
        s = np.where(mask, s, np.nan)
    return np.exp(s) / np.exp(s).sum(axis=-1, keepdims=True) @ V


def _no_mask_argument(Q, K, V):
    return ah.softmax(_scaled(Q, K)) @ V


def _stub(Q, K, V, mask=None):
    return None


@pytest.mark.parametrize("fn, fragment", [
    (_stub, "still empty"),
    (_unscaled, "forgot to scale"),
    (_wrong_axis, "wrong axis"),
    (_returns_weights, "returned the weights"),
    (_ignores_mask, "the mask had no effect"),
    (_inverted_mask, "wrong way round"),
    (_zero_for_hidden, "exp(0) = 1"),
    (_mask_after_softmax, "after the softmax"),
    (_nan_with_mask, "inf or nan"),
    (_no_mask_argument, "raised TypeError"),
])
def test_my_attention_mistakes_get_their_hint(fn, fragment):
    assert fragment in _message(check_masked_attention(fn))


def test_a_tuple_result_is_read_as_output():
    def with_weights(Q, K, V, mask=None):
        return sol.my_attention(Q, K, V, mask), None
    assert check_masked_attention(with_weights)


# ---- the notebook itself ---------------------------------------------------------

def test_notebook_exercise_data_matches_solutions():
    cell = next(src for src in code_sources(NOTEBOOK) if src.startswith("q_sat = "))
    namespace = {"np": np}
    exec(cell, namespace)
    for name in ("q_sat", "K_ex", "V_ex"):
        assert np.array_equal(namespace[name], getattr(sol, name)), name
