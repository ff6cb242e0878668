"""multi_head_attention and padding_mask against loop definitions."""

import numpy as np
import pytest

import attention_helpers as ah


def loop_multi_head(X, W_Q, W_K, W_V, W_O, n_heads, mask=None):
    """One head at a time, by the definition: slice the columns, attend, put side by side, mix."""
    d_head, d_v_head = W_Q.shape[1] // n_heads, W_V.shape[1] // n_heads
    outputs, weights = [], []
    for h in range(n_heads):
        q_cols = slice(h * d_head, (h + 1) * d_head)
        v_cols = slice(h * d_v_head, (h + 1) * d_v_head)
        Q, K, V = X @ W_Q[:, q_cols], X @ W_K[:, q_cols], X @ W_V[:, v_cols]
        S = Q @ K.T / np.sqrt(d_head)
        if mask is not None:
            S = np.where(mask, S, -np.inf)
        A = np.exp(S - S.max(axis=1, keepdims=True))
        A /= A.sum(axis=1, keepdims=True)
        outputs.append(A @ V)
        weights.append(A)
    return np.concatenate(outputs, axis=1) @ W_O, np.stack(weights)


@pytest.mark.parametrize("n_heads", [1, 2, 4])
@pytest.mark.parametrize("masked", [False, True])
def test_multi_head_matches_loop(n_heads, masked):
    rng = np.random.default_rng(n_heads)
    X = rng.normal(size=(5, 8))
    W_Q, W_K, W_V, W_O = (rng.normal(size=(8, 8)) for _ in range(4))
    mask = ah.causal_mask(5) if masked else None
    out, weights = ah.multi_head_attention(X, W_Q, W_K, W_V, W_O, n_heads, mask=mask)
    want_out, want_weights = loop_multi_head(X, W_Q, W_K, W_V, W_O, n_heads, mask=mask)
    assert out.shape == (5, 8) and weights.shape == (n_heads, 5, 5)
    np.testing.assert_allclose(out, want_out, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(weights, want_weights, rtol=1e-12, atol=1e-12)


def test_one_head_is_self_attention_then_W_O():
    rng = np.random.default_rng(0)
    X, W_Q, W_K, W_V = (rng.normal(size=s) for s in [(4, 6), (6, 6), (6, 6), (6, 6)])
    W_O = rng.normal(size=(6, 3))
    out, weights = ah.multi_head_attention(X, W_Q, W_K, W_V, W_O, 1)
    single, single_weights = ah.self_attention(X, W_Q, W_K, W_V)
    np.testing.assert_allclose(out, single @ W_O)
    np.testing.assert_allclose(weights[0], single_weights)


def test_batch_is_each_sentence_alone():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3, 4, 6))
    Ws = [rng.normal(size=(6, 6)) for _ in range(4)]
    out, weights = ah.multi_head_attention(X, *Ws, 3)
    assert out.shape == (3, 4, 6) and weights.shape == (3, 3, 4, 4)
    for b in range(3):
        alone, alone_weights = ah.multi_head_attention(X[b], *Ws, 3)
        np.testing.assert_allclose(out[b], alone)
        np.testing.assert_allclose(weights[b], alone_weights)


def test_padding_mask_by_definition():
    m = ah.padding_mask([3, 1, 4], 4)
    assert m.shape == (3, 1, 4) and m.dtype == bool
    want = np.array([[[j < length for j in range(4)]] for length in (3, 1, 4)])
    np.testing.assert_array_equal(m, want)


def test_padding_gives_zero_weight_and_the_unpadded_output():
    rng = np.random.default_rng(2)
    lengths, n = [2, 4, 3], 4
    X = rng.normal(size=(3, n, 6))
    for b, length in enumerate(lengths):
        X[b, length:] = 0.0  # padding rows: their values must not matter
    Ws = [rng.normal(size=(6, 6)) for _ in range(4)]
    mask = ah.padding_mask(lengths, n) & ah.causal_mask(n)
    out, weights = ah.multi_head_attention(X, *Ws, 2, mask=mask)
    for b, length in enumerate(lengths):
        assert np.all(weights[b, :, :, length:] == 0.0)
        alone, _ = ah.multi_head_attention(X[b, :length], *Ws, 2, mask=ah.causal_mask(length))
        np.testing.assert_allclose(out[b, :length], alone, rtol=1e-12, atol=1e-12)


def test_padding_mask_works_in_scaled_dot_product_attention():
    rng = np.random.default_rng(3)
    Q, K, V = (rng.normal(size=(2, 3, 4)) for _ in range(3))
    _, weights = ah.scaled_dot_product_attention(Q, K, V, mask=ah.padding_mask([1, 3], 3))
    assert np.all(weights[0, :, 1:] == 0.0) and np.allclose(weights[0, :, 0], 1.0)


@pytest.mark.parametrize("call, words", [
    (lambda X, W: ah.multi_head_attention(X, W, W, W, W, 3), ["n_heads=3", "divisible"]),
    (lambda X, W: ah.multi_head_attention(X, W, W, W, np.eye(5), 2), ["W_O", "(5, 5)", "4 rows"]),
    (lambda X, W: ah.multi_head_attention(X, W[:3], W, W, W, 2), ["W_Q", "(3, 4)", "4 rows"]),
    (lambda X, W: ah.multi_head_attention(X, W, W, W, W, 0), ["n_heads", "at least 1"]),
    (lambda X, W: ah.padding_mask([2, 5], 4), ["lengths", "[2, 5]", "n=4"]),
    (lambda X, W: ah.padding_mask([2.5], 4), ["lengths", "whole numbers"]),
])
def test_clear_errors(call, words):
    X, W = np.ones((3, 4)), np.eye(4)
    with pytest.raises((ValueError, TypeError)) as err:
        call(X, W)
    for word in words:
        assert word in str(err.value)


def test_split_heads_gives_head_h_its_block_of_columns_and_merge_heads_undoes_it():
    # the one split the package uses (core.multi_head_attention, kv_designs' MLA, tiny_model),
    # for one sequence [n, h·d] and for a batch [b, n, h·d]
    M = np.arange(2 * 3 * 8, dtype=float).reshape(2, 3, 8)
    for A in (M[0], M):
        H = ah.core.split_heads(A, 4)
        assert H.shape == A.shape[:-2] + (4, 3, 2)
        for h in range(4):
            assert np.array_equal(H[..., h, :, :], A[..., :, 2 * h:2 * h + 2])
        assert np.array_equal(ah.core.merge_heads(H), A)
