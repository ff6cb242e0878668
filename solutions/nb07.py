"""Reference solutions for the exercises of notebooks/07_positions_and_rope.ipynb.

Not imported by the notebook (it never shows the solution); the tests in
tests/test_exercises_07.py check these against the checkers in attention_helpers.checks.
"""

import numpy as np

__all__ = ["my_rotate_pair", "my_rope", "my_key_position"]


# Exercise 1: turn a pair counter-clockwise by `angle` radians.
def my_rotate_pair(pair, angle):
    R = np.array([[np.cos(angle), -np.sin(angle)],
                  [np.sin(angle), np.cos(angle)]])
    return R @ pair


# Exercise 2: RoPE with base 10000, pairs (2i, 2i+1).
def my_rope(x, positions):
    d = x.shape[1]
    theta = 10000.0 ** (-np.arange(0, d, 2) / d)            # one frequency per pair
    angle = np.asarray(positions, dtype=float)[:, None] * theta[None, :]
    out = np.empty_like(x)
    out[:, 0::2] = x[:, 0::2] * np.cos(angle) - x[:, 1::2] * np.sin(angle)
    out[:, 1::2] = x[:, 0::2] * np.sin(angle) + x[:, 1::2] * np.cos(angle)
    return out


# Exercise 3: the same distance m − n gives the same score.
query_position, key_position, new_query_position = 1000, 997, 5
my_key_position = new_query_position - (query_position - key_position)
