"""attention_helpers.kv_designs (notebook 11): each design against a loop definition written
here, byte counts against hand arithmetic, and clear errors for bad input."""

import math

import numpy as np
import pytest

import attention_helpers as ah
from attention_helpers import kv_designs as kd


def loop_attention(q, keys, values, sink=None):
    """One query row over a list of keys, by the definition: softmax of q·k/√d (with an optional
    sink logit in the denominator only), times the values."""
    scores = [sum(a * b for a, b in zip(q, k)) / math.sqrt(len(q)) for k in keys]
    top = max(scores + ([sink] if sink is not None else []))
    e = [math.exp(s - top) for s in scores]
    total = sum(e) + (math.exp(sink - top) if sink is not None else 0.0)
    w = [x / total for x in e]
    return np.array([sum(w[j] * values[j][c] for j in range(len(keys))) for c in range(len(values[0]))]), w


def rng_qkv(seed, *shape):
    rng = np.random.default_rng(seed)
    return tuple(rng.normal(size=shape) for _ in range(3))


# ---- sliding windows ------------------------------------------------------------------

@pytest.mark.parametrize("n, window", [(1, 1), (5, 1), (5, 2), (6, 3), (4, 4), (4, 9)])
def test_sliding_window_mask_is_the_definition(n, window):
    expected = np.array([[0 <= i - j < window for j in range(n)] for i in range(n)])
    got = ah.sliding_window_mask(n, window)
    assert got.dtype == bool and np.array_equal(got, expected)


def test_window_of_n_is_causal_and_window_one_is_the_diagonal():
    assert np.array_equal(ah.sliding_window_mask(5, 5), ah.causal_mask(5))
    assert np.array_equal(ah.sliding_window_mask(5, 1), np.eye(5, dtype=bool))


@pytest.mark.parametrize("window", [1, 2, 3, 7])
def test_ring_buffer_decodes_the_rows_of_masked_full_attention(window):
    n = 7
    Q, K, V = rng_qkv(window, n, 3)
    cache, rows = kd.WindowKVCache(window), []
    for t in range(n):
        cache.append(K[t], V[t])
        assert len(cache) == min(t + 1, window)                       # never more than the window
        assert np.array_equal(cache.positions, np.arange(max(0, t + 1 - window), t + 1))
        rows.append(ah.scaled_dot_product_attention(Q[t][None], cache.keys, cache.values)[0][0])
        lo = max(0, t - window + 1)
        expected, _ = loop_attention(Q[t], K[lo:t + 1].tolist(), V[lo:t + 1].tolist())
        assert np.allclose(rows[-1], expected)
    full, _ = ah.scaled_dot_product_attention(Q, K, V, mask=ah.sliding_window_mask(n, window))
    assert np.allclose(rows, full)
    assert cache.nbytes == 2 * window * 3 * 8                         # fixed: window rows of K and V


def test_window_stack_bytes_by_hand_gemma3_27b():
    # 62 layers, 5 local : 1 global -> layers 5, 11, ..., 59 are global: 10 of them, 52 local
    per_token_layer = 2 * 16 * 128 * 2                               # K and V, 16 KV heads, d 128, fp16
    got = kd.window_stack_cache_bytes(62, 16, 128, 131072, 1024)
    assert got == per_token_layer * (10 * 131072 + 52 * 1024)
    assert kd.window_stack_cache_bytes(62, 16, 128, 131072, 1024, local_per_global=0) == \
        ah.kv_cache_bytes(62, 16, 128, 131072)
    assert kd.window_stack_cache_bytes(6, 1, 2, 500, 1000) == ah.kv_cache_bytes(6, 1, 2, 500)  # window > text


# ---- sinks ------------------------------------------------------------------------------

@pytest.mark.parametrize("masked", [False, True])
def test_attention_with_sinks_is_the_loop_definition(masked):
    h, n, d = 3, 4, 2
    Q, K, V = rng_qkv(11, h, n, d)
    sinks = np.array([0.0, 2.5, -1.0])
    mask = ah.causal_mask(n) if masked else None
    out, weights = ah.attention_with_sinks(Q, K, V, sinks, mask=mask)
    assert out.shape == (h, n, d) and weights.shape == (h, n, n)
    for head in range(h):
        for i in range(n):
            seen = range(i + 1) if masked else range(n)
            o, w = loop_attention(Q[head, i], [K[head, j] for j in seen], [V[head, j] for j in seen],
                                  sink=sinks[head])
            assert np.allclose(out[head, i], o)
            assert np.allclose(weights[head, i, list(seen)], w)
            assert np.all(weights[head, i, len(seen):] == 0)
    assert np.all(weights.sum(axis=-1) < 1)


def test_a_sink_of_minus_infinity_is_plain_attention_and_a_big_sink_takes_everything():
    Q, K, V = rng_qkv(3, 2, 3, 4)
    plain = ah.scaled_dot_product_attention(Q, K, V)
    out, w = ah.attention_with_sinks(Q, K, V, np.array([-1e9, -1e9]))
    assert np.allclose(out, plain[0]) and np.allclose(w, plain[1])
    _, w_big = ah.attention_with_sinks(Q, K, V, np.array([50.0, 50.0]))
    assert w_big.max() < 1e-15


def test_sink_row_with_equal_scores_by_hand():
    # 4 keys with score 0 and a sink of 0: each key gets exp(0) / (4 + 1) = 0.2
    Q, K = np.zeros((1, 1, 2)), np.ones((1, 4, 2))
    V = np.arange(8.0).reshape(1, 4, 2)
    out, w = ah.attention_with_sinks(Q, K, V, np.array([0.0]))
    assert np.allclose(w, 0.2) and np.allclose(out, 0.2 * V.sum(axis=1))


def test_streaming_mask_by_hand():
    m = kd.streaming_mask(6, n_sink=1, window=2)
    expected = np.array([[1, 0, 0, 0, 0, 0],
                         [1, 1, 0, 0, 0, 0],
                         [1, 1, 1, 0, 0, 0],
                         [1, 0, 1, 1, 0, 0],
                         [1, 0, 0, 1, 1, 0],
                         [1, 0, 0, 0, 1, 1]], dtype=bool)
    assert np.array_equal(m, expected)
    assert np.array_equal(kd.streaming_mask(6, 0, 2), ah.sliding_window_mask(6, 2))


# ---- multi-head latent attention ------------------------------------------------------------

def loop_mla(X, W):
    """MLA by its definition, one head, query and key at a time: k = [c·W_UK_h, RoPE(x·W_KR)],
    q = [x·W_Q_h, RoPE(x·W_QR_h)], v = c·W_UV_h, causal; output = concat(heads)·W_O."""
    n, h, d, r = X.shape[0], W["n_heads"], W["d_head"], W["d_rope"]
    pos = np.arange(n)
    c = X @ W["W_DKV"]
    k_rope = ah.apply_rope(X @ W["W_KR"], pos)
    heads = []
    for k in range(h):
        cols, rcols = slice(k * d, (k + 1) * d), slice(k * r, (k + 1) * r)
        q_rope = ah.apply_rope((X @ W["W_QR"])[:, rcols], pos)
        rows = []
        for i in range(n):
            q = np.concatenate([(X @ W["W_Q"])[i, cols], q_rope[i]])
            keys = [np.concatenate([c[j] @ W["W_UK"][:, cols], k_rope[j]]) for j in range(i + 1)]
            values = [c[j] @ W["W_UV"][:, cols] for j in range(i + 1)]
            rows.append(loop_attention(q, keys, values)[0])
        heads.append(np.array(rows))
    return np.concatenate(heads, axis=1) @ W["W_O"]


@pytest.mark.parametrize("absorbed", [False, True])
def test_mla_plain_and_absorbed_equal_the_loop_definition(absorbed):
    W = kd.mla_weights(d_model=6, n_heads=2, d_head=3, d_latent=4, d_rope=2, seed=5)
    X = np.random.default_rng(2).normal(size=(5, 6))
    out, weights = kd.mla_attention(X, W, mask=ah.causal_mask(5), absorbed=absorbed)
    assert out.shape == (5, 6) and weights.shape == (2, 5, 5)
    assert np.allclose(out, loop_mla(X, W))


def test_mla_caches_only_the_latent_and_the_rope_key():
    W = kd.mla_weights(6, 2, 3, 4, 2)
    X = np.random.default_rng(0).normal(size=(5, 6))
    c, k_rope = kd.mla_cache(X, W)
    assert c.shape == (5, 4) and k_rope.shape == (5, 2)
    assert kd.mla_cache_bytes(61, 512, 64, 1) == 61 * 576 * 2          # DeepSeek-V3, fp16, one token


# ---- paged cache ------------------------------------------------------------------------------

@pytest.mark.parametrize("block_size", [1, 2, 3, 8])
def test_paged_attention_equals_contiguous_attention(block_size):
    rng = np.random.default_rng(block_size)
    cache = kd.PagedKVCache(block_size, n_blocks=20, d_k=3, d_v=2)
    written = {"a": ([], []), "b": ([], [])}
    for t in range(11):                                              # two sequences, interleaved
        for seq in ("a", "b") if t < 6 else ("a",):
            k, v = rng.normal(size=3), rng.normal(size=2)
            cache.append(seq, k, v)
            written[seq][0].append(k)
            written[seq][1].append(v)
    assert len(cache.tables["a"]) == -(-11 // block_size)
    assert not set(cache.tables["a"]) & set(cache.tables["b"])        # no block is shared
    q = rng.normal(size=3)
    for seq, (keys, values) in written.items():
        assert np.array_equal(cache.keys(seq), np.array(keys))
        assert np.allclose(kd.paged_attention(q, cache, seq), loop_attention(q, keys, values)[0])
    cache.release("b")
    assert len(cache.free) == 20 - len(cache.tables["a"])


def test_a_full_pool_raises():
    cache = kd.PagedKVCache(2, 1, 1, 1)
    cache.append("a", [1.0], [1.0])
    cache.append("a", [1.0], [1.0])
    with pytest.raises(ValueError, match="blocks are all in use"):
        cache.append("a", [1.0], [1.0])


# ---- quantisation ----------------------------------------------------------------------------------

def test_int4_by_hand():
    # q_max = 7, scale = 1 / 7: 1 -> 7, -0.5 -> -3.5 -> -4 (to even), 0.26 -> 1.82 -> 2
    q, scale = kd.quantize(np.array([[1.0, -0.5, 0.26]]), 4)
    assert q.tolist() == [[7, -4, 2]] and np.allclose(scale, 1 / 7)
    assert np.allclose(kd.dequantize(q, scale), [[1.0, -4 / 7, 2 / 7]])


@pytest.mark.parametrize("bits", [2, 3, 4, 8])
@pytest.mark.parametrize("per", ["token", "channel", "tensor"])
def test_rounding_error_is_at_most_half_a_step(bits, per):
    x = np.random.default_rng(bits).normal(size=(6, 5)) * np.array([[0.1], [1], [10], [1], [3], [0.5]])
    q, scale = kd.quantize(x, bits, per=per)
    q_max = 2 ** (bits - 1) - 1
    assert np.abs(q).max() <= q_max
    assert np.all(np.abs(kd.dequantize(q, scale) - x) <= np.broadcast_to(scale, x.shape) / 2 + 1e-12)


def test_per_token_scales_beat_one_scale_for_rows_of_different_size():
    x = np.array([[100.0, -50.0], [0.3, -0.2]])                      # a large row and a small one
    per_token = kd.dequantize(*kd.quantize(x, 8, per="token"))
    per_tensor = kd.dequantize(*kd.quantize(x, 8, per="tensor"))
    # one scale 100/127: 0.3 -> round(0.381) = 0 -> the small row is lost entirely
    assert np.allclose(per_tensor[1], [0.0, 0.0])
    assert np.abs(per_token[1] - x[1]).max() <= 0.3 / 127 / 2 + 1e-12


def test_quantised_values_move_the_output_by_at_most_half_the_largest_step():
    # weights sum to 1, so |Σ w (v̂ − v)| ≤ max |v̂ − v| ≤ max scale / 2
    Q, K, V = rng_qkv(4, 8, 4)
    for bits in (4, 8):
        q, scale = kd.quantize(V, bits)
        exact = ah.scaled_dot_product_attention(Q, K, V)[0]
        approx = ah.scaled_dot_product_attention(Q, K, kd.dequantize(q, scale))[0]
        assert np.abs(approx - exact).max() <= scale.max() / 2


def test_quantized_bytes_by_hand():
    assert kd.quantized_bytes(4, 8, 4) == 4 * 8 // 2 + 4 * 2            # int4 + one fp16 scale per token
    assert kd.quantized_bytes(4, 8, 8, per="channel") == 32 + 8 * 2
    assert kd.quantized_bytes(3, 3, 3, per="tensor") == 4 + 2             # 27 bits -> 4 bytes


# ---- bad input -------------------------------------------------------------------------------------

@pytest.mark.parametrize("call, error, fragment", [
    (lambda: ah.sliding_window_mask(4, 0), ValueError, "window must be at least 1"),
    (lambda: ah.sliding_window_mask(4, 1.5), TypeError, "window must be a whole number"),
    (lambda: ah.attention_with_sinks(np.ones((2, 3, 4)), np.ones((2, 3, 4)), np.ones((2, 3, 4)), [0.0]),
     ValueError, "sinks must be (2,)"),
    (lambda: ah.attention_with_sinks(np.ones((3, 4)), np.ones((3, 4)), np.ones((3, 4)), [0.0]),
     ValueError, "Q must be 3-D"),
    (lambda: ah.attention_with_sinks(np.ones((1, 3, 4)), np.ones((1, 3, 2)), np.ones((1, 3, 4)), [0.0]),
     ValueError, "K must be (1, n_k, 4)"),
    (lambda: ah.attention_with_sinks(np.ones((1, 2, 2)), np.ones((1, 2, 2)), np.ones((1, 2, 2)), [0.0],
                                     mask=np.array([[True, False], [False, False]])),
     ValueError, "hides every key from query row"),
    (lambda: ah.attention_with_sinks(np.ones((1, 2, 2)), np.ones((1, 2, 2)), np.ones((1, 2, 2)), [0.0],
                                     mask=np.ones((2, 2))), TypeError, "mask must be a boolean"),
    (lambda: kd.mla_attention(np.ones((3, 5)), kd.mla_weights(6, 2, 3, 4, 2)), ValueError,
     "W['W_Q'] has shape (6, 6)"),
    (lambda: kd.mla_weights(6, 2, 3, 4, 3), ValueError, "d_rope must be even"),
    (lambda: kd.WindowKVCache(2).append(np.ones((1, 2)), np.ones(2)), ValueError, "k must be 1-D"),
    (lambda: kd.quantize(np.ones((2, 2)), 1), ValueError, "bits must be between 2 and 8"),
    (lambda: kd.quantize(np.ones((2, 2)), 4, per="row"), ValueError, "per must be one of"),
    (lambda: kd.quantize(np.array([[1.0, np.nan]]), 4), ValueError, "must hold finite numbers"),
    (lambda: kd.paged_attention(np.ones(2), kd.PagedKVCache(2, 2, 3, 3), "a"), ValueError,
     "q has shape (2,)"),
    (lambda: kd.paged_attention(np.ones(3), kd.PagedKVCache(2, 2, 3, 3), "a"), ValueError,
     "no sequence 'a'"),
    (lambda: kd.streaming_mask(4, -1, 2), ValueError, "n_sink must be a whole number"),
    (lambda: kd.WindowKVCache(2, n_sink=-1), ValueError, "n_sink must be a whole number"),
    (lambda: kd.dequantize(np.ones((2, 3)), np.ones((3, 1))), ValueError,
     "does not broadcast to q's shape (2, 3)"),
    (lambda: kd.dequantize("7", 0.5), TypeError, "q must be a numeric array"),
])
def test_bad_input_raises_a_clear_error(call, error, fragment):
    with pytest.raises(error) as info:
        call()
    assert fragment in str(info.value)


def test_nothing_returns_nan_for_a_zero_row():
    q, scale = kd.quantize(np.zeros((2, 3)), 4)
    assert np.all(q == 0) and np.all(np.isfinite(scale))


@pytest.mark.parametrize("n_sink, window", [(1, 2), (2, 3), (3, 1), (0, 4)])
def test_streaming_cache_decodes_the_rows_of_the_streaming_mask(n_sink, window):
    n = 9
    Q, K, V = rng_qkv(n_sink + 10 * window, n, 2)
    cache = kd.WindowKVCache(window, n_sink=n_sink)
    for t in range(n):
        cache.append(K[t], V[t])
        kept = [j for j in range(t + 1) if j < n_sink or t - j < window]   # the definition
        assert cache.positions.tolist() == kept
        assert np.array_equal(cache.keys, K[kept]) and len(cache) == len(kept)
        expected, _ = loop_attention(Q[t], K[kept].tolist(), V[kept].tolist())
        got = ah.scaled_dot_product_attention(Q[t][None], cache.keys, cache.values)[0][0]
        assert np.allclose(got, expected)
    rows = ah.scaled_dot_product_attention(Q, K, V, mask=kd.streaming_mask(n, n_sink, window))[0]
    assert np.allclose(rows[-1], got)
    assert cache.nbytes == 2 * (n_sink + window) * 2 * 8


def window_cache_of_width_2():
    cache = kd.WindowKVCache(3)
    cache.append(np.ones(2), np.ones(2))
    return cache


@pytest.mark.parametrize("call, error, fragments", [
    # window_stack_cache_bytes(n_layers, n_kv_heads, d_head, seq_len, window, local_per_global, ...)
    (lambda: kd.window_stack_cache_bytes(0, 16, 128, 4096, 1024), ValueError,
     ["n_layers must be at least 1"]),
    (lambda: kd.window_stack_cache_bytes(62, 16, 128.0, 4096, 1024), TypeError,
     ["d_head must be a whole number, got 128.0"]),
    (lambda: kd.window_stack_cache_bytes(62, 16, 128, 4096, 0), ValueError, ["window must be at least 1"]),
    (lambda: kd.window_stack_cache_bytes(62, 16, 128, None, 1024), TypeError,
     ["seq_len must be a whole number"]),
    (lambda: kd.window_stack_cache_bytes(62, 16, 128, 4096, 1024, local_per_global=-1), ValueError,
     ["local_per_global must be a whole number ≥ 0, got -1"]),
    (lambda: kd.window_stack_cache_bytes(62, 16, 128, 4096, 1024, local_per_global=True), ValueError,
     ["local_per_global must be a whole number ≥ 0, got True"]),
    (lambda: kd.window_stack_cache_bytes(62, 16, 128, 4096, 1024, bytes_per_value=0), ValueError,
     ["bytes_per_value must be at least 1"]),
    # mla_cache_bytes(n_layers, d_latent, d_rope, seq_len, ...)
    (lambda: kd.mla_cache_bytes(61, 0, 64, 1), ValueError, ["d_latent must be at least 1, got 0"]),
    (lambda: kd.mla_cache_bytes(61, 512, "64", 1), TypeError, ["d_rope must be a whole number, got '64'"]),
    (lambda: kd.mla_cache_bytes(61, 512, 64, -1), ValueError, ["seq_len must be at least 1, got -1"]),
    (lambda: kd.mla_cache_bytes(61, 512, 64, 1, batch=0), ValueError, ["batch must be at least 1"]),
    # quantized_bytes(n_tokens, d, bits, per, scale_bytes)
    (lambda: kd.quantized_bytes(4, 8, 9), ValueError, ["bits must be between 2 and 8", "got 9"]),
    (lambda: kd.quantized_bytes(4, 8, 4.0), TypeError, ["bits must be a whole number, got 4.0"]),
    (lambda: kd.quantized_bytes(0, 8, 4), ValueError, ["n_tokens must be at least 1"]),
    (lambda: kd.quantized_bytes(4, 0, 4), ValueError, ["d must be at least 1"]),
    (lambda: kd.quantized_bytes(4, 8, 4, per="row"), ValueError, ["per must be one of", "got 'row'"]),
    (lambda: kd.quantized_bytes(4, 8, 4, per=["token"]), ValueError, ["per must be one of", "got ['token']"]),
    (lambda: kd.quantize(np.ones((2, 2)), 4, per=["token"]), ValueError, ["per must be one of"]),
    (lambda: kd.quantized_bytes(4, 8, 4, scale_bytes=0), ValueError, ["scale_bytes must be at least 1"]),
    # the caches: a row of another size than the cache holds
    (lambda: window_cache_of_width_2().append(np.ones(3), np.ones(2)), ValueError,
     ["the cache holds keys of size 2 and values of size 2", "got k (3,) and v (2,)"]),
    (lambda: window_cache_of_width_2().append(np.ones(2), np.ones(5)), ValueError,
     ["the cache holds keys of size 2 and values of size 2", "got k (2,) and v (5,)"]),
    (lambda: window_cache_of_width_2().append(np.ones(2), np.ones((1, 2))), ValueError,
     ["v must be 1-D, got shape (1, 2)"]),
    (lambda: kd.PagedKVCache(2, 4, 3, 2).append("a", np.ones(2), np.ones(2)), ValueError,
     ["the pool holds keys of shape (3,) and values of shape (2,)", "got k (2,) and v (2,)"]),
    (lambda: kd.PagedKVCache(2, 4, 3, 2).append("a", np.ones(3), np.ones(3)), ValueError,
     ["the pool holds keys of shape (3,) and values of shape (2,)", "got k (3,) and v (3,)"]),
    (lambda: kd.PagedKVCache(2, 4, 3, 2).append(["a"], np.ones(3), np.ones(2)), TypeError,
     ["seq must be a hashable name", "got list ['a']"]),
    (lambda: kd.paged_attention(np.ones(3), kd.PagedKVCache(2, 4, 3, 2), ["a"]), TypeError,
     ["seq must be a hashable name"]),
    (lambda: kd.PagedKVCache(2, 4, 3, 2).release("z"), ValueError, ["no sequence 'z' in the cache"]),
    (lambda: kd.paged_attention(np.ones(3), {"a": []}, "a"), TypeError,
     ["cache must be a PagedKVCache, got dict"]),
])
def test_bad_sizes_and_mismatched_rows_raise_a_clear_error(call, error, fragments):
    with pytest.raises(error) as info:
        call()
    for fragment in fragments:
        assert fragment in str(info.value)


def test_a_rejected_row_leaves_the_cache_as_it_was():
    ring = window_cache_of_width_2()
    with pytest.raises(ValueError):
        ring.append(np.ones(3), np.ones(2))
    assert ring.seen == 1 and ring.positions.tolist() == [0] and np.array_equal(ring.keys, np.ones((1, 2)))
    pool = kd.PagedKVCache(2, 4, 3, 2)
    with pytest.raises(ValueError):
        pool.append("a", np.ones(2), np.ones(2))
    assert pool.tables == {} and len(pool.free) == 4                   # no block was taken
