"""Reference solutions for the exercises of notebooks/03_scaling_by_sqrt_dk.ipynb.

Not imported by the notebook (it never shows the solution); the tests in
tests/test_exercises_03.py check these against the checkers in attention_helpers.checks.
"""

import numpy as np

import attention_helpers as ah

__all__ = ["D_K_EXERCISE", "my_variance", "my_attention"]

# Exercise 1: q·k is a sum of d_k independent products q_i·k_i, each of variance 1,
# and variances of independent terms add.
D_K_EXERCISE = 128
my_variance = D_K_EXERCISE


# Exercise 2: the unscaled attention, fixed.
def my_attention(Q, K, V):
    d_k = Q.shape[-1]
    weights = ah.softmax(Q @ K.T / np.sqrt(d_k))
    return weights @ V
