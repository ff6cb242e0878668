"""The small, hand-typed examples the notebooks share.

Each constructor returns fresh arrays, so a notebook that edits them in place
never changes what another cell (or another notebook) sees.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "the_cat_sat",
    "cat_eats_fish",
    "bank_sentences",
    "bank_weights",
    "it_sentence",
    "gpt2_shape_exercise",
    "scores_exercise_weights",
    "softmax_exercise_row",
    "mistral_cache_exercise",
]


def the_cat_sat():
    """("The cat sat") with d_model = 4: returns (tokens, X) with X of shape [3, 4]."""
    tokens = ["The", "cat", "sat"]
    X = np.array([
        [0.2, 0.5, 0.1, 0.7],  # The
        [0.8, 0.3, 0.6, 0.2],  # cat
        [0.4, 0.9, 0.5, 0.1],  # sat
    ])
    return tokens, X


def cat_eats_fish():
    """("cat eats fish") with d_model = 2: returns (tokens, X, W_Q, W_K, W_V).

    W_Q and W_K are the identity, so Q = K = X; W_V swaps the two dimensions.
    """
    tokens = ["cat", "eats", "fish"]
    X = np.array([
        [1.0, 2.0],  # cat
        [3.0, 1.0],  # eats
        [2.0, 4.0],  # fish
    ])
    W_Q = np.eye(2)
    W_K = np.eye(2)
    W_V = np.array([
        [0.0, 1.0],
        [1.0, 0.0],
    ])
    return tokens, X, W_Q, W_K, W_V


# A tiny embedding table with d_model = 4. Read the columns loosely as
# "water", "money", "place", "action"; a real model learns hundreds of
# dimensions with no names, but the idea is the same.
_BANK_VOCAB = {
    "the":     [0.1, 0.1, 0.1, 0.0],
    "river":   [0.9, 0.0, 0.6, 0.0],
    "bank":    [0.4, 0.4, 0.5, 0.1],
    "flooded": [0.8, 0.0, 0.1, 0.6],
    "I":       [0.0, 0.1, 0.0, 0.3],
    "paid":    [0.0, 0.9, 0.0, 0.7],
    "at":      [0.0, 0.0, 0.3, 0.0],
}


def bank_sentences():
    """Two contexts for "bank": returns {name: (tokens, X)} with X rows from one table.

    The row for "bank" is the same vector in both sentences: at the first
    layer a token's embedding does not know its neighbours yet.
    """
    sentences = {
        "river": ["the", "river", "bank", "flooded"],
        "money": ["I", "paid", "at", "the", "bank"],
    }
    return {
        name: (tokens, np.array([_BANK_VOCAB[t] for t in tokens]))
        for name, tokens in sentences.items()
    }


def bank_weights():
    """Fixed weights (W_Q, W_K, W_V), each [4, 3], used for both "bank" sentences."""
    W_Q = np.array([
        [1.0, 0.0, 0.2],
        [0.0, 1.0, 0.2],
        [0.3, 0.3, 1.0],
        [0.0, 0.0, 0.5],
    ])
    W_K = np.array([
        [1.0, 0.1, 0.0],
        [0.1, 1.0, 0.0],
        [0.2, 0.2, 0.8],
        [0.0, 0.3, 0.6],
    ])
    W_V = np.array([
        [0.5, 0.0, 0.5],
        [0.0, 0.5, 0.5],
        [0.5, 0.5, 0.0],
        [0.2, 0.2, 0.2],
    ])
    return W_Q, W_K, W_V


def it_sentence():
    """"The animal didn't cross the street because it was tired".

    Returns (tokens, weights_it, V): the attention weights of the query "it"
    over every token (0.65 animal, 0.20 street, 0.10 tired, and the remaining
    0.05 shared equally by the other tokens) and a value matrix V of shape
    [n_tokens, 4] with hand-picked rows.
    """
    tokens = ["The", "animal", "didn't", "cross", "the", "street",
              "because", "it", "was", "tired"]
    named = {"animal": 0.65, "street": 0.20, "tired": 0.10}
    others = [t for t in tokens if t not in named]
    weights = np.array([named.get(t, 0.05 / len(others)) for t in tokens])
    V = np.array([
        [0.1, 0.0, 0.0, 0.1],  # The
        [1.0, 0.8, 0.0, 0.1],  # animal
        [0.0, 0.1, 0.2, 0.0],  # didn't
        [0.0, 0.2, 0.6, 0.1],  # cross
        [0.1, 0.0, 0.0, 0.1],  # the
        [0.0, 0.0, 1.0, 0.5],  # street
        [0.0, 0.1, 0.0, 0.0],  # because
        [0.2, 0.2, 0.2, 0.2],  # it
        [0.0, 0.0, 0.1, 0.0],  # was
        [0.6, 0.0, 0.0, 0.9],  # tired
    ])
    return tokens, weights, V


# ---- exercise data: the notebook shows it, the checker and the solution read it here ----

def gpt2_shape_exercise():
    """Notebook 00, Exercise 3: returns (tokens, d_model), a sentence split into one token
    per word and the embedding size of GPT-2 small."""
    return "The animal didn't cross the street because it was tired".split(), 768


def scores_exercise_weights():
    """Notebook 02, Exercise 1, on "cat eats fish": returns (W_Q2, W_K_ex), each [2, 2].

    W_Q2 is the sheared query matrix of Step 7 (x[0] feeds both query dimensions,
    x[1] only dimension 1); W_K_ex is the exercise's new key matrix.
    """
    W_Q2 = np.array([
        [1.0, 1.0],
        [0.0, 1.0],
    ])
    W_K_ex = np.array([
        [1.0, 0.0],
        [1.0, 1.0],
    ])
    return W_Q2, W_K_ex


def softmax_exercise_row():
    """Notebook 04, Exercise 3: one query's scores for three keys."""
    return np.array([1.0, 3.0, 0.5])


def mistral_cache_exercise():
    """Notebook 06, Exercise 1: Mistral-7B (32 layers, 8 KV heads of size 128) caching
    3000 tokens in float32 (4 bytes per value), as a dict of kv_cache_bytes' arguments
    plus the number of query heads."""
    return dict(n_layers=32, n_q_heads=32, n_kv_heads=8, d_head=128, seq_len=3000, bytes_per_value=4)
