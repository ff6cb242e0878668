"""Reference solutions for the exercises of notebooks/05b_multi_head_attention.ipynb.

Not imported by the notebook (it never shows the solution); tests/test_exercises_05b.py
checks these against the checkers in attention_helpers.checks.
"""

import numpy as np

import attention_helpers as ah

__all__ = ["my_multi_head", "my_padding_mask"]


# Exercise 1: multi-head self-attention (Step 1), without ah.multi_head_attention.
def my_multi_head(X, W_Q, W_K, W_V, W_O, n_heads):
    n, width = X.shape[0], W_Q.shape[1]
    d_head = width // n_heads

    def split(M):  # [n, width] -> [n_heads, n, d_head]
        return M.reshape(n, n_heads, d_head).transpose(1, 0, 2)

    Q, K, V = split(X @ W_Q), split(X @ W_K), split(X @ W_V)
    weights = ah.softmax(Q @ K.transpose(0, 2, 1) / np.sqrt(d_head), axis=-1)
    heads = weights @ V                                   # [n_heads, n, d_head]
    concat = heads.transpose(1, 0, 2).reshape(n, width)   # the heads side by side again
    return concat @ W_O


# Exercise 2: the padding mask (Step 2a), without ah.padding_mask.
def my_padding_mask(lengths, n):
    positions = np.arange(n)
    return positions[None, None, :] < np.asarray(lengths)[:, None, None]   # [batch, 1, n]
