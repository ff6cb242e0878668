"""Reference solutions for the exercises of notebooks/04_softmax.ipynb (not shown to learners)."""

import numpy as np

import attention_helpers as ah


def my_softmax(S):
    """Exercise 1: a stable softmax along the last axis (each row sums to 1)."""
    S = np.asarray(S, dtype=float)
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# Exercise 2: p_top / p_next = e^(gap / T) = 2 for gap = 8.0 - 6.2 = 1.8, so T = 1.8 / ln 2.
T_twice = 1.8 / np.log(2.0)

# Exercise 3: the probability of the second key of the row (the notebook types it), by hand.
row = ah.examples.softmax_exercise_row()
p_second = np.exp(row[1]) / (np.exp(row[0]) + np.exp(row[1]) + np.exp(row[2]))
