"""Checkers for notebook 09, tiled attention and the online softmax."""

from __future__ import annotations

import numpy as np

from .. import core
from ._base import Check, call, checker, compare, compare_number, empty, right, wrong

_SCORES = np.array([3.2, 6.2, 4.0, 1.0, 8.0, 2.0])  # block 2's maximum is below block 1's
_VALUES = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 0.0], [0.0, 2.0], [1.0, -1.0]])
_BLOCKS = [slice(0, 2), slice(2, 4), slice(4, 6)]


def _states(update):
    """(m, row_sum, acc...) after each block, when the blocks are fed to `update` in turn."""
    m, total, acc, rows = -np.inf, 0.0, np.zeros(2), []
    for b in _BLOCKS:
        m, total, acc = update(m, total, acc, _SCORES[b], _VALUES[b])
        rows.append([m, total, *np.ravel(acc)])
    return np.array(rows)


def _reference(m, total, acc, scores, values, rescale_l=True, rescale_acc=True, block_max=False):
    new = scores.max() if block_max else max(m, scores.max())
    p = np.exp(scores - new)
    factor = np.exp(m - new)
    total = (total * factor if rescale_l else total) + p.sum()
    acc = (acc * factor if rescale_acc else acc) + p @ values
    return new, total, acc


@checker
def check_online_update(fn) -> Check:
    """Check `fn(m, row_sum, acc, scores, values) -> (m, row_sum, acc)`: one online-softmax step,
    one query row."""
    rows = []
    m, total, acc = -np.inf, 0.0, np.zeros(2)
    for b in _BLOCKS:
        out, err = call(fn, m, total, acc.copy(), _SCORES[b].copy(), _VALUES[b].copy())
        if err is not None:
            return err
        if out is None or out is Ellipsis:
            return empty("my_online_update(...)")
        try:
            m, total, acc = out
            acc = np.asarray(acc, dtype=float)
            row = [float(m), float(total), *acc.ravel()]
        except (TypeError, ValueError):
            return wrong("my_online_update should return three things, (m, row_sum, acc): two numbers "
                         f"and the running output row; got {out!r}.", kind="wrong_type")
        if len(row) != 4:
            return wrong(f"acc should hold one number per value column (2), got shape {acc.shape}.",
                         kind="wrong_shape")
        rows.append(row)
    check = compare(rows, _states(_reference), name="(m, row_sum, acc) after each block", mistakes={
        "not_finite": (
            "row_sum or acc became inf or nan: the rescale factor is exp(m_old − m_new), at most 1 "
            "(and 0 at the start, when m_old is −inf).",
            None),
        "acc_not_rescaled": (
            "acc was not rescaled: when the maximum grows, multiply the old acc by exp(m_old − m_new) "
            "too.",
            _states(lambda *a: _reference(*a, rescale_acc=False))),
        "row_sum_not_rescaled": (
            "row_sum was not rescaled: when the maximum grows, multiply the old row_sum by "
            "exp(m_old − m_new) too.",
            _states(lambda *a: _reference(*a, rescale_l=False))),
        "neither_rescaled": (
            "neither row_sum nor acc was rescaled when the maximum grew: multiply both by "
            "exp(m_old − m_new).",
            _states(lambda *a: _reference(*a, rescale_l=False, rescale_acc=False))),
        "block_max": (
            "m must be the largest score seen so far, max(m, scores.max()), not the largest of this block.",
            _states(lambda *a: _reference(*a, block_max=True))),
    })
    if not check:
        return check
    final = np.array(rows[-1][2:]) / rows[-1][1]
    expected = core.softmax(_SCORES) @ _VALUES
    if not np.allclose(final, expected):  # cannot happen when every state matched: a guard
        return wrong("the states match but acc / row_sum is not softmax(scores) · values.")
    return right(f"after the last block acc / row_sum = {np.round(final, 3)}, exactly "
                 "softmax(scores) · values.")


@checker
def check_causal_tiles(answer, n_tokens, block) -> Check:
    """Check the number of tiles a causal tiled attention computes (tiles above the diagonal skipped)."""
    g = -(-n_tokens // block)  # blocks per side
    expected = g * (g + 1) // 2
    return compare_number(
        answer, expected, name="my_tiles",
        success=f"{expected:,} of the {g * g:,} tiles: the {g} on the diagonal and every one below it.",
        mistakes={
            "whole_grid": (
                "that is every tile of the grid: the causal mask hides the tiles wholly above the "
                "diagonal, and they are skipped.",
                g * g),
            "no_diagonal": (
                "you left out the diagonal tiles: they are half visible, so they are computed.",
                g * (g - 1) // 2),
            "half_grid": (
                "half the grid is not enough: the tiles on the diagonal are computed whole.",
                g * g / 2),
            "counted_scores": (
                f"that counts scores, not tiles: count blocks of {block} × "
                f"{block} scores.",
                n_tokens * (n_tokens + 1) // 2),
            "blocks_per_side": (
                "that is the number of blocks along one side; count the tiles of the grid on or below "
                "the diagonal.",
                g),
        },
        otherwise=lambda value: f"{value:g} is not it yet: with {g} blocks per side, row of tiles r "
                                "(counting from 1) computes r tiles; add them up.")
