"""The exercises of notebook 04 (softmax): the reference solutions pass their
checkers, and each typical wrong answer gets its own hint."""

from pathlib import Path

import numpy as np
import pytest

import attention_helpers as ah
from attention_helpers import checks, core
from tools.notebooks import load_solutions, notebook_value

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "04_softmax.ipynb"


sol = load_solutions("04")


# ---- exercise 1: a stable softmax ----------------------------------------

def test_solution_softmax_passes():
    check = checks.check_stable_softmax(sol.my_softmax)
    assert check, check.message
    assert check.message.startswith("✅")


def test_solution_softmax_matches_helper_on_extremes():
    x = np.array([[1e308, 0.0, -1e300], [800.0, 799.0, 790.0], [0.0, 1.0, 2.0]])
    assert np.allclose(sol.my_softmax(x), core.softmax(x))


def _no_shift(x):
    e = np.exp(x)
    return e / e.sum(axis=-1, keepdims=True)


def _exp_only(x):
    return np.exp(x - x.max(axis=-1, keepdims=True))


def _columns(x):
    e = np.exp(x - x.max(axis=0, keepdims=True))
    return e / e.sum(axis=0, keepdims=True)


def _whole_sum(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum()


def _column_max(x):
    e = np.exp(x - x.max(axis=0, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _no_keepdims(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1)


def _global_max(x):
    e = np.exp(x - x.max())
    return e / e.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("wrong, fragment", [
    (lambda x: None, "still empty"),
    (_exp_only, "rows do not sum to 1"),
    (lambda x: np.exp(x), "rows do not sum to 1"),
    (lambda x: np.exp(x) / np.exp(x).sum(axis=0), "normalised over columns (axis=0)"),
    (lambda x: np.exp(x) / np.exp(x).sum(), "sum of the whole matrix"),
    (_columns, "normalised over columns (axis=0)"),
    (_whole_sum, "sum of the whole matrix"),
    (_no_shift, "exp(800) overflows to inf"),
    (_column_max, "subtracted each column's maximum"),
    (_no_keepdims, "pass keepdims=True"),
    (_global_max, "maximum of the whole array (S.max())"),
])
def test_softmax_mistakes_get_their_hint(wrong, fragment):
    check = checks.check_stable_softmax(wrong)
    assert not check
    assert fragment in check.message, check.message


def test_softmax_error_in_learner_code_is_reported():
    def broken(x):
        raise KeyError("oops")
    check = checks.check_stable_softmax(broken)
    assert not check
    assert "raised KeyError" in check.message


# ---- exercise 2: the temperature that makes the winner twice as likely ----

def test_solution_temperature_passes():
    check = checks.check_temperature_for_ratio(sol.T_twice)
    assert check, check.message
    p = core.softmax(np.array([3.2, 4.0, 1.0, 6.2, 8.0]) / sol.T_twice)
    assert np.isclose(p[4] / p[3], 2.0)


@pytest.mark.parametrize("wrong, fragment", [
    (None, "still empty"),
    (1.8 * np.log(2.0), "not e^(gap · T)"),
    (np.log(2.0) / 1.8, "that is 1 / T"),
    (1.8 / 2.0, "take the logarithm"),
    (1.0, "T = 1 is plain softmax"),
    (3.0, "differs at index"),
])
def test_temperature_mistakes_get_their_hint(wrong, fragment):
    check = checks.check_temperature_for_ratio(wrong)
    assert not check
    assert fragment in check.message, check.message


# ---- exercise 3: one probability by hand ----------------------------------

def test_solution_probability_passes():
    check = checks.check_probability_by_hand(sol.p_second)
    assert check, check.message


@pytest.mark.parametrize("wrong, fragment", [
    (None, "still empty"),
    (3.0 / 4.5, "divided the raw scores"),
    (np.exp(3.0), "e^3 on its own"),
    (np.exp(3.0) / 4.5, "only the numerator"),
    (100 * core.softmax(np.array([1.0, 3.0, 0.5]))[1], "percentage"),
    (core.softmax(np.array([1.0, 3.0, 0.5]))[0], "first key"),
    (core.softmax(np.array([1.0, 3.0, 0.5]))[2], "third key"),
])
def test_probability_mistakes_get_their_hint(wrong, fragment):
    check = checks.check_probability_by_hand(wrong)
    assert not check
    assert fragment in check.message, check.message


def test_notebook_shows_the_checked_row():
    assert np.array_equal(notebook_value(NOTEBOOK, "row"), ah.examples.softmax_exercise_row())
