"""Notebook 01 (Q, K, V projections): the reference solutions pass their checkers,
and each typical wrong answer gets its own hint."""

from pathlib import Path

import numpy as np
import pytest

import attention_helpers as ah
from attention_helpers.checks import check_key_entry, check_qkv, check_qkv_shapes
from tools.notebooks import code_sources, load_solutions
from tools.notebooks import hint as _message

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "01_qkv_projections.ipynb"


sol = load_solutions("01")
_, X = ah.examples.the_cat_sat()


# ---- exercise 1: my_qkv ----------------------------------------------------

def test_qkv_solution_passes():
    check = check_qkv(sol.my_qkv)
    assert check, check.message
    assert check.message.startswith("✅")


@pytest.mark.parametrize("fn, fragment", [
    (lambda X, W_Q, W_K, W_V: (X @ W_Q.T, X @ W_K.T, X @ W_V.T), "Q = X @ W_Q.T"),
    (lambda X, W_Q, W_K, W_V: (W_Q @ X, W_K @ X, W_V @ X), "Q = W_Q @ X: the order of the factors"),
    (lambda X, W_Q, W_K, W_V: (X * W_Q, X * W_K, X * W_V), "multiplied entry by entry"),
    (lambda X, W_Q, W_K, W_V: (X @ W_K, X @ W_Q, X @ W_V), "Q and K are swapped"),
    (lambda X, W_Q, W_K, W_V: (X @ W_Q, X @ W_K, X @ W_Q), "V was computed with W_Q"),
    (lambda X, W_Q, W_K, W_V: (X @ W_Q, X @ W_K.T, X @ W_V), "K = X @ W_K.T"),
    (lambda X, W_Q, W_K, W_V: (X @ W_Q, X @ W_K, W_V @ X), "V = W_V @ X"),
    (lambda X, W_Q, W_K, W_V: None, "returned None"),
    (lambda X, W_Q, W_K, W_V: (None, None, None), "Q is still empty"),
    (lambda X, W_Q, W_K, W_V: (X @ W_Q, X @ W_K), "of length 2"),
    (lambda X, W_Q, W_K, W_V: (X @ W_Q)[:, :2], "as a tuple"),
    (lambda X, W_Q, W_K, W_V: X @ W_Q[:2], "raised ValueError"),
])
def test_qkv_mistakes_get_their_hint(fn, fragment):
    assert fragment in _message(check_qkv(fn))


def test_qkv_checks_the_rectangular_case_too():
    # right while d_model == 3 (the square case), wrong once X has 4 columns
    def square_only(X, W_Q, W_K, W_V):
        return X @ W_Q, X @ W_K, X[:, :3] @ W_V[:3, :]

    assert "V has the right shape (3, 3)" in _message(check_qkv(square_only))


# ---- exercise 2: shapes ------------------------------------------------------

def test_shapes_solution_passes():
    check = check_qkv_shapes(sol.shapes, **sol.SHAPE_SIZES)
    assert check, check.message


@pytest.mark.parametrize("change, fragment", [
    ({"W_Q": (2, 6)}, "You have them the other way round"),
    ({"W_V": (6, 2)}, "only W_V uses d_v"),
    ({"W_K": (6, 3)}, "only W_V uses d_v"),
    ({"Q": (5, 6)}, "its width changes from d_model to d_k"),
    ({"K": (2, 5)}, "rows are tokens"),
    ({"Q": (6, 2)}, "n rows, not d_model"),
    ({"V": (5, 2)}, "only V is d_v wide"),
    ({"V": (5, 6)}, "from d_model to d_v"),
    ({"Q": None}, "the shape of Q is still empty"),
    ({"Q": (5, 2, 1)}, "two numbers"),
    ({"W_K": (4, 4)}, "the shape of W_K is not (4, 4)"),
])
def test_shape_mistakes_get_their_hint(change, fragment):
    shapes = {**sol.shapes, **change}
    assert fragment in _message(check_qkv_shapes(shapes, **sol.SHAPE_SIZES))


def test_shapes_empty_or_incomplete():
    assert "still empty" in _message(check_qkv_shapes(None, **sol.SHAPE_SIZES))
    partial = {k: v for k, v in sol.shapes.items() if k != "V"}
    assert "no entry 'V'" in _message(check_qkv_shapes(partial, **sol.SHAPE_SIZES))


def test_generic_shape_hint_does_not_give_the_answer_away():
    message = _message(check_qkv_shapes({**sol.shapes, "W_K": (4, 4)}, **sol.SHAPE_SIZES))
    assert "(6, 2)" not in message and "expected" not in message


# ---- exercise 3: one entry of K by hand ---------------------------------------

def test_key_entry_solution_passes():
    check = check_key_entry(sol.k_sat_1, X, sol.W_K_EX, row=2, col=1)
    assert check, check.message


@pytest.mark.parametrize("answer, fragment", [
    ((X @ sol.W_K_EX)[1, 2], "row and column are swapped"),
    ((X @ sol.W_K_EX)[1, 0], "indices count from 0"),
    (X[2] * sol.W_K_EX[:, 1], "add them up"),
    (None, "still empty"),
])
def test_key_entry_mistakes_get_their_hint(answer, fragment):
    assert fragment in _message(check_key_entry(answer, X, sol.W_K_EX, row=2, col=1))


def test_key_entry_generic_hint_does_not_give_the_answer_away():
    message = _message(check_key_entry(0.5, X, sol.W_K_EX, row=2, col=1))
    assert "not 0.5" in message
    assert f"{sol.k_sat_1:.4g}" not in message and "expected" not in message


# ---- the notebook shows the data the solution uses ------------------------------

def test_notebook_exercises_match_the_solutions():
    sources = code_sources(NOTEBOOK)
    (stub,) = [s for s in sources if "W_K_ex = np.array(" in s]
    namespace = {"np": np, "X": X}
    exec(stub, namespace)  # the stub defines W_K_ex, prints it and sets k_sat_1 = None
    assert np.array_equal(namespace["W_K_ex"], sol.W_K_EX)
    assert namespace["k_sat_1"] is None
    assert any("n=5, d_model=6, d_k=2, d_v=3" in s and "check_qkv_shapes" in s for s in sources)
