"""Notebook 05 (weighted sum and self-attention): the reference solutions pass their
checkers, and each typical wrong answer is named by its own mistake key. Multi-head
attention and padding masks are notebook 05b's: test_exercises_05b.py."""

from pathlib import Path

import numpy as np
import pytest

import attention_helpers as ah
import solutions.nb05 as sol
from attention_helpers.checks import check_masked_attention, check_output_row
from tools.notebooks import code_sources

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "05_weighted_sum_and_self_attention.ipynb"


# ---- exercise 1: one output row by hand --------------------------------------

def _row_check(answer):
    return check_output_row(answer, sol.q_sat, sol.K_ex, sol.V_ex)


def test_output_row_solution_passes():
    check = _row_check(sol.out_sat)
    assert check, check.text


def test_output_row_solution_matches_library():
    expected, _ = ah.scaled_dot_product_attention(sol.q_sat[None, :], sol.K_ex, sol.V_ex)
    assert np.allclose(sol.out_sat, expected[0])


def test_output_row_accepts_a_one_row_matrix():
    assert _row_check(sol.out_sat[None, :])


def _row_pieces():
    scores = sol.K_ex @ sol.q_sat
    weights = ah.softmax(scores / np.sqrt(2))
    return scores, weights


@pytest.mark.parametrize("wrong, kind, mistake", [
    (lambda s, w: (s / np.sqrt(2)) @ sol.V_ex, "mistake", "no_softmax"),
    (lambda s, w: s @ sol.V_ex, "mistake", "raw_scores_times_V"),
    (lambda s, w: w @ sol.K_ex, "mistake", "times_K"),
    (lambda s, w: ah.softmax(s) @ sol.V_ex, "mistake", "no_scale"),
    (lambda s, w: ah.softmax(s / 2) @ sol.V_ex, "mistake", "divided_by_d_k"),
    (lambda s, w: w, "mistake", "returned_weights"),
    (lambda s, w: None, "empty", None),
    (lambda s, w: w @ sol.V_ex + 0.1, "wrong_value", None),
])
def test_output_row_mistakes_are_named(wrong, kind, mistake):
    scores, weights = _row_pieces()
    check = _row_check(wrong(scores, weights))
    assert (check.kind, check.mistake) == (kind, mistake), check.text


# ---- exercise 2: the whole attention function, with a mask ---------------------

def test_my_attention_solution_passes():
    check = check_masked_attention(sol.my_attention)
    assert check, check.text


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


@pytest.mark.parametrize("fn, kind, mistake", [
    (_stub, "empty", None),
    (_unscaled, "mistake", "no_scale"),
    (_wrong_axis, "mistake", "wrong_axis"),
    (_returns_weights, "mistake", "returned_weights"),
    (_ignores_mask, "mistake", "mask_ignored"),
    (_inverted_mask, "mistake", "mask_inverted"),
    (_zero_for_hidden, "mistake", "hidden_set_to_zero"),
    (_mask_after_softmax, "mistake", "zeroed_after_softmax"),
    (_nan_with_mask, "mistake", "not_finite"),
    (_no_mask_argument, "raised", None),
])
def test_my_attention_mistakes_are_named(fn, kind, mistake):
    check = check_masked_attention(fn)
    assert (check.kind, check.mistake) == (kind, mistake), check.text


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
