"""Reference solutions for the exercises of notebooks/05_weighted_sum_and_self_attention.ipynb.

Not imported by the notebook (it never shows the solution); tests/test_exercises_05.py
checks these against the checkers in attention_helpers.checks.
"""

import numpy as np

import attention_helpers as ah

__all__ = ["q_sat", "K_ex", "V_ex", "output_row", "out_sat", "my_attention", "my_multi_head",
           "my_padding_mask"]

# Exercise 1: the data typed into the notebook, and the output row of "sat".
q_sat = np.array([1.0, 0.5])    # query of "sat"
K_ex = np.array([[0.5, 1.0],    # The
                 [1.5, 0.0],    # cat
                 [1.0, 1.0]])   # sat
V_ex = np.array([[1.0, 0.0],    # The
                 [0.0, 2.0],    # cat
                 [1.0, 1.0]])   # sat


def output_row(q, K, V):
    """softmax(q·Kᵀ/√d_k)·V for one query vector q."""
    scores = K @ q
    weights = ah.softmax(scores / np.sqrt(q.shape[-1]))
    return weights @ V


out_sat = output_row(q_sat, K_ex, V_ex)


# Exercise 2: the whole attention function, with an optional mask (True = may attend).
def my_attention(Q, K, V, mask=None):
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = ah.softmax(scores, axis=-1)
    return weights @ V


# Exercise 3: multi-head self-attention (Step 7), without ah.multi_head_attention.
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


# Exercise 4: the padding mask (Step 8), without ah.padding_mask.
def my_padding_mask(lengths, n):
    positions = np.arange(n)
    return positions[None, None, :] < np.asarray(lengths)[:, None, None]   # [batch, 1, n]
