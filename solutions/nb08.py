"""Reference solutions for the exercises of notebooks/08_the_decoder_block.ipynb.

Not imported by the notebook (it never shows the solution); the tests in
tests/test_exercises_08.py check these against the checkers in attention_helpers.checks.
"""

import numpy as np

__all__ = ["my_rms_norm", "my_layer_norm", "my_block"]


# Exercise 1: RMSNorm over each row.
def my_rms_norm(X, gamma, eps=1e-6):
    return gamma * X / np.sqrt((X ** 2).mean(axis=-1, keepdims=True) + eps)


# Exercise 2: LayerNorm over each row.
def my_layer_norm(X, gamma, beta, eps=1e-6):
    mean = X.mean(axis=-1, keepdims=True)
    var = X.var(axis=-1, keepdims=True)
    return gamma * (X - mean) / np.sqrt(var + eps) + beta


# Exercise 3: the pre-norm block with its two residuals.
def my_block(X, attention, ffn, norm):
    h = X + attention(norm(X))
    return h + ffn(norm(h))
