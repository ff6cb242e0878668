"""Reference solutions for the exercises of notebooks/11_modern_kv_cache.ipynb.

Not imported by the notebook (it never shows the solution); the tests in
tests/test_exercises_11.py check these against the checkers in attention_helpers.checks.
"""

import numpy as np

__all__ = ["my_window_step", "my_sink_attention", "my_quantize_per_token"]


# Exercise 1: one decoding step with a sliding-window cache.
def my_window_step(keys, values, k, v, q, window):
    keys = np.vstack([keys, k])[-window:]        # append first, then keep the last `window` rows
    values = np.vstack([values, v])[-window:]
    scores = keys @ q / np.sqrt(q.shape[0])
    weights = np.exp(scores - scores.max())
    return (weights / weights.sum()) @ values, keys, values


# Exercise 2: attention with one sink logit per head.
def my_sink_attention(Q, K, V, sinks):
    scores = Q @ np.swapaxes(K, 1, 2) / np.sqrt(Q.shape[-1])          # [h, n, n]
    sink = np.broadcast_to(sinks[:, None, None], scores.shape[:2] + (1,))
    row = np.concatenate([scores, sink], axis=-1)                      # the sink joins every row
    e = np.exp(row - row.max(axis=-1, keepdims=True))
    weights = (e / e.sum(axis=-1, keepdims=True))[..., :-1]            # ... and is dropped
    return weights @ V, weights


# Exercise 3: quantise with one scale per token, and back.
def my_quantize_per_token(x, bits):
    q_max = 2 ** (bits - 1) - 1
    scale = np.abs(x).max(axis=-1, keepdims=True) / q_max
    q = np.clip(np.round(x / scale), -q_max, q_max)
    return q * scale
