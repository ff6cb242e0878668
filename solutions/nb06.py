"""Reference solutions for the exercises of notebooks/06_kv_cache_gqa.ipynb.

Not imported by the notebook (it never shows the solution); the tests in
tests/test_exercises_06.py check these against the checkers in attention_helpers.checks.
"""

import numpy as np

import attention_helpers as ah

__all__ = ["exercise_config", "my_cache_bytes", "my_decode_step", "my_kv_head"]


# Exercise 1: the KV cache of Mistral-7B for 3000 tokens kept in float32.
exercise_config = ah.examples.mistral_cache_exercise()
# 2 (K and V) × layers × KV heads × d_head × tokens × bytes per value
my_cache_bytes = (2 * exercise_config["n_layers"] * exercise_config["n_kv_heads"] * exercise_config["d_head"]
                  * exercise_config["seq_len"] * exercise_config["bytes_per_value"])


# Exercise 2: one decoding step with a KV cache.
def my_decode_step(cache, x, W_Q, W_K, W_V):
    q, k, v = x @ W_Q, x @ W_K, x @ W_V
    cache.append(k, v)  # first append: the new token attends to itself too
    K, V = cache.keys, cache.values
    scores = K @ q / np.sqrt(q.shape[0])
    weights = np.exp(scores - scores.max())
    weights /= weights.sum()
    return weights @ V


# Exercise 3: which KV head query head h reads.
def my_kv_head(h, h_q, h_kv):
    return h // (h_q // h_kv)
