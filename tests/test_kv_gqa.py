"""Unit and property tests for the KV cache and grouped-query attention helpers in
attention_helpers.core: KVCache, kv_cache_bytes, grouped_query_attention, causal_mask."""

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import attention_helpers as ah


def decode_with_cache(X, W_Q, W_K, W_V):
    """Generate one token at a time: project only the new token, append, attend over the cache."""
    cache = ah.KVCache()
    rows = []
    for t, x in enumerate(X):
        assert len(cache) == t  # the keys of the earlier tokens are reused, not recomputed
        cache.append(x @ W_K, x @ W_V)
        out, weights = ah.scaled_dot_product_attention((x @ W_Q)[None, :], cache.keys, cache.values)
        assert weights.shape == (1, t + 1)
        rows.append(out[0])
    return np.array(rows), cache


def multi_head_loop(Q, K, V, mask=None):
    """Multi-head attention written as a loop: head i uses its own K[i], V[i]."""
    return np.array([ah.scaled_dot_product_attention(Q[i], K[i], V[i], mask=mask)[0]
                     for i in range(Q.shape[0])])


# ---------------------------------------------------------------- KV cache decoding

@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 8), d_model=st.integers(1, 6),
       d_k=st.integers(1, 5), d_v=st.integers(1, 5))
def test_kv_cache_decoding_equals_full_causal_attention(seed, n, d_model, d_k, d_v):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d_model))
    W_Q, W_K = rng.normal(size=(d_model, d_k)), rng.normal(size=(d_model, d_k))
    W_V = rng.normal(size=(d_model, d_v))
    decoded, cache = decode_with_cache(X, W_Q, W_K, W_V)
    full, _ = ah.self_attention(X, W_Q, W_K, W_V, mask=ah.causal_mask(n))
    assert np.allclose(decoded, full)
    assert np.allclose(cache.keys, X @ W_K) and np.allclose(cache.values, X @ W_V)
    assert len(cache) == n and cache.nbytes == n * (d_k + d_v) * 8


def test_kv_cache_decoding_seeded_example():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5, 4))
    W_Q, W_K, W_V = (rng.normal(size=(4, 3)) for _ in range(3))
    decoded, cache = decode_with_cache(X, W_Q, W_K, W_V)
    full, weights = ah.self_attention(X, W_Q, W_K, W_V, mask=ah.causal_mask(5))
    assert decoded.shape == (5, 3)
    assert np.allclose(decoded, full)
    assert np.allclose(np.triu(weights, k=1), 0)  # no token saw the future
    assert repr(cache) == "KVCache(5 tokens, keys (5, 3), values (5, 3))"
    assert cache.nbytes == 2 * 5 * 3 * 8  # keys and values, 5 tokens × 3 numbers × 8 bytes (float64)


def test_kv_cache_starts_empty_and_takes_several_rows_at_once():
    cache = ah.KVCache()
    assert len(cache) == 0 and cache.nbytes == 0 and repr(cache) == "KVCache(empty)"
    assert cache.keys.shape == (0, 0) and cache.values.shape == (0, 0)
    cache.append(np.ones((2, 3)), np.zeros((2, 4)))  # a prompt of 2 tokens
    cache.append(np.full(3, 2.0), np.ones(4))  # then one generated token, as a 1-D row
    assert len(cache) == 3
    assert cache.keys.shape == (3, 3) and cache.values.shape == (3, 4)
    assert np.array_equal(cache.keys[2], [2.0, 2.0, 2.0])


def test_causal_mask_lets_token_t_see_tokens_0_to_t():
    m = ah.causal_mask(4)
    assert m.dtype == bool
    for t in range(4):
        assert m[t].tolist() == [j <= t for j in range(4)]


# ---------------------------------------------------------------- grouped-query attention

@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), h=st.integers(1, 6), n=st.integers(1, 6),
       d_k=st.integers(1, 4), d_v=st.integers(1, 4), causal=st.booleans())
def test_gqa_with_one_kv_head_per_query_head_is_multi_head_attention(seed, h, n, d_k, d_v, causal):
    rng = np.random.default_rng(seed)
    Q, K, V = rng.normal(size=(h, n, d_k)), rng.normal(size=(h, n, d_k)), rng.normal(size=(h, n, d_v))
    mask = ah.causal_mask(n) if causal else None
    out, weights = ah.grouped_query_attention(Q, K, V, mask=mask)
    assert out.shape == (h, n, d_v) and weights.shape == (h, n, n)
    assert np.allclose(out, multi_head_loop(Q, K, V, mask=mask))


def test_gqa_with_one_kv_head_is_multi_query_attention():
    rng = np.random.default_rng(1)
    h_q, n, d_k, d_v = 8, 5, 3, 2
    Q = rng.normal(size=(h_q, n, d_k))
    K, V = rng.normal(size=(1, n, d_k)), rng.normal(size=(1, n, d_v))
    out, _ = ah.grouped_query_attention(Q, K, V, mask=ah.causal_mask(n))
    # MQA: every query head reads the same single K and V
    mqa = np.array([ah.scaled_dot_product_attention(Q[i], K[0], V[0], mask=ah.causal_mask(n))[0]
                    for i in range(h_q)])
    assert np.allclose(out, mqa)


def test_gqa_groups_consecutive_query_heads():
    rng = np.random.default_rng(2)
    h_q, h_kv, n, d = 6, 2, 4, 3
    Q, K, V = rng.normal(size=(h_q, n, d)), rng.normal(size=(h_kv, n, d)), rng.normal(size=(h_kv, n, d))
    out, _ = ah.grouped_query_attention(Q, K, V)
    kv_of = [0, 0, 0, 1, 1, 1]  # heads 0-2 share KV head 0, heads 3-5 share KV head 1
    for i, j in enumerate(kv_of):
        assert np.allclose(out[i], ah.scaled_dot_product_attention(Q[i], K[j], V[j])[0])


# ---------------------------------------------------------------- cache size

def test_kv_cache_bytes_matches_a_hand_count():
    # Mistral-7B: 32 layers, 8 KV heads of size 128, 4096 tokens in float16 (2 bytes):
    # 2 (K and V) × 32 × 8 × 128 × 4096 × 2 = 536,870,912 bytes = 512 MiB
    hand = 2 * 32 * 8 * 128 * 4096 * 2
    assert hand == 536_870_912 == 512 * 2**20
    assert ah.kv_cache_bytes(32, 8, 128, 4096) == hand
    assert ah.kv_cache_bytes(n_layers=32, n_kv_heads=8, d_head=128, seq_len=4096,
                             batch=1, bytes_per_value=2) == hand


@pytest.mark.parametrize("args, kwargs, expected", [
    # GPT-2 small: 2 × 12 × 12 × 64 × 4096 × 2 = 150,994,944 bytes = 144 MiB
    ((12, 12, 64, 4096), {}, 144 * 2**20),
    # LLaMA-2-7B: 2 × 32 × 32 × 128 × 4096 × 2 = 2 GiB
    ((32, 32, 128, 4096), {}, 2 * 2**30),
    # LLaMA-2-70B: 2 × 80 × 8 × 128 × 4096 × 2 = 1,342,177,280 bytes = 1.25 GiB
    ((80, 8, 128, 4096), {}, 1280 * 2**20),
    # Gemma-2B: 2 × 18 × 1 × 256 × 4096 × 2 = 75,497,472 bytes = 72 MiB
    ((18, 1, 256, 4096), {}, 72 * 2**20),
    # batch and bytes per value multiply in: 4 sequences in float32
    ((32, 8, 128, 4096), {"batch": 4, "bytes_per_value": 4}, 4 * 2 * 512 * 2**20),
])
def test_kv_cache_bytes_for_real_configurations(args, kwargs, expected):
    assert ah.kv_cache_bytes(*args, **kwargs) == expected


def test_kv_cache_bytes_grows_linearly_with_tokens_and_kv_heads():
    one = ah.kv_cache_bytes(4, 2, 16, 100)
    assert ah.kv_cache_bytes(4, 2, 16, 300) == 3 * one
    assert ah.kv_cache_bytes(4, 8, 16, 100) == 4 * one


@pytest.mark.parametrize("kwargs, error, fragment", [
    ({"n_layers": 0}, ValueError, "n_layers must be at least 1, got 0"),
    ({"n_kv_heads": 2.5}, TypeError, "n_kv_heads must be a whole number, got 2.5"),
    ({"seq_len": -1}, ValueError, "seq_len must be at least 1, got -1"),
    ({"bytes_per_value": True}, TypeError, "bytes_per_value must be a whole number"),
])
def test_kv_cache_bytes_rejects_bad_sizes(kwargs, error, fragment):
    args = {"n_layers": 2, "n_kv_heads": 2, "d_head": 4, "seq_len": 8, **kwargs}
    with pytest.raises(error, match=re.escape(fragment)):
        ah.kv_cache_bytes(**args)


# ---------------------------------------------------------------- clear errors

def _qkv(h_q, h_kv, h_v=None, n=3, d=2):
    rng = np.random.default_rng(3)
    return (rng.normal(size=(h_q, n, d)), rng.normal(size=(h_kv, n, d)),
            rng.normal(size=(h_kv if h_v is None else h_v, n, d)))


@pytest.mark.parametrize("Q, K, V, fragments", [
    (*_qkv(6, 4), ["Q has 6 query heads (shape (6, 3, 2))", "K has 4 KV heads (shape (4, 3, 2))",
                   "h_q must be a multiple of h_kv"]),
    (*_qkv(8, 3), ["Q has 8 query heads", "K has 3 KV heads", "multiple of h_kv"]),
    (*_qkv(4, 2, h_v=1), ["K has shape (2, 3, 2) and V has shape (1, 3, 2)",
                          "same number of KV heads", "got 2 and 1"]),
    (np.ones((3, 2)), *_qkv(1, 1)[1:], ["Q must be 3-D, got shape (3, 2) (2-D)"]),
    (_qkv(2, 2)[0], np.ones((3, 2)), _qkv(2, 2)[2], ["K must be 3-D, got shape (3, 2) (2-D)"]),
    (*_qkv(2, 2)[:2], np.ones((1, 2, 3, 2)), ["V must be 3-D, got shape (1, 2, 3, 2) (4-D)"]),
])
def test_gqa_rejects_bad_head_counts_and_shapes(Q, K, V, fragments):
    with pytest.raises(ValueError) as info:
        ah.grouped_query_attention(Q, K, V)
    for fragment in fragments:
        assert fragment in str(info.value)


def test_gqa_passes_shape_errors_of_the_heads_on():
    Q, K, V = _qkv(4, 2)
    # the error names K as the learner gave it, before its heads are repeated for the groups
    with pytest.raises(ValueError, match=re.escape("K has shape (2, 3, 3); Q has d_k=2 columns")):
        ah.grouped_query_attention(Q, np.ones((2, 3, 3)), V)


@pytest.mark.parametrize("first, k, v, fragments", [
    (None, np.ones((2, 3)), np.ones((3, 3)),
     ["k has shape (2, 3) and v has shape (3, 3)", "same number of new tokens"]),
    ((np.ones(3), np.ones(2)), np.ones(4), np.ones(2),
     ["the cache holds keys of size 3 and values of size 2", "got k (1, 4) and v (1, 2)"]),
    ((np.ones(3), np.ones(2)), np.ones(3), np.ones(5),
     ["the cache holds keys of size 3 and values of size 2", "got k (1, 3) and v (1, 5)"]),
    (None, np.ones((1, 2, 3)), np.ones((1, 2, 3)),
     ["k and v must be [d] or [n_new, d]", "got k (1, 2, 3), v (1, 2, 3)"]),
    (None, np.array([1.0, np.nan]), np.ones(2), ["k (shape (2,)) must hold finite numbers"]),
])
def test_kv_cache_rejects_bad_appends(first, k, v, fragments):
    cache = ah.KVCache()
    if first is not None:
        cache.append(*first)
    with pytest.raises(ValueError) as info:
        cache.append(k, v)
    for fragment in fragments:
        assert fragment in str(info.value)
    assert len(cache) == (0 if first is None else 1)  # a rejected append leaves the cache as it was


def test_kv_cache_rejects_text():
    with pytest.raises(TypeError, match="k must be a numeric array, got str"):
        ah.KVCache().append("key", [1.0])
