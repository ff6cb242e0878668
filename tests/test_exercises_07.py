"""Notebook 07 (positions and RoPE): the reference solutions pass their checkers,
and each typical wrong answer gets its own hint."""

import numpy as np
import pytest

from attention_helpers.checks import check_rope, check_rotate_pair, check_same_score_position
from tools.notebooks import ROOT, load_solutions, notebook_values
from tools.notebooks import hint as _message

sol = load_solutions("07")


# ---- exercise 1: rotate one pair -------------------------------------------------------

def test_rotate_pair_solution_passes():
    check = check_rotate_pair(sol.my_rotate_pair)
    assert check, check.message


def _turn(pair, angle):
    return np.array([np.cos(angle) * pair[0] - np.sin(angle) * pair[1],
                     np.sin(angle) * pair[0] + np.cos(angle) * pair[1]])


@pytest.mark.parametrize("fn, fragment", [
    (lambda p, a: _turn(p, -a), "you turned clockwise"),
    (lambda p, a: _turn(p, np.radians(a)), "already in radians"),
    (lambda p, a: np.array([np.sin(a) * p[0] - np.cos(a) * p[1], np.cos(a) * p[0] + np.sin(a) * p[1]]),
     "you swapped cos and sin"),
    (lambda p, a: p, "differs at index"),
    (lambda p, a: np.append(_turn(p, a), 0.0), "2 numbers"),
    (lambda p, a: None, "still empty"),
    (lambda p, a: p @ np.ones((3, 3)), "your function raised ValueError"),
])
def test_rotate_pair_mistakes_get_their_hint(fn, fragment):
    assert fragment in _message(check_rotate_pair(fn))


# ---- exercise 2: RoPE for a whole matrix ---------------------------------------------------

def test_rope_solution_passes():
    check = check_rope(sol.my_rope)
    assert check, check.message


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


@pytest.mark.parametrize("fn, fragment", [
    (lambda x, p: x, "you returned x unchanged"),
    (lambda x, p: _rope(x, p, 10000.0 ** (-_pairs(x.shape[1]) / x.shape[1])), "you used 10000^(−i/d)"),
    (lambda x, p: _rope(x, p, 10000.0 ** (-4 * _pairs(x.shape[1]) / x.shape[1])), "10000^(−4i/d)"),
    (lambda x, p: _rope(x, p, 10000.0 ** (2 * _pairs(x.shape[1]) / x.shape[1])), "lost its minus sign"),
    (lambda x, p: sol.my_rope(x, -np.asarray(p)), "you turned clockwise"),
    (_rotate_half, "rotate-half layout"),
    (lambda x, p: sol.my_rope(x, p).T, "transpose"),
    (lambda x, p: None, "still empty"),
])
def test_rope_mistakes_get_their_hint(fn, fragment):
    assert fragment in _message(check_rope(fn))


# ---- exercise 3: which key position gives the same score -----------------------------------

def test_same_score_solution_passes():
    assert sol.my_key_position == 2
    check = check_same_score_position(sol.my_key_position, 1000, 997, 5)
    assert check, check.message


@pytest.mark.parametrize("answer, fragment", [
    (8, "subtract the distance"),
    (3, "that is the distance m − n"),
    (997, "with the key where it was"),
    (4, "the distance is 1, not 3"),
    (None, "still empty"),
    ("two", "one whole number"),
])
def test_same_score_mistakes_get_their_hint(answer, fragment):
    assert fragment in _message(check_same_score_position(answer, 1000, 997, 5))


# ---- the notebook shows the data the solutions use --------------------------------------

def test_notebook_exercise_data_matches_the_solution():
    shown = notebook_values(ROOT / "notebooks" / "07_positions_and_rope.ipynb",
                            "query_position", "key_position", "new_query_position")
    assert shown == (sol.query_position, sol.key_position, sol.new_query_position)
