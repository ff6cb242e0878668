"""Notebook 01 (Q, K, V projections): the reference solutions pass their checkers,
and each typical wrong answer is named by its own mistake key."""

from pathlib import Path

import numpy as np
import pytest

import attention_helpers as ah
import solutions.nb01 as sol
from attention_helpers.checks import check_key_entry, check_qkv, check_qkv_shapes
from tools.notebooks import code_sources

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "01_qkv_projections.ipynb"

_, X = ah.examples.the_cat_sat()


# ---- exercise 1: my_qkv ----------------------------------------------------

def test_qkv_solution_passes():
    check = check_qkv(sol.my_qkv)
    assert check, check.text


@pytest.mark.parametrize("fn, kind, mistake", [
    (lambda X, W_Q, W_K, W_V: (X @ W_Q.T, X @ W_K.T, X @ W_V.T), "mistake", "W_Q_transposed"),
    (lambda X, W_Q, W_K, W_V: (W_Q @ X, W_K @ X, W_V @ X), "mistake", "W_Q_first"),
    (lambda X, W_Q, W_K, W_V: (X * W_Q, X * W_K, X * W_V), "mistake", "Q_elementwise"),
    (lambda X, W_Q, W_K, W_V: (X @ W_K, X @ W_Q, X @ W_V), "mistake", "Q_K_swapped"),
    (lambda X, W_Q, W_K, W_V: (X @ W_Q, X @ W_K, X @ W_Q), "mistake", "V_from_W_Q"),
    (lambda X, W_Q, W_K, W_V: (X @ W_Q, X @ W_K.T, X @ W_V), "mistake", "W_K_transposed"),
    (lambda X, W_Q, W_K, W_V: (X @ W_Q, X @ W_K, W_V @ X), "mistake", "W_V_first"),
    (lambda X, W_Q, W_K, W_V: None, "empty", None),
    (lambda X, W_Q, W_K, W_V: (None, None, None), "empty", None),
    (lambda X, W_Q, W_K, W_V: (X @ W_Q, X @ W_K), "wrong_type", None),
    (lambda X, W_Q, W_K, W_V: (X @ W_Q)[:, :2], "wrong_type", None),
    (lambda X, W_Q, W_K, W_V: X @ W_Q[:2], "raised", None),
])
def test_qkv_mistakes_are_named(fn, kind, mistake):
    check = check_qkv(fn)
    assert (check.kind, check.mistake) == (kind, mistake), check.text


def test_qkv_checks_the_rectangular_case_too():
    # right while d_model == 3 (the square case), wrong once X has 4 columns
    def square_only(X, W_Q, W_K, W_V):
        return X @ W_Q, X @ W_K, X[:, :3] @ W_V[:3, :]

    check = check_qkv(square_only)
    assert check.kind == "wrong_value" and check.hint.startswith("V "), check.text  # names V


# ---- exercise 2: shapes ------------------------------------------------------

def test_shapes_solution_passes():
    check = check_qkv_shapes(sol.shapes, **sol.SHAPE_SIZES)
    assert check, check.text


@pytest.mark.parametrize("change, kind, mistake", [
    ({"W_Q": (2, 6)}, "mistake", "W_transposed_shape"),
    ({"W_V": (6, 2)}, "mistake", "W_wrong_width"),
    ({"W_K": (6, 3)}, "mistake", "W_wrong_width"),
    ({"Q": (5, 6)}, "mistake", "width_unchanged"),
    ({"K": (2, 5)}, "mistake", "transposed_shape"),
    ({"Q": (6, 2)}, "mistake", "rows_d_model"),
    ({"V": (5, 2)}, "mistake", "wrong_width"),
    ({"V": (5, 6)}, "mistake", "width_unchanged"),
    ({"Q": None}, "empty", None),
    ({"Q": (5, 2, 1)}, "wrong_shape", None),
    ({"W_K": (4, 4)}, "wrong_value", None),
])
def test_shape_mistakes_are_named(change, kind, mistake):
    shapes = {**sol.shapes, **change}
    check = check_qkv_shapes(shapes, **sol.SHAPE_SIZES)
    assert (check.kind, check.mistake) == (kind, mistake), check.text
    name = next(iter(change))
    assert f"of {name}" in check.hint or check.hint.startswith(name)  # the hint names the matrix


def test_shapes_empty_or_incomplete():
    assert check_qkv_shapes(None, **sol.SHAPE_SIZES).kind == "empty"
    partial = {k: v for k, v in sol.shapes.items() if k != "V"}
    check = check_qkv_shapes(partial, **sol.SHAPE_SIZES)
    assert check.kind == "wrong_type" and "'V'" in check.hint  # names the missing entry


def test_generic_shape_hint_does_not_give_the_answer_away():
    hint = check_qkv_shapes({**sol.shapes, "W_K": (4, 4)}, **sol.SHAPE_SIZES).hint
    assert "(6, 2)" not in hint and "expected" not in hint


# ---- exercise 3: one entry of K by hand ---------------------------------------

def test_key_entry_solution_passes():
    check = check_key_entry(sol.k_sat_1, X, sol.W_K_EX, row=2, col=1)
    assert check, check.text


@pytest.mark.parametrize("answer, kind, mistake", [
    ((X @ sol.W_K_EX)[1, 2], "mistake", "row_col_swapped"),
    ((X @ sol.W_K_EX)[1, 0], "mistake", "counted_from_1"),
    (X[2] * sol.W_K_EX[:, 1], "mistake", "products_not_summed"),
    (None, "empty", None),
])
def test_key_entry_mistakes_are_named(answer, kind, mistake):
    check = check_key_entry(answer, X, sol.W_K_EX, row=2, col=1)
    assert (check.kind, check.mistake) == (kind, mistake), check.text


def test_key_entry_generic_hint_does_not_give_the_answer_away():
    check = check_key_entry(0.5, X, sol.W_K_EX, row=2, col=1)
    assert check.kind == "wrong_value"
    assert "0.5" in check.hint  # it says what the student gave
    assert f"{sol.k_sat_1:.4g}" not in check.hint and "expected" not in check.hint


# ---- the notebook shows the data the solution uses ------------------------------

def test_notebook_exercises_match_the_solutions():
    sources = code_sources(NOTEBOOK)
    (stub,) = [s for s in sources if "W_K_ex = np.array(" in s]
    namespace = {"np": np, "X": X}
    exec(stub, namespace)  # the stub defines W_K_ex, prints it and sets k_sat_1 = None
    assert np.array_equal(namespace["W_K_ex"], sol.W_K_EX)
    assert namespace["k_sat_1"] is None
    assert any("n=5, d_model=6, d_k=2, d_v=3" in s and "check_qkv_shapes" in s for s in sources)
