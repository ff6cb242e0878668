"""Checkers for notebook 05, the weighted sum and self-attention (multi-head attention and
padded batches are notebook 05b's: nb05b.py)."""

from __future__ import annotations

import numpy as np

from .. import core
from ._base import Check, call, checker, compare, fmt
from ._mistakes import scaling_mistakes
from .nb03 import check_attention


@checker
def check_output_row(answer, q, K, V) -> Check:
    """Check one output row softmax(q·Kᵀ/√d_k)·V worked out by hand for the query vector `q`."""
    q = np.asarray(q, dtype=float)
    K = np.asarray(K, dtype=float)
    V = np.asarray(V, dtype=float)
    d_k = q.shape[-1]
    scores = K @ q
    weights = core.softmax(scores / np.sqrt(d_k))
    expected = weights @ V
    if answer is not None and np.shape(answer) == (1,) + expected.shape:
        answer = np.asarray(answer)[0]  # a [1, d_v] row is fine too
    return compare(answer, expected, name="the output row", mistakes={
        "no_softmax": (
            "you multiplied the scaled scores by V: turn them into weights with the softmax first, "
            "then take weights @ V.",
            (scores / np.sqrt(d_k)) @ V),
        "raw_scores_times_V": (
            "you multiplied the raw scores by V: scale them by 1/sqrt(d_k) and take the softmax first "
            "to get the weights, then take weights @ V.",
            scores @ V),
        "times_K": (
            "you multiplied the weights by K: the output mixes the value rows, so take weights @ V.",
            weights @ K),
        **scaling_mistakes(lambda factor: core.softmax(scores * factor) @ V, d_k, scores="the scores"),
        "returned_weights": (
            "that is the row of weights (one per key), not the output: multiply it by V.",
            weights),
    }, success=f"output row = {fmt(expected)}, a mixture of the value rows with weights {fmt(weights)}.")


@checker
def check_masked_attention(fn) -> Check:
    """Check `fn(Q, K, V, mask=None) -> output`: first without a mask (see check_attention),
    then with a boolean mask where True = may attend."""
    check = check_attention(fn)
    if not check:
        return check
    rng = np.random.default_rng(5)
    Q, K, V = rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
    # every row keeps at least one key and hides at least one, also when inverted
    mask = np.array([[True, False, True, False],
                     [True, True, False, False],
                     [False, True, True, True],
                     [True, False, False, True]])
    out, err = call(fn, Q, K, V, mask.copy())
    if err is not None:
        return err
    if isinstance(out, tuple):
        out = out[0]
    scaled = Q @ K.T / np.sqrt(Q.shape[-1])
    expected, _ = core.scaled_dot_product_attention(Q, K, V, mask=mask)
    return compare(out, expected, name="attention(Q, K, V, mask)", mistakes={
        "not_finite": (
            "your output contains inf or nan: hidden scores should become -np.inf before the softmax "
            "(np.where(mask, scores, -np.inf)), and the softmax should subtract the row maximum.",
            None),
        "mask_ignored": (
            "the mask had no effect: set the scores to -np.inf where mask is False, before the softmax.",
            core.softmax(scaled) @ V),
        "mask_inverted": (
            "the mask is the wrong way round: True means may attend, so hide the scores where mask is "
            "False (np.where(mask, scores, -np.inf)).",
            core.softmax(np.where(mask, -np.inf, scaled)) @ V),
        "hidden_set_to_zero": (
            "you set the hidden scores to 0, but exp(0) = 1 still gives them weight: use -np.inf.",
            core.softmax(np.where(mask, scaled, 0.0)) @ V),
        "zeroed_after_softmax": (
            "you zeroed the hidden weights after the softmax, so the rows no longer sum to 1: mask the "
            "scores with -np.inf before the softmax instead.",
            (core.softmax(scaled) * mask) @ V),
    }, success="softmax(Q·Kᵀ/√d_k)·V with and without a mask; hidden keys get weight 0.")
