"""Notebook 07 (positions and RoPE): the reference solutions pass their checkers,
and each typical wrong answer is named by its own mistake key."""

import numpy as np
import pytest

import solutions.nb07 as sol
from attention_helpers.checks import check_rope, check_rotate_pair, check_same_score_position
from tools.notebooks import ROOT, notebook_values

# ---- exercise 1: rotate one pair -------------------------------------------------------

def test_rotate_pair_solution_passes():
    check = check_rotate_pair(sol.my_rotate_pair)
    assert check, check.text


def _turn(pair, angle):
    return np.array([np.cos(angle) * pair[0] - np.sin(angle) * pair[1],
                     np.sin(angle) * pair[0] + np.cos(angle) * pair[1]])


@pytest.mark.parametrize("fn, kind, mistake", [
    (lambda p, a: _turn(p, -a), "mistake", "clockwise"),
    (lambda p, a: _turn(p, np.radians(a)), "mistake", "degrees_converted"),
    (lambda p, a: np.array([np.sin(a) * p[0] - np.cos(a) * p[1], np.cos(a) * p[0] + np.sin(a) * p[1]]),
     "mistake", "cos_sin_swapped"),
    (lambda p, a: p, "wrong_value", None),
    (lambda p, a: np.append(_turn(p, a), 0.0), "wrong_shape", None),
    (lambda p, a: None, "empty", None),
    (lambda p, a: p @ np.ones((3, 3)), "raised", None),
])
def test_rotate_pair_mistakes_are_named(fn, kind, mistake):
    check = check_rotate_pair(fn)
    assert (check.kind, check.mistake) == (kind, mistake), check.text


# ---- exercise 2: RoPE for a whole matrix ---------------------------------------------------

def test_rope_solution_passes():
    check = check_rope(sol.my_rope)
    assert check, check.text


def _rope(x, positions, theta):
    angle = np.asarray(positions, dtype=float)[:, None] * theta[None, :]
    out = np.empty_like(x)
    out[:, 0::2] = x[:, 0::2] * np.cos(angle) - x[:, 1::2] * np.sin(angle)
    out[:, 1::2] = x[:, 0::2] * np.sin(angle) + x[:, 1::2] * np.cos(angle)
    return out


def _rotate_half(x, positions):
    """What a learner copies from a library: coordinate i pairs with i + d/2."""
    d = x.shape[1]
    theta = 10000.0 ** (-np.arange(0, d, 2) / d)
    angle = np.concatenate([theta, theta])[None, :] * np.asarray(positions, dtype=float)[:, None]
    return x * np.cos(angle) + np.concatenate([-x[:, d // 2:], x[:, :d // 2]], axis=1) * np.sin(angle)


def _pairs(d):
    return np.arange(d // 2)


@pytest.mark.parametrize("fn, kind, mistake", [
    (lambda x, p: x, "mistake", "unchanged"),
    (lambda x, p: _rope(x, p, 10000.0 ** (-_pairs(x.shape[1]) / x.shape[1])), "mistake", "theta_without_2"),
    (lambda x, p: _rope(x, p, 10000.0 ** (-4 * _pairs(x.shape[1]) / x.shape[1])), "mistake", "theta_4i"),
    (lambda x, p: _rope(x, p, 10000.0 ** (2 * _pairs(x.shape[1]) / x.shape[1])), "mistake",
     "theta_positive_exponent"),
    (lambda x, p: sol.my_rope(x, -np.asarray(p)), "mistake", "clockwise"),
    (_rotate_half, "mistake", "rotate_half"),
    (lambda x, p: sol.my_rope(x, p).T, "transposed", None),
    (lambda x, p: None, "empty", None),
])
def test_rope_mistakes_are_named(fn, kind, mistake):
    check = check_rope(fn)
    assert (check.kind, check.mistake) == (kind, mistake), check.text


# ---- exercise 3: which key position gives the same score -----------------------------------

def test_same_score_solution_passes():
    assert sol.my_key_position == 2
    check = check_same_score_position(sol.my_key_position, 1000, 997, 5)
    assert check, check.text


@pytest.mark.parametrize("answer, kind, mistake", [
    (8, "mistake", "wrong_direction"),
    (3, "mistake", "distance"),
    (997, "mistake", "key_unmoved"),
    (4, "wrong_value", None),
    (None, "empty", None),
    ("two", "not_numbers", None),
])
def test_same_score_mistakes_are_named(answer, kind, mistake):
    check = check_same_score_position(answer, 1000, 997, 5)
    assert (check.kind, check.mistake) == (kind, mistake), check.text


# ---- the notebook shows the data the solutions use --------------------------------------

def test_notebook_exercise_data_matches_the_solution():
    shown = notebook_values(ROOT / "notebooks" / "07_positions_and_rope.ipynb",
                            "query_position", "key_position", "new_query_position")
    assert shown == (sol.query_position, sol.key_position, sol.new_query_position)
