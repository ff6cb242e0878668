"""Reference solutions for the exercises of notebooks/05_weighted_sum_and_self_attention.ipynb.

Not imported by the notebook (it never shows the solution); tests/test_exercises_05.py
checks these against the checkers in attention_helpers.checks.
"""

import numpy as np

import attention_helpers as ah

__all__ = ["q_sat", "K_ex", "V_ex", "output_row", "out_sat", "my_attention"]

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
