"""The exercises of notebook 00: the solutions pass, typical mistakes are named by their own key."""


import numpy as np
import pytest

import attention_helpers as ah
import solutions.nb00 as nb00
from tools.notebooks import ROOT, notebook_value

NOTEBOOK = ROOT / "notebooks" / "00_input_matrix.ipynb"


def _rows(sentence, table):
    return [np.asarray(table[t], dtype=float) for t in sentence]


# ---- exercise 1: build_X -------------------------------------------------

def test_build_X_solution_passes():
    check = ah.checks.check_build_X(nb00.build_X)
    assert check, check.text


def test_build_X_accepts_a_list_of_rows():
    assert ah.checks.check_build_X(lambda s, t: [list(t[w]) for w in s])


@pytest.mark.parametrize("wrong, kind, mistake", [
    (lambda s, t: None, "empty", None),
    (lambda s, t: np.stack(_rows(s, t)).T, "mistake", "columns_not_rows"),
    (lambda s, t: np.stack(_rows(s, t), axis=1), "mistake", "columns_not_rows"),
    (lambda s, t: np.concatenate(_rows(s, t)), "mistake", "one_long_vector"),
    (lambda s, t: np.array(list(t.values())), "mistake", "whole_table"),
    (lambda s, t: np.stack(_rows(s[::-1], t)), "mistake", "reversed_rows"),
    (lambda s, t: np.stack(_rows(sorted(s), t)), "mistake", "sorted_rows"),
    (lambda s, t: np.stack(_rows(dict.fromkeys(s), t)), "mistake", "repeat_dropped"),
    (lambda s, t: np.stack(_rows(sorted(set(s)), t)), "mistake", "repeat_dropped_and_sorted"),
    (lambda s, t: np.stack(_rows(s[:-1], t)), "mistake", "last_token_missing"),
    (lambda s, t: np.stack(_rows(s[1:], t)), "mistake", "first_token_missing"),
    (lambda s, t: t["nope"], "raised", None),
])
def test_build_X_mistakes_are_named(wrong, kind, mistake):
    check = ah.checks.check_build_X(wrong)
    assert (check.kind, check.mistake) == (kind, mistake), check.text


# ---- exercise 2: add_positions ------------------------------------------

def test_add_positions_solution_passes():
    check = ah.checks.check_add_positions(nb00.add_positions)
    assert check, check.text


def test_add_positions_in_place_is_fine():
    def in_place(X):
        X += ah.positional_encoding(*X.shape)
        return X
    assert ah.checks.check_add_positions(in_place)


def _pe(X):
    return ah.positional_encoding(*X.shape)


@pytest.mark.parametrize("wrong, kind, mistake", [
    (lambda X: None, "empty", None),
    (lambda X: X, "mistake", "X_unchanged"),
    (lambda X: _pe(X), "mistake", "P_alone"),
    (lambda X: X + ah.positional_encoding(X.shape[1], X.shape[0]).T, "mistake", "P_transposed"),
    (lambda X: X + ah.positional_encoding(X.shape[1], X.shape[0]), "raised", "P_wrong_shape"),
    (lambda X: X + ah.positional_encoding(3, 4), "raised", "P_wrong_shape"),
    (lambda X: np.concatenate([X, _pe(X)], axis=1), "mistake", "concatenated_beside"),
    (lambda X: np.hstack([X, _pe(X)]), "mistake", "concatenated_beside"),
    (lambda X: np.concatenate([X, _pe(X)], axis=0), "mistake", "stacked_under"),
    (lambda X: X - _pe(X), "mistake", "subtracted"),
    (lambda X: X * _pe(X), "mistake", "multiplied"),
])
def test_add_positions_mistakes_are_named(wrong, kind, mistake):
    check = ah.checks.check_add_positions(wrong)
    assert (check.kind, check.mistake) == (kind, mistake), check.text


# ---- exercise 3: the shape of X -----------------------------------------

def test_shape_solution_passes():
    assert nb00.shape_X == (10, 768)
    check = ah.checks.check_x_shape(nb00.shape_X)
    assert check, check.text
    assert ah.checks.check_x_shape([10, 768])
    assert ah.checks.check_x_shape(np.zeros((10, 768)).shape)


@pytest.mark.parametrize("wrong, kind, mistake", [
    (None, "empty", None),
    ((768, 10), "mistake", "swapped"),
    ((9, 768), "mistake", "token_count"),
    ((11, 768), "mistake", "token_count"),
    ((10, 64), "mistake", "head_size"),
    ((10, 4), "mistake", "toy_d_model"),
    ((10, 512), "mistake", "columns"),
    ((10,), "wrong_shape", None),
    ((10, 768, 1), "wrong_shape", None),
    ("10 x 768", "wrong_type", None),
    ((3, 4), "wrong_value", None),
])
def test_shape_mistakes_are_named(wrong, kind, mistake):
    check = ah.checks.check_x_shape(wrong)
    assert (check.kind, check.mistake) == (kind, mistake), check.text


def test_notebook_shows_the_checked_sentence():
    tokens, d_model = ah.examples.gpt2_shape_exercise()
    assert notebook_value(NOTEBOOK, "sentence_it") == tokens
    assert notebook_value(NOTEBOOK, "d_model_gpt2") == d_model
