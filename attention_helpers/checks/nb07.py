"""Checkers for notebook 07, positions and RoPE."""

from __future__ import annotations

import numpy as np

from .. import core
from ._base import Check, call, checker, compare, compare_number, empty, wrong


def _rotate(pair, angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.array([c * pair[0] - s * pair[1], s * pair[0] + c * pair[1]])


@checker
def check_rotate_pair(fn) -> Check:
    """Check `fn(pair, angle)`: the 2-vector `pair` turned counter-clockwise by `angle` radians."""
    cases = [(np.array([1.0, 0.0]), np.pi / 2), (np.array([0.8, -0.4]), 0.3), (np.array([1.0, 0.5]), 2.0)]
    got = []
    for pair, angle in cases:
        out, err = call(fn, pair.copy(), angle)
        if err is not None:
            return err
        if out is None or out is Ellipsis:
            return empty("my_rotate_pair(pair, angle)")
        got.append(out)
    if any(np.shape(g) != (2,) for g in got):
        shapes = [np.shape(g) for g in got]
        return wrong(f"my_rotate_pair should return the turned pair, 2 numbers; got shapes {shapes}.",
                     kind="wrong_shape")
    return compare(got, [_rotate(p, a) for p, a in cases], name="the turned pairs", mistakes={
        "you turned clockwise: the rotation matrix is [[cos, -sin], [sin, cos]], so the first "
        "coordinate gets x·cos − y·sin and the second x·sin + y·cos.": [_rotate(p, -a) for p, a in cases],
        "the angle is already in radians (np.cos and np.sin take radians): do not convert it.":
            [_rotate(p, np.radians(a)) for p, a in cases],
        "you swapped cos and sin: at angle 0 the pair must come back unchanged.":
            [np.array([np.sin(a) * p[0] - np.cos(a) * p[1], np.cos(a) * p[0] + np.sin(a) * p[1]])
             for p, a in cases],
    }, success="R(angle) = [[cos, −sin], [sin, cos]] turns the pair and keeps its length.")


def _rope(x, positions, theta):
    """Pairs (2i, 2i+1) of row t turned by positions[t] · theta[i]."""
    angle = np.asarray(positions, dtype=float)[:, None] * theta[None, :]
    out = np.empty_like(x)
    out[:, 0::2] = x[:, 0::2] * np.cos(angle) - x[:, 1::2] * np.sin(angle)
    out[:, 1::2] = x[:, 0::2] * np.sin(angle) + x[:, 1::2] * np.cos(angle)
    return out


@checker
def check_rope(fn) -> Check:
    """Check `fn(x, positions)`: RoPE with base 10000 for x [n, d], pairs (2i, 2i+1)."""
    rng = np.random.default_rng(70)
    x, positions = rng.normal(size=(4, 6)), np.array([0, 1, 5, 12])
    out, err = call(fn, x.copy(), positions.copy())
    if err is not None:
        return err
    d = x.shape[1]
    i = np.arange(d // 2)
    # the rotate-half layout of many libraries (07 Step 6): coordinate i turns with coordinate i + d/2
    angle = np.tile(10000.0 ** (-2 * i / d), 2)[None, :] * positions[:, None]
    rotate_half = x * np.cos(angle) + np.concatenate([-x[:, d // 2:], x[:, :d // 2]], axis=1) * np.sin(angle)
    return compare(out, core.apply_rope(x, positions), name="my_rope(x, positions)", mistakes={
        "you returned x unchanged: every row t must turn by positions[t] · θ_i (only position 0 "
        "stays put).": x,
        "the frequencies are off: θ_i = 10000^(−2i/d) with i = 0 … d/2 − 1 the pair's index; you "
        "used 10000^(−i/d).": _rope(x, positions, 10000.0 ** (-i / d)),
        "the frequencies are off: θ_i = 10000^(−2i/d) with i the pair's index (0, 1, 2, …); you used "
        "the coordinate index 2i in place of i, 10000^(−4i/d).": _rope(x, positions, 10000.0 ** (-4 * i / d)),
        "the exponent lost its minus sign: θ_i = 10000^(−2i/d) gets smaller with i.":
            _rope(x, positions, 10000.0 ** (2 * i / d)),
        "you turned clockwise: the first coordinate of a pair gets x·cos − y·sin, the second x·sin + y·cos.":
            _rope(x, -positions, 10000.0 ** (-2 * i / d)),
        "you paired coordinate i with i + d/2 (the rotate-half layout); this exercise pairs neighbours "
        "(0, 1), (2, 3), …: use x[:, 0::2] and x[:, 1::2].": rotate_half,
    }, success="each pair (2i, 2i+1) of row t turns by positions[t] · 10000^(−2i/d), as ah.apply_rope does.")


@checker
def check_same_score_position(answer, query_position, key_position, new_query_position) -> Check:
    """Check the key position that gives a query at new_query_position the same RoPE score."""
    gap = query_position - key_position
    expected = new_query_position - gap
    return compare_number(
        answer, expected, name="my_key_position",
        success=f"{expected}: the score depends only on the distance m − n = {gap}, so the key sits "
                f"{gap} places before the query again.",
        mistakes={
            new_query_position + gap: f"the query must stay {gap} places *after* the key, as it was "
                                      f"({query_position} − {key_position} = {gap}): subtract the distance.",
            gap: "that is the distance m − n; the exercise asks for the key's position.",
            key_position: "with the key where it was, the distance changes, and with it the score: keep "
                          "m − n the same.",
        },
        otherwise=lambda value: f"with the query at {new_query_position} and the key at {value:g}, the "
                                f"distance is {new_query_position - value:g}, not {gap}.")
