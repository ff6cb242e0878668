"""Checkers for notebook 07, positions and RoPE."""

from __future__ import annotations

import numpy as np

from .. import core
from ._base import Check, call, checker, compare, compare_number, empty, wrong

_rotate = core.rotate_pairs  # a 2-vector and an angle: one pair turned


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
        "clockwise": (
            "you turned clockwise: the rotation matrix is [[cos, -sin], [sin, cos]], so the first "
            "coordinate gets x·cos − y·sin and the second x·sin + y·cos.",
            [_rotate(p, -a) for p, a in cases]),
        "degrees_converted": (
            "the angle is already in radians (np.cos and np.sin take radians): do not convert it.",
            [_rotate(p, np.radians(a)) for p, a in cases]),
        "cos_sin_swapped": (
            "you swapped cos and sin: at angle 0 the pair must come back unchanged.",
            [_rotate(p, np.pi / 2 - a) for p, a in cases]),  # cos(π/2 − a) = sin a, sin(π/2 − a) = cos a
    }, success="R(angle) = [[cos, −sin], [sin, cos]] turns the pair and keeps its length.")


def _rope(x, positions, theta):
    """Pairs (2m, 2m+1) of row i turned by positions[i] · theta[m]."""
    return core.rotate_pairs(x, np.asarray(positions, dtype=float)[:, None] * theta[None, :])


@checker
def check_rope(fn) -> Check:
    """Check `fn(x, positions)`: RoPE with base 10000 for x [n, d], pairs (2m, 2m+1)."""
    rng = np.random.default_rng(70)
    x, positions = rng.normal(size=(4, 6)), np.array([0, 1, 5, 12])
    out, err = call(fn, x.copy(), positions.copy())
    if err is not None:
        return err
    d = x.shape[1]
    i = np.arange(d // 2)
    # the rotate-half layout of many libraries (07 Step 6): coordinate i turns with coordinate
    # i + d/2. Put each such pair side by side, turn the pairs, and put the halves back.
    halves = np.stack([x[:, :d // 2], x[:, d // 2:]], axis=-1).reshape(x.shape)
    turned = _rope(halves, positions, 10000.0 ** (-2 * i / d))
    rotate_half = np.concatenate([turned[:, 0::2], turned[:, 1::2]], axis=1)
    return compare(out, core.apply_rope(x, positions), name="my_rope(x, positions)", mistakes={
        "unchanged": (
            "you returned x unchanged: every row i must turn by positions[i] · θ_m (only position 0 "
            "stays put).",
            x),
        "theta_without_2": (
            "the frequencies are off: θ_m = 10000^(−2m/d) with m = 0 … d/2 − 1 the pair's index; you "
            "used 10000^(−m/d).",
            _rope(x, positions, 10000.0 ** (-i / d))),
        "theta_4i": (
            "the frequencies are off: θ_m = 10000^(−2m/d) with m the pair's index (0, 1, 2, …); you used "
            "the coordinate index 2m in place of m, 10000^(−4m/d).",
            _rope(x, positions, 10000.0 ** (-4 * i / d))),
        "theta_positive_exponent": (
            "the exponent lost its minus sign: θ_m = 10000^(−2m/d) gets smaller with m.",
            _rope(x, positions, 10000.0 ** (2 * i / d))),
        "clockwise": (
            "you turned clockwise: the first coordinate of a pair gets x·cos − y·sin, the second "
            "x·sin + y·cos.",
            _rope(x, -positions, 10000.0 ** (-2 * i / d))),
        "rotate_half": (
            "you paired coordinate c with c + d/2 (the rotate-half layout); this exercise pairs neighbours "
            "(0, 1), (2, 3), …: use x[:, 0::2] and x[:, 1::2].",
            rotate_half),
    }, success="each pair (2m, 2m+1) of row i turns by positions[i] · 10000^(−2m/d), as ah.apply_rope does.")


@checker
def check_same_score_position(answer, query_position, key_position, new_query_position) -> Check:
    """Check the key position that gives a query at new_query_position the same RoPE score."""
    gap = query_position - key_position
    expected = new_query_position - gap
    return compare_number(
        answer, expected, name="my_key_position",
        success=f"{expected}: the score depends only on the distance i − j = {gap}, so the key sits "
                f"{gap} places before the query again.",
        mistakes={
            "wrong_direction": (
                f"the query must stay {gap} places *after* the key, as it was "
                f"({query_position} − {key_position} = {gap}): subtract the distance.",
                new_query_position + gap),
            "distance": (
                "that is the distance i − j; the exercise asks for the key's position.",
                gap),
            "key_unmoved": (
                "with the key where it was, the distance changes, and with it the score: keep "
                "i − j the same.",
                key_position),
        },
        otherwise=lambda value: f"with the query at {new_query_position} and the key at {value:g}, the "
                                f"distance is {new_query_position - value:g}, not {gap}.")
