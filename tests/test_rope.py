"""Tests for ah.apply_rope (notebook 07): against a loop over the pairs written
from the definition, and the properties the notebook teaches."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import attention_helpers as ah


def rope_loop(x, positions, base=10000.0):
    """RoPE from its definition: each pair (2i, 2i+1) of row t times a 2×2 rotation matrix."""
    n, d = x.shape
    out = np.zeros((n, d))
    for t in range(n):
        for i in range(d // 2):
            angle = positions[t] * base ** (-2 * i / d)
            R = np.array([[np.cos(angle), -np.sin(angle)],
                          [np.sin(angle), np.cos(angle)]])
            out[t, 2 * i:2 * i + 2] = R @ x[t, 2 * i:2 * i + 2]
    return out


def rotate_half(x, positions, base=10000.0):
    """The layout of many libraries: coordinate i pairs with i + d/2, not with its neighbour."""
    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)
    angle = np.concatenate([theta, theta])[None, :] * np.asarray(positions, dtype=float)[:, None]
    halves = np.concatenate([-x[..., d // 2:], x[..., :d // 2]], axis=-1)
    return x * np.cos(angle) + halves * np.sin(angle)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 6), half=st.integers(1, 4),
       base=st.sampled_from([10.0, 100.0, 10000.0]))
def test_apply_rope_equals_the_pairwise_rotation_loop(seed, n, half, base):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 2 * half))
    positions = rng.integers(0, 50, size=n)
    assert np.allclose(ah.apply_rope(x, positions, base=base), rope_loop(x, positions, base))


def test_a_hand_computed_rotation():
    # d = 2: one pair, frequency base^0 = 1, so position t turns by t radians.
    x = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 2.0]])
    out = ah.apply_rope(x, [0, np.pi / 2, np.pi])
    assert np.allclose(out, [[1.0, 0.0], [0.0, 1.0], [0.0, -2.0]])


def test_position_zero_is_the_identity_and_lengths_are_kept():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 8))
    assert np.allclose(ah.apply_rope(x, np.zeros(5)), x)
    out = ah.apply_rope(x, np.arange(5) * 7)
    assert np.allclose(np.linalg.norm(out, axis=-1), np.linalg.norm(x, axis=-1))
    assert not np.allclose(out[1:], x[1:])  # a real rotation, not a copy


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), m=st.integers(0, 200), p=st.integers(0, 200),
       shift=st.integers(-100, 300))
def test_the_score_depends_only_on_the_distance(seed, m, p, shift):
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=(1, 6)), rng.normal(size=(1, 6))
    score = (ah.apply_rope(q, [m]) @ ah.apply_rope(k, [p]).T).item()
    moved = (ah.apply_rope(q, [m + shift]) @ ah.apply_rope(k, [p + shift]).T).item()
    assert np.isclose(score, moved, atol=1e-9)


def test_the_score_does_change_with_the_distance():
    rng = np.random.default_rng(1)
    q, k = rng.normal(size=(1, 6)), rng.normal(size=(1, 6))
    scores = [(ah.apply_rope(q, [gap]) @ k.T).item() for gap in range(4)]
    assert len(set(np.round(scores, 6))) == 4


def test_rotate_half_is_the_same_rotation_on_permuted_coordinates():
    rng = np.random.default_rng(2)
    x, positions = rng.normal(size=(4, 8)), [0, 3, 5, 11]
    # interleaved (0,1),(2,3),… -> halves: pair i is (i, i + d/2)
    perm = np.concatenate([np.arange(0, 8, 2), np.arange(1, 8, 2)])
    assert np.allclose(rotate_half(x[:, perm], positions), ah.apply_rope(x, positions)[:, perm])


def test_leading_batch_and_head_dimensions():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, 3, 4, 6))  # batch, heads, n, d
    out = ah.apply_rope(x, np.arange(4))
    for b in range(2):
        for h in range(3):
            assert np.allclose(out[b, h], rope_loop(x[b, h], np.arange(4)))


@pytest.mark.parametrize("x, positions, base, error, words", [
    (np.ones((3, 5)), [0, 1, 2], 10000.0, ValueError, ["d=5", "even", "(3, 5)"]),
    (np.ones((3, 4)), [0, 1], 10000.0, ValueError, ["positions", "(2,)", "(3,)"]),
    (np.ones((3, 4)), [[0, 1, 2]], 10000.0, ValueError, ["positions", "(1, 3)"]),
    (np.ones(4), [0], 10000.0, ValueError, ["x", "at least 2"]),
    (np.ones((3, 4)), [0, 1, np.nan], 10000.0, ValueError, ["positions", "finite"]),
    (np.ones((3, 4)), [0, 1, 2], 1.0, ValueError, ["base", "greater than 1"]),
    (np.ones((3, 4)), [0, 1, 2], "10000", ValueError, ["base"]),
    ("abc", [0], 10000.0, TypeError, ["x"]),
])
def test_bad_input_gets_a_clear_message(x, positions, base, error, words):
    with pytest.raises(error) as info:
        ah.apply_rope(x, positions, base=base)
    for word in words:
        assert word in str(info.value)
