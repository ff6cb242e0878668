"""The exercises of notebook 04 (softmax): the reference solutions pass their
checkers, and each typical wrong answer is named by its own mistake key."""

from pathlib import Path

import numpy as np
import pytest

import attention_helpers as ah
import solutions.nb04 as sol
from attention_helpers import checks, core
from tools.notebooks import notebook_value

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "04_softmax.ipynb"


# ---- exercise 1: a stable softmax ----------------------------------------

def test_solution_softmax_passes():
    check = checks.check_stable_softmax(sol.my_softmax)
    assert check, check.text


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


@pytest.mark.parametrize("wrong, kind, mistake", [
    (lambda x: None, "empty", None),
    (_exp_only, "mistake", "rows_not_normalised"),
    (lambda x: np.exp(x), "mistake", "rows_not_normalised"),
    (lambda x: np.exp(x) / np.exp(x).sum(axis=0), "mistake", "normalised_over_columns"),
    (lambda x: np.exp(x) / np.exp(x).sum(), "mistake", "normalised_over_matrix"),
    (_columns, "mistake", "normalised_over_columns"),
    (_whole_sum, "mistake", "normalised_over_matrix"),
    (_no_shift, "mistake", "overflow"),
    (_column_max, "mistake", "column_max_shift"),
    (_no_keepdims, "raised", "no_keepdims"),
    (_global_max, "mistake", "global_max_shift"),
])
def test_softmax_mistakes_are_named(wrong, kind, mistake):
    check = checks.check_stable_softmax(wrong)
    assert (check.kind, check.mistake) == (kind, mistake), check.text


def test_softmax_error_in_learner_code_is_reported():
    def broken(x):
        raise KeyError("oops")
    check = checks.check_stable_softmax(broken)
    assert check.kind == "raised" and isinstance(check.error, KeyError)
    assert "KeyError" in check.hint  # the student reads which error their code raised


# ---- exercise 2: the temperature that makes the winner twice as likely ----

def test_solution_temperature_passes():
    check = checks.check_temperature_for_ratio(sol.T_twice)
    assert check, check.text
    p = core.softmax(np.array([3.2, 4.0, 1.0, 6.2, 8.0]) / sol.T_twice)
    assert np.isclose(p[4] / p[3], 2.0)


@pytest.mark.parametrize("wrong, kind, mistake", [
    (None, "empty", None),
    (1.8 * np.log(2.0), "mistake", "multiplied_by_T"),
    (np.log(2.0) / 1.8, "mistake", "reciprocal"),
    (1.8 / 2.0, "mistake", "ratio_not_log"),
    (1.0, "mistake", "plain_softmax"),
    (3.0, "wrong_value", None),
])
def test_temperature_mistakes_are_named(wrong, kind, mistake):
    check = checks.check_temperature_for_ratio(wrong)
    assert (check.kind, check.mistake) == (kind, mistake), check.text


# ---- exercise 3: one probability by hand ----------------------------------

def test_solution_probability_passes():
    check = checks.check_probability_by_hand(sol.p_second)
    assert check, check.text


@pytest.mark.parametrize("wrong, kind, mistake", [
    (None, "empty", None),
    (3.0 / 4.5, "mistake", "no_exp"),
    (np.exp(3.0), "mistake", "exp_not_divided"),
    (np.exp(3.0) / 4.5, "mistake", "numerator_only"),
    (100 * core.softmax(np.array([1.0, 3.0, 0.5]))[1], "mistake", "percentage"),
    (core.softmax(np.array([1.0, 3.0, 0.5]))[0], "mistake", "first_key"),
    (core.softmax(np.array([1.0, 3.0, 0.5]))[2], "mistake", "third_key"),
])
def test_probability_mistakes_are_named(wrong, kind, mistake):
    check = checks.check_probability_by_hand(wrong)
    assert (check.kind, check.mistake) == (kind, mistake), check.text


def test_notebook_shows_the_checked_row():
    assert np.array_equal(notebook_value(NOTEBOOK, "row"), ah.examples.softmax_exercise_row())
