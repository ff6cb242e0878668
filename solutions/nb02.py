"""Reference solutions for the exercises of notebooks/02_dot_product_scores.ipynb.

Not imported by the notebook (it never shows the solution); the tests in
tests/test_exercises_02.py check these against the checkers in attention_helpers.checks.
"""

import numpy as np

import attention_helpers as ah

__all__ = ["W_Q2", "W_K_EX", "score_eats_fish", "my_scores", "shape_for_5_tokens"]

tokens, X, _, W_K, W_V = ah.examples.cat_eats_fish()

# The sheared W_Q of the notebook's Step 7 (W_K stays the identity), and Exercise 1's W_K_ex.
W_Q2, W_K_EX = ah.examples.scores_exercise_weights()
Q2, K2, _ = ah.project_qkv(X, W_Q2, W_K, W_V)

# Exercise 1: the keys get W_K_ex; q_eats = Q2[1] = [3, 4], k_fish = K_ex[2] = [6, 4].
K_ex = X @ W_K_EX
score_eats_fish = 3 * 6 + 4 * 4
assert np.isclose(score_eats_fish, Q2[1] @ K_ex[2])


# Exercise 2: the raw score matrix.
def my_scores(Q, K):
    return Q @ K.T


# Exercise 3: Q and K are [5, 8], so QKᵀ is [5, 8] @ [8, 5] = [5, 5].
shape_for_5_tokens = (5, 5)
