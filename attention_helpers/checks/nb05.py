"""Checkers for notebook 05, the weighted sum and self-attention."""

from __future__ import annotations

import numpy as np

from .. import core
from ._base import Check, call, checker, compare, fmt, right, wrong
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
        "you multiplied the scaled scores by V: turn them into weights with the softmax first, "
        "then take weights @ V.": (scores / np.sqrt(d_k)) @ V,
        "you multiplied the raw scores by V: scale them by 1/sqrt(d_k) and take the softmax first "
        "to get the weights, then take weights @ V.": scores @ V,
        "you multiplied the weights by K: the output mixes the value rows, so take weights @ V.":
            weights @ K,
        **scaling_mistakes(lambda factor: core.softmax(scores * factor) @ V, d_k, scores="the scores"),
        "that is the row of weights (one per key), not the output: multiply it by V.": weights,
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
        "your output contains inf or nan: hidden scores should become -np.inf before the softmax "
        "(np.where(mask, scores, -np.inf)), and the softmax should subtract the row maximum.": None,
        "the mask had no effect: set the scores to -np.inf where mask is False, before the softmax.":
            core.softmax(scaled) @ V,
        "the mask is the wrong way round: True means may attend, so hide the scores where mask is "
        "False (np.where(mask, scores, -np.inf)).":
            core.softmax(np.where(mask, -np.inf, scaled)) @ V,
        "you set the hidden scores to 0, but exp(0) = 1 still gives them weight: use -np.inf.":
            core.softmax(np.where(mask, scaled, 0.0)) @ V,
        "you zeroed the hidden weights after the softmax, so the rows no longer sum to 1: mask the "
        "scores with -np.inf before the softmax instead.": (core.softmax(scaled) * mask) @ V,
    }, success="softmax(Q·Kᵀ/√d_k)·V with and without a mask; hidden keys get weight 0.")


# ---- Step 7 and 8: multi-head attention and a padding mask ----------------------

def _multi_head_mistakes(X, W_Q, W_K, W_V, W_O, n_heads):
    """{hint: output} for the usual slips in splitting, scaling and merging heads."""
    n, width = X.shape[0], W_Q.shape[1]
    d_head = width // n_heads
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V

    def attend(split, scale):  # split: [n, width] -> [n_heads, n, d_head]
        q, k, v = split(Q), split(K), split(V)
        return core.softmax(q @ np.swapaxes(k, -1, -2) / np.sqrt(scale)) @ v

    def heads(M):
        return M.reshape(n, n_heads, d_head).transpose(1, 0, 2)

    def merge(H):  # [n_heads, n, d_head] -> [n, width]
        return H.transpose(1, 0, 2).reshape(n, width)

    def no_transpose(M):
        return M.reshape(n_heads, n, d_head)

    def interleaved(M):  # head h gets columns h, h + n_heads, ...
        return M.reshape(n, d_head, n_heads).transpose(2, 0, 1)

    return {
        "you divided the scores by sqrt(d_model), the full width; each head's queries and keys have "
        "d_head = d_model / n_heads entries, so divide by sqrt(d_head).": merge(attend(heads, width)) @ W_O,
        "you forgot to scale: divide each head's scores by sqrt(d_head) before the softmax.":
            merge(attend(heads, 1.0)) @ W_O,
        "you reshaped Q, K and V straight to [n_heads, n, d_head], which cuts across tokens: reshape "
        "to [n, n_heads, d_head], then swap the first two axes (.transpose(1, 0, 2)).":
            merge(attend(no_transpose, d_head)) @ W_O,
        "you split the heads with a plain reshape to [n_heads, n, d_head] and merged them back with a "
        "plain reshape, which cuts across tokens: reshape to [n, n_heads, d_head], then transpose "
        "(1, 0, 2); undo both the same way.": attend(no_transpose, d_head).reshape(n, width) @ W_O,
        "head h took every n_heads-th column; it owns the consecutive columns "
        "h·d_head … (h+1)·d_head − 1: reshape to [n, n_heads, d_head].":
            attend(interleaved, d_head).transpose(1, 2, 0).reshape(n, width) @ W_O,
        "you returned the concatenated heads: mix them with W_O (concat @ W_O).":
            merge(attend(heads, d_head)),
        "you ran one head of full width: n_heads was ignored. Split the columns into n_heads heads.":
            attend(lambda M: M[None], width)[0] @ W_O,
    }


@checker
def check_multi_head(fn) -> Check:
    """Check `fn(X, W_Q, W_K, W_V, W_O, n_heads) -> output` (multi-head self-attention, no mask)
    with 3 heads and then 2 heads on data the notebook never shows."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(4, 6))
    W_Q, W_K, W_V = (rng.normal(size=(6, 6)) for _ in range(3))
    W_O = rng.normal(size=(6, 5))
    for n_heads in (3, 2):
        out, err = call(fn, X.copy(), W_Q.copy(), W_K.copy(), W_V.copy(), W_O.copy(), n_heads)
        if err is not None:
            return err
        if isinstance(out, tuple):
            out = out[0]
        expected, _ = core.multi_head_attention(X, W_Q, W_K, W_V, W_O, n_heads)
        check = compare(out, expected, name=f"the output with n_heads={n_heads}",
                        mistakes=_multi_head_mistakes(X, W_Q, W_K, W_V, W_O, n_heads))
        if not check:
            return check
    return right("split into heads, scaled by sqrt(d_head), concatenated and mixed by W_O, "
                 "with 3 heads and with 2.")


@checker
def check_padding_mask(fn) -> Check:
    """Check `fn(lengths, n) -> bool [batch, 1, n]`, True where key j is a real token (j < length)."""
    for lengths, n in (([3, 1, 4], 5), ([2], 3)):
        out, err = call(fn, list(lengths), n)
        if err is not None:
            return err
        expected = core.padding_mask(lengths, n)
        if out is not None and np.asarray(out).dtype != bool and np.shape(out) == expected.shape \
                and np.array_equal(np.asarray(out), expected):
            return wrong(f"the pattern is right but your mask holds {np.asarray(out).dtype} numbers: a mask "
                         "is boolean (True = may attend); build it with a comparison such as j < length.",
                         kind="wrong_type")
        positions, L = np.arange(n), np.asarray(lengths)
        real = positions[None, :] < L[:, None]  # [batch, n]
        check = compare(out, expected, name=f"padding_mask({lengths}, {n})", mistakes={
            "the mask is the wrong way round: True means a real key (may attend), so it is True "
            "where j < length.": ~expected,
            "off by one: positions count from 0, so key j is real when j < length, not j <= length.":
                (positions[None, :] <= L[:, None])[:, None, :],
            "your mask is [batch, n]: add a middle axis of size 1 ([:, None, :]) so that one row "
            "serves every query of its sentence.": real,
            "your mask is [batch, n, 1]: that would hide queries, not keys. The key positions go "
            "last: [batch, 1, n].": real[:, :, None],
        })
        if not check:
            return check
    return right("True where key j is a real token (j < length), shape [batch, 1, n], so one row "
                 "serves every query.")
