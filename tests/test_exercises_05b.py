"""Notebook 05b (multi-head attention and padded batches): the reference solutions pass
their checkers, and each typical wrong answer is named by its own mistake key."""

import numpy as np
import pytest

import attention_helpers as ah
import solutions.nb05b as sol
from attention_helpers.checks import check_multi_head, check_padding_mask
from tools.notebooks import ROOT, code_sources

NOTEBOOK = ROOT / "notebooks" / "05b_multi_head_attention.ipynb"


# ---- exercise 1: multi-head attention --------------------------------------------
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
    assert check and check.kind == "right", check.text


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


@pytest.mark.parametrize("fn, kind, mistake", [
    (lambda *args: None, "empty", None),
    (_mh_scaled_by(lambda width, h: width), "mistake", "sqrt_d_model"),
    (_mh_scaled_by(lambda width, h: 1.0), "mistake", "no_scale"),
    (_mh_plain_reshape(False), "mistake", "reshape_without_transpose"),
    (_mh_plain_reshape(True), "mistake", "reshape_both_ways"),
    (_mh_every_nth_column, "mistake", "interleaved_heads"),
    (_mh_no_W_O, "mistake", "no_W_O"),
    (_mh_one_head, "mistake", "one_head"),
    (lambda X, W_Q, W_K, W_V, W_O, n_heads: X @ W_Q @ W_O + 1, "wrong_value", None),
    (lambda X, W_Q, W_K, W_V, W_O: X, "raised", None),
])
def test_multi_head_mistakes_are_named(fn, kind, mistake):
    check = check_multi_head(fn)
    assert (check.kind, check.mistake) == (kind, mistake), check.text


# ---- exercise 2: the padding mask ---------------------------------------------------

def test_padding_mask_solution_passes_and_matches_library():
    check = check_padding_mask(sol.my_padding_mask)
    assert check and check.kind == "right", check.text
    assert np.array_equal(sol.my_padding_mask([2, 4], 4), ah.padding_mask([2, 4], 4))


def test_a_padding_mask_built_with_loops_passes():
    assert check_padding_mask(lambda lengths, n: np.array([[[j < L for j in range(n)]] for L in lengths]))


def _positions(n):
    return np.arange(n)[None, None, :]           # key j, [1, 1, n]


def _lengths(lengths):
    return np.array(lengths)[:, None, None]      # [batch, 1, 1]


@pytest.mark.parametrize("fn, kind, mistake", [
    (lambda lengths, n: None, "empty", None),
    (lambda lengths, n: _positions(n) >= _lengths(lengths), "mistake", "mask_inverted"),
    (lambda lengths, n: _positions(n) <= _lengths(lengths), "mistake", "off_by_one"),
    (lambda lengths, n: np.arange(n)[None, :] < np.array(lengths)[:, None], "mistake", "no_middle_axis"),
    (lambda lengths, n: (np.arange(n)[None, :] < np.array(lengths)[:, None])[:, :, None], "mistake",
     "axis_in_wrong_place"),
    (lambda lengths, n: (_positions(n) < _lengths(lengths)).astype(np.int64),
     "wrong_type", "not_boolean"),
    (lambda lengths, n: np.ones((len(lengths), 1, n), dtype=bool), "wrong_value", None),
])
def test_padding_mask_mistakes_are_named(fn, kind, mistake):
    check = check_padding_mask(fn)
    assert (check.kind, check.mistake) == (kind, mistake), check.text


# ---- the notebook itself ---------------------------------------------------------

def test_notebook_binds_the_names_the_checks_and_solutions_use():
    sources = "\n".join(code_sources(NOTEBOOK))
    for stub, checker in (("def my_multi_head(", "check_multi_head(my_multi_head)"),
                          ("def my_padding_mask(", "check_padding_mask(my_padding_mask)")):
        assert stub in sources and checker in sources
