"""Tests for ah.tiled_attention (notebook 09): the online softmax over tiles gives
exactly scaled_dot_product_attention, whatever the block size, and its peak memory
grows like n·d where the full matrix grows like n²."""

import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import attention_helpers as ah


def online_softmax_loop(Q, K, V, mask=None):
    """One query row at a time, one key at a time: running max m, running sum l, running output."""
    out = np.zeros((Q.shape[0], V.shape[1]))
    for i in range(Q.shape[0]):
        m, total, acc = -np.inf, 0.0, np.zeros(V.shape[1])
        for j in range(K.shape[0]):
            if mask is not None and not mask[i, j]:
                continue
            s = float(Q[i] @ K[j]) / np.sqrt(Q.shape[1])
            new = max(m, s)
            total = total * np.exp(m - new) + np.exp(s - new)
            acc = acc * np.exp(m - new) + np.exp(s - new) * V[j]
            m = new
        out[i] = acc / total
    return out


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_q=st.integers(1, 9), n_k=st.integers(1, 9),
       d_k=st.integers(1, 4), d_v=st.integers(1, 4), block=st.integers(1, 10))
def test_tiled_equals_full_attention_and_the_loop(seed, n_q, n_k, d_k, d_v, block):
    rng = np.random.default_rng(seed)
    Q, K, V = rng.normal(size=(n_q, d_k)), 3 * rng.normal(size=(n_k, d_k)), rng.normal(size=(n_k, d_v))
    full, _ = ah.scaled_dot_product_attention(Q, K, V)
    tiled = ah.tiled_attention(Q, K, V, block)
    assert tiled.shape == (n_q, d_v)
    assert np.allclose(tiled, full)
    assert np.allclose(tiled, online_softmax_loop(Q, K, V))


@pytest.mark.parametrize("block", [1, 2, 3, 4, 7, 8, 100])
def test_causal_mask_for_several_block_sizes(block):
    rng = np.random.default_rng(block)
    n = 8
    Q, K, V = rng.normal(size=(n, 4)), rng.normal(size=(n, 4)), rng.normal(size=(n, 5))
    mask = ah.causal_mask(n)
    full, _ = ah.scaled_dot_product_attention(Q, K, V, mask=mask)
    tiled = ah.tiled_attention(Q, K, V, block, mask=mask)
    assert np.allclose(tiled, full)
    assert np.allclose(tiled, online_softmax_loop(Q, K, V, mask))
    assert not np.allclose(tiled, ah.tiled_attention(Q, K, V, block))  # the mask matters


def test_huge_scores_stay_finite_and_a_late_maximum_rescales():
    # The largest score comes in the last block: everything before must be rescaled.
    Q = np.array([[30.0, 0.0]])
    K = np.array([[1.0, 0.0], [2.0, 0.0], [3.0, 0.0], [40.0, 0.0]])
    V = np.array([[1.0], [2.0], [3.0], [4.0]])
    out = ah.tiled_attention(Q, K, V, block_size=1)
    assert np.all(np.isfinite(out))
    assert np.allclose(out, ah.scaled_dot_product_attention(Q, K, V)[0])


def test_batch_heads_and_padding_masks_broadcast():
    rng = np.random.default_rng(5)
    Q, K, V = (rng.normal(size=(2, 3, 6, 4)) for _ in range(3))  # batch, heads, n, d
    mask = (ah.padding_mask([6, 4], 6) & ah.causal_mask(6))[:, None]  # [batch, 1, n, n]
    full, _ = ah.scaled_dot_product_attention(Q, K, V, mask=mask)
    assert np.allclose(ah.tiled_attention(Q, K, V, 4, mask=mask), full)
    shared_kv = ah.tiled_attention(Q[0], K[0, 0], V[0, 0], 4)      # 3 heads of queries, one K and V
    assert shared_kv.shape == (3, 6, 4)
    assert np.allclose(shared_kv, ah.scaled_dot_product_attention(Q[0], K[0, 0], V[0, 0])[0])
    one_row = ah.padding_mask([6, 4], 6)[:, None]                 # [batch, 1, 1, n]
    full, _ = ah.scaled_dot_product_attention(Q, K, V, mask=one_row)
    assert np.allclose(ah.tiled_attention(Q, K, V, 4, mask=one_row), full)


def peak_bytes(f, *args):
    tracemalloc.start()
    try:
        f(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_peak_memory_grows_like_n_for_tiles_and_like_n_squared_for_the_full_matrix():
    """A complexity check by ratios, not by time. Each peak is a fixed part (the tile's
    buffers) plus a part that grows with n, so compare the growth: from n to 2n and from 2n
    to 4n, the extra memory doubles when it grows like n and quadruples when it grows like n²."""
    rng = np.random.default_rng(0)
    tiled, full = [], []
    for n in (256, 512, 1024):
        Q, K, V = (rng.normal(size=(n, 16)) for _ in range(3))
        tiled.append(peak_bytes(ah.tiled_attention, Q, K, V, 64))
        full.append(peak_bytes(ah.scaled_dot_product_attention, Q, K, V))
    tiled_growth = (tiled[2] - tiled[1]) / (tiled[1] - tiled[0])
    full_growth = (full[2] - full[1]) / (full[1] - full[0])
    assert 1.6 < tiled_growth < 2.5, (tiled, full)
    assert 3.5 < full_growth < 4.5, (tiled, full)
    assert tiled[2] * 20 < full[2], (tiled, full)


@pytest.mark.parametrize("args, error, words", [
    ((np.ones((3, 2)), np.ones((4, 3)), np.ones((4, 2)), 2), ValueError, ["K", "(4, 3)", "d_k=2"]),
    ((np.ones((3, 2)), np.ones((4, 2)), np.ones((5, 2)), 2), ValueError, ["V", "(5, 2)", "n_k=4"]),
    ((np.ones((3, 2)), np.ones((4, 2)), np.ones((4, 2)), 0), ValueError, ["block_size", "at least 1"]),
    ((np.ones((3, 2)), np.ones((4, 2)), np.ones((4, 2)), 2.5), TypeError, ["block_size", "whole number"]),
    ((np.ones(2), np.ones((4, 2)), np.ones((4, 2)), 2), ValueError, ["Q", "at least 2"]),
])
def test_bad_input_gets_a_clear_message(args, error, words):
    with pytest.raises(error) as info:
        ah.tiled_attention(*args)
    for word in words:
        assert word in str(info.value)


def test_bad_masks_get_a_clear_message():
    Q = K = V = np.ones((3, 2))
    with pytest.raises(TypeError, match="boolean"):
        ah.tiled_attention(Q, K, V, 2, mask=np.ones((3, 3)))
    with pytest.raises(ValueError, match=r"\(3, 3\)"):
        ah.tiled_attention(Q, K, V, 2, mask=np.ones((2, 3), dtype=bool))
    hidden = np.ones((3, 3), dtype=bool)
    hidden[1] = False
    with pytest.raises(ValueError, match="hides every key from query row"):
        ah.tiled_attention(Q, K, V, 2, mask=hidden)
