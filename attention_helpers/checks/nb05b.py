"""Checkers for notebook 05b, multi-head attention and padded batches."""

from __future__ import annotations

import numpy as np

from .. import core
from ._base import Check, call, checker, compare, right, wrong


def _multi_head_mistakes(X, W_Q, W_K, W_V, W_O, n_heads):
    """{key: (hint, output)} for the usual slips in splitting, scaling and merging heads."""
    n, width = X.shape[0], W_Q.shape[1]
    d_head = width // n_heads
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V

    def attend(split, scale):  # split: [n, width] -> [n_heads, n, d_head]
        q, k, v = split(Q), split(K), split(V)
        return core.softmax(q @ np.swapaxes(k, -1, -2) / np.sqrt(scale)) @ v

    def heads(M):
        return core.split_heads(M, n_heads)

    def merge(H):  # [n_heads, n, d_head] -> [n, width]
        return core.merge_heads(H)

    def no_transpose(M):
        return M.reshape(n_heads, n, d_head)

    def interleaved(M):  # head h gets columns h, h + n_heads, ...
        return M.reshape(n, d_head, n_heads).transpose(2, 0, 1)

    return {
        "sqrt_d_model": (
            "you divided the scores by sqrt(d_model), the full width; each head's queries and keys have "
            "d_head = d_model / n_heads entries, so divide by sqrt(d_head).",
            merge(attend(heads, width)) @ W_O),
        "no_scale": (
            "you forgot to scale: divide each head's scores by sqrt(d_head) before the softmax.",
            merge(attend(heads, 1.0)) @ W_O),
        "reshape_without_transpose": (
            "you reshaped Q, K and V straight to [n_heads, n, d_head], which cuts across tokens: reshape "
            "to [n, n_heads, d_head], then swap the first two axes (.transpose(1, 0, 2)).",
            merge(attend(no_transpose, d_head)) @ W_O),
        "reshape_both_ways": (
            "you split the heads with a plain reshape to [n_heads, n, d_head] and merged them back with a "
            "plain reshape, which cuts across tokens: reshape to [n, n_heads, d_head], then transpose "
            "(1, 0, 2); undo both the same way.",
            attend(no_transpose, d_head).reshape(n, width) @ W_O),
        "interleaved_heads": (
            "head h took every n_heads-th column; it owns the consecutive columns "
            "h·d_head … (h+1)·d_head − 1: reshape to [n, n_heads, d_head].",
            attend(interleaved, d_head).transpose(1, 2, 0).reshape(n, width) @ W_O),
        "no_W_O": (
            "you returned the concatenated heads: mix them with W_O (concat @ W_O).",
            merge(attend(heads, d_head))),
        "one_head": (
            "you ran one head of full width: n_heads was ignored. Split the columns into n_heads heads.",
            attend(lambda M: M[None], width)[0] @ W_O),
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
                         kind="wrong_type", mistake="not_boolean")
        positions, L = np.arange(n), np.asarray(lengths)
        real = positions[None, :] < L[:, None]  # [batch, n]
        check = compare(out, expected, name=f"padding_mask({lengths}, {n})", mistakes={
            "mask_inverted": (
                "the mask is the wrong way round: True means a real key (may attend), so it is True "
                "where j < length.",
                ~expected),
            "off_by_one": (
                "off by one: positions count from 0, so key j is real when j < length, not j <= length.",
                (positions[None, :] <= L[:, None])[:, None, :]),
            "no_middle_axis": (
                "your mask is [batch, n]: add a middle axis of size 1 ([:, None, :]) so that one row "
                "serves every query of its sentence.",
                real),
            "axis_in_wrong_place": (
                "your mask is [batch, n, 1]: that would hide queries, not keys. The key positions go "
                "last: [batch, 1, n].",
                real[:, :, None]),
        })
        if not check:
            return check
    return right("True where key j is a real token (j < length), shape [batch, 1, n], so one row "
                 "serves every query.")
