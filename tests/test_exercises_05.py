"""Notebook 05 (weighted sum and self-attention): the reference solutions pass their
checkers, and each typical wrong answer gets its own hint."""

from pathlib import Path

import numpy as np
import pytest

import attention_helpers as ah
from attention_helpers.checks import (
    check_masked_attention,
    check_multi_head,
    check_output_row,
    check_padding_mask,
)
from tools.notebooks import code_sources, load_solutions
from tools.notebooks import hint as _message

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


# ---- exercise 3: multi-head attention --------------------------------------------
# Each wrong function is written the way a student would write it, not derived from the
# checker's own list of mistakes.

def _heads(M, n_heads):
    n, width = M.shape
    return M.reshape(n, n_heads, width // n_heads).transpose(1, 0, 2)


def _mh_loop(X, W_Q, W_K, W_V, W_O, n_heads):           # right, written as a loop over heads
    d_head = W_Q.shape[1] // n_heads
    outs = []
    for h in range(n_heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        q, k, v = X @ W_Q[:, cols], X @ W_K[:, cols], X @ W_V[:, cols]
        outs.append(ah.softmax(q @ k.T / np.sqrt(d_head)) @ v)
    return np.concatenate(outs, axis=1) @ W_O


def _mh_scaled_by(scale_of):
    def fn(X, W_Q, W_K, W_V, W_O, n_heads):
        n, width = X.shape[0], W_Q.shape[1]
        Q, K, V = (_heads(X @ W, n_heads) for W in (W_Q, W_K, W_V))
        w = ah.softmax(Q @ K.transpose(0, 2, 1) / np.sqrt(scale_of(width, n_heads)))
        return (w @ V).transpose(1, 0, 2).reshape(n, width) @ W_O
    return fn


def _mh_plain_reshape(merge_back_plainly):
    def fn(X, W_Q, W_K, W_V, W_O, n_heads):
        n, width = X.shape[0], W_Q.shape[1]
        d_head = width // n_heads
        Q, K, V = ((X @ W).reshape(n_heads, n, d_head) for W in (W_Q, W_K, W_V))
        heads = ah.softmax(Q @ K.transpose(0, 2, 1) / np.sqrt(d_head)) @ V
        concat = heads.reshape(n, width) if merge_back_plainly else heads.transpose(1, 0, 2).reshape(n, width)
        return concat @ W_O
    return fn


def _mh_every_nth_column(X, W_Q, W_K, W_V, W_O, n_heads):
    d_head = W_Q.shape[1] // n_heads
    concat = np.zeros((X.shape[0], W_Q.shape[1]))
    for h in range(n_heads):
        cols = slice(h, None, n_heads)                    # columns h, h + n_heads, ...
        q, k, v = X @ W_Q[:, cols], X @ W_K[:, cols], X @ W_V[:, cols]
        concat[:, cols] = ah.softmax(q @ k.T / np.sqrt(d_head)) @ v
    return concat @ W_O


def _mh_no_W_O(X, W_Q, W_K, W_V, W_O, n_heads):
    return _mh_loop(X, W_Q, W_K, W_V, np.eye(W_Q.shape[1]), n_heads)


def _mh_one_head(X, W_Q, W_K, W_V, W_O, n_heads):
    return ah.scaled_dot_product_attention(X @ W_Q, X @ W_K, X @ W_V)[0] @ W_O


def test_multi_head_solution_passes():
    check = check_multi_head(sol.my_multi_head)
    assert check and check.kind == "right", check.message


def test_multi_head_solution_matches_library_and_a_loop():
    rng = np.random.default_rng(3)
    X, W_O = rng.normal(size=(5, 8)), rng.normal(size=(8, 8))
    W_Q, W_K, W_V = (rng.normal(size=(8, 8)) for _ in range(3))
    expected, _ = ah.multi_head_attention(X, W_Q, W_K, W_V, W_O, 4)
    assert np.allclose(sol.my_multi_head(X, W_Q, W_K, W_V, W_O, 4), expected)
    assert np.allclose(_mh_loop(X, W_Q, W_K, W_V, W_O, 4), expected)


def test_a_loop_over_heads_and_a_tuple_result_pass_too():
    assert check_multi_head(_mh_loop)
    assert check_multi_head(lambda *args: (sol.my_multi_head(*args), None))


@pytest.mark.parametrize("fn, fragment", [
    (lambda *args: None, "still empty"),
    (_mh_scaled_by(lambda width, h: width), "sqrt(d_model)"),
    (_mh_scaled_by(lambda width, h: 1.0), "forgot to scale"),
    (_mh_plain_reshape(False), "straight to [n_heads, n, d_head]"),
    (_mh_plain_reshape(True), "merged them back with a plain reshape"),
    (_mh_every_nth_column, "every n_heads-th column"),
    (_mh_no_W_O, "mix them with W_O"),
    (_mh_one_head, "n_heads was ignored"),
    (lambda X, W_Q, W_K, W_V, W_O, n_heads: X @ W_Q @ W_O + 1, "differs at index"),
    (lambda X, W_Q, W_K, W_V, W_O: X, "raised TypeError"),
])
def test_multi_head_mistakes_get_their_hint(fn, fragment):
    assert fragment in _message(check_multi_head(fn))


# ---- exercise 4: the padding mask ---------------------------------------------------

def test_padding_mask_solution_passes_and_matches_library():
    check = check_padding_mask(sol.my_padding_mask)
    assert check and check.kind == "right", check.message
    assert np.array_equal(sol.my_padding_mask([2, 4], 4), ah.padding_mask([2, 4], 4))


def test_a_padding_mask_built_with_loops_passes():
    assert check_padding_mask(lambda lengths, n: np.array([[[j < L for j in range(n)]] for L in lengths]))


@pytest.mark.parametrize("fn, fragment, kind", [
    (lambda lengths, n: None, "still empty", "empty"),
    (lambda lengths, n: np.arange(n)[None, None, :] >= np.array(lengths)[:, None, None], "wrong way round",
     "mistake"),
    (lambda lengths, n: np.arange(n)[None, None, :] <= np.array(lengths)[:, None, None], "off by one",
     "mistake"),
    (lambda lengths, n: np.arange(n)[None, :] < np.array(lengths)[:, None], "middle axis of size 1",
     "mistake"),
    (lambda lengths, n: (np.arange(n)[None, :] < np.array(lengths)[:, None])[:, :, None], "hide queries",
     "mistake"),
    (lambda lengths, n: (np.arange(n)[None, None, :] < np.array(lengths)[:, None, None]).astype(np.int64),
     "holds int64 numbers", "wrong_type"),
    (lambda lengths, n: np.ones((len(lengths), 1, n), dtype=bool), "differs at index", "wrong_value"),
])
def test_padding_mask_mistakes_get_their_hint(fn, fragment, kind):
    check = check_padding_mask(fn)
    assert fragment in _message(check) and check.kind == kind


# ---- the notebook itself ---------------------------------------------------------

def test_notebook_exercise_data_matches_solutions():
    cell = next(src for src in code_sources(NOTEBOOK) if src.startswith("q_sat = "))
    namespace = {"np": np}
    exec(cell, namespace)
    for name in ("q_sat", "K_ex", "V_ex"):
        assert np.array_equal(namespace[name], getattr(sol, name)), name
