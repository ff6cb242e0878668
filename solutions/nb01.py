"""Reference solutions for the exercises of notebooks/01_qkv_projections.ipynb.

Not imported by the notebook (it never shows the solution); the tests in
tests/test_exercises_01.py check these against the checkers in attention_helpers.checks.
"""

import numpy as np

import attention_helpers as ah

__all__ = ["my_qkv", "SHAPE_SIZES", "shapes", "W_K_EX", "k_sat_1"]


# Exercise 1: the three projections.
def my_qkv(X, W_Q, W_K, W_V):
    Q = X @ W_Q
    K = X @ W_K
    V = X @ W_V
    return Q, K, V


# Exercise 2: predict the shapes for n = 5 tokens, d_model = 6, d_k = 2, d_v = 3.
SHAPE_SIZES = {"n": 5, "d_model": 6, "d_k": 2, "d_v": 3}
shapes = {
    "W_Q": (6, 2),
    "W_K": (6, 2),
    "W_V": (6, 3),
    "Q": (5, 2),
    "K": (5, 2),
    "V": (5, 3),
}


# Exercise 3: K[2, 1] for "sat" (row 2 of X) and column 1 of W_K_ex, by hand.
W_K_EX = np.array([
    [0.2, 0.0, 1.0],
    [0.0, 0.5, 0.0],
    [1.0, 0.3, 0.0],
    [0.0, 0.4, 0.5],
])
_, _X = ah.examples.the_cat_sat()
# sat = [0.4, 0.9, 0.5, 0.1]; column 1 of W_K_ex = [0.0, 0.5, 0.3, 0.4]
k_sat_1 = 0.4 * 0.0 + 0.9 * 0.5 + 0.5 * 0.3 + 0.1 * 0.4
assert np.isclose(k_sat_1, (_X @ W_K_EX)[2, 1])
