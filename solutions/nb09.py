"""Reference solutions for the exercises of notebooks/09_tiled_attention.ipynb.

Not imported by the notebook (it never shows the solution); the tests in
tests/test_exercises_09.py check these against the checkers in attention_helpers.checks.
"""

import numpy as np

__all__ = ["my_online_update", "my_tiles"]


# Exercise 1: one online-softmax update for one query row.
def my_online_update(m, row_sum, acc, scores, values):
    m_new = max(m, scores.max())
    rescale = np.exp(m - m_new)                 # 0 at the start (m = -inf), 1 if the maximum stays
    p = np.exp(scores - m_new)
    return m_new, row_sum * rescale + p.sum(), acc * rescale + p @ values


# Exercise 2: tiles computed by causal tiled attention, 4096 tokens in blocks of 128.
n_tokens, block = 4096, 128
g = n_tokens // block
my_tiles = g * (g + 1) // 2                     # row of tiles r computes r tiles: 1 + 2 + … + g
