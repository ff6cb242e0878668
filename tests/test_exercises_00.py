"""The exercises of notebook 00: the solutions pass, typical mistakes get their own hint."""


import numpy as np
import pytest

import attention_helpers as ah
from tools.notebooks import ROOT, load_solutions, notebook_value

nb00 = load_solutions("00")
NOTEBOOK = ROOT / "notebooks" / "00_input_matrix.ipynb"


def _rows(sentence, table):
    return [np.asarray(table[t], dtype=float) for t in sentence]


# ---- exercise 1: build_X -------------------------------------------------

def test_build_X_solution_passes():
    check = ah.checks.check_build_X(nb00.build_X)
    assert check, check.message
    assert check.message.startswith("✅")


def test_build_X_accepts_a_list_of_rows():
    assert ah.checks.check_build_X(lambda s, t: [list(t[w]) for w in s])


@pytest.mark.parametrize("wrong, fragment", [
    (lambda s, t: None, "still empty"),
    (lambda s, t: np.stack(_rows(s, t)).T, "as columns"),
    (lambda s, t: np.stack(_rows(s, t), axis=1), "as columns"),
    (lambda s, t: np.concatenate(_rows(s, t)), "1-D vector"),
    (lambda s, t: np.array(list(t.values())), "whole embedding table"),
    (lambda s, t: np.stack(_rows(s[::-1], t)), "reverse order"),
    (lambda s, t: np.stack(_rows(sorted(s), t)), "sorted alphabetically"),
    (lambda s, t: np.stack(_rows(dict.fromkeys(s), t)), "appears only once:"),
    (lambda s, t: np.stack(_rows(sorted(set(s)), t)), "appears only once and the rows are sorted"),
    (lambda s, t: np.stack(_rows(s[:-1], t)), "last token is missing"),
    (lambda s, t: np.stack(_rows(s[1:], t)), "first token is missing"),
    (lambda s, t: t["nope"], "raised KeyError"),
])
def test_build_X_mistakes_get_their_hint(wrong, fragment):
    check = ah.checks.check_build_X(wrong)
    assert not check
    assert fragment in check.message, check.message


# ---- exercise 2: add_positions ------------------------------------------

def test_add_positions_solution_passes():
    check = ah.checks.check_add_positions(nb00.add_positions)
    assert check, check.message


def test_add_positions_in_place_is_fine():
    def in_place(X):
        X += ah.positional_encoding(*X.shape)
        return X
    assert ah.checks.check_add_positions(in_place)


def _pe(X):
    return ah.positional_encoding(*X.shape)


@pytest.mark.parametrize("wrong, fragment", [
    (lambda X: None, "still empty"),
    (lambda X: X, "returned X unchanged"),
    (lambda X: _pe(X), "returned P alone"),
    (lambda X: X + ah.positional_encoding(X.shape[1], X.shape[0]).T, "swapped the arguments"),
    (lambda X: X + ah.positional_encoding(X.shape[1], X.shape[0]), "does not have the shape of X"),
    (lambda X: X + ah.positional_encoding(3, 4), "does not have the shape of X"),
    (lambda X: np.concatenate([X, _pe(X)], axis=1), "concatenated P beside X"),
    (lambda X: np.hstack([X, _pe(X)]), "concatenated P beside X"),
    (lambda X: np.concatenate([X, _pe(X)], axis=0), "stacked P under X"),
    (lambda X: X - _pe(X), "subtracted P"),
    (lambda X: X * _pe(X), "multiplied X by P"),
])
def test_add_positions_mistakes_get_their_hint(wrong, fragment):
    check = ah.checks.check_add_positions(wrong)
    assert not check
    assert fragment in check.message, check.message


# ---- exercise 3: the shape of X -----------------------------------------

def test_shape_solution_passes():
    assert nb00.shape_X == (10, 768)
    check = ah.checks.check_x_shape(nb00.shape_X)
    assert check, check.message
    assert ah.checks.check_x_shape([10, 768])
    assert ah.checks.check_x_shape(np.zeros((10, 768)).shape)


@pytest.mark.parametrize("wrong, fragment", [
    (None, "still empty"),
    ((768, 10), "swapped"),
    ((9, 768), "count the tokens again"),
    ((11, 768), "count the tokens again"),
    ((10, 64), "12 attention heads"),
    ((10, 4), "toy d_model"),
    ((10, 512), "the rows are right; the number of columns is d_model"),
    ((10,), "two numbers"),
    ((10, 768, 1), "two numbers"),
    ("10 x 768", "tuple of two whole numbers"),
    ((3, 4), "count the tokens for the rows"),
])
def test_shape_mistakes_get_their_hint(wrong, fragment):
    check = ah.checks.check_x_shape(wrong)
    assert not check
    assert fragment in check.message, check.message


def test_notebook_shows_the_checked_sentence():
    tokens, d_model = ah.examples.gpt2_shape_exercise()
    assert notebook_value(NOTEBOOK, "sentence_it") == tokens
    assert notebook_value(NOTEBOOK, "d_model_gpt2") == d_model
