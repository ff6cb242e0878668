"""Reference solutions for the exercises of notebooks/00_input_matrix.ipynb."""

import numpy as np

import attention_helpers as ah


def build_X(sentence, table):
    """One row per token, in sentence order: X has shape (n_tokens, d_model)."""
    return np.stack([np.asarray(table[token], dtype=float) for token in sentence])


def add_positions(X):
    """X + PE, with PE the sinusoidal position code of X's shape."""
    X = np.asarray(X, dtype=float)
    n_tokens, d_model = X.shape
    return X + ah.positional_encoding(n_tokens, d_model)


# Exercise 3: the notebook types the sentence and d_model; here they come from examples.
sentence_it, d_model_gpt2 = ah.examples.gpt2_shape_exercise()
shape_X = (len(sentence_it), d_model_gpt2)
