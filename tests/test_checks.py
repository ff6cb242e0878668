"""The exercise checkers name the likely mistake and accept the right answer."""

import numpy as np
import pytest

import attention_helpers as ah
from attention_helpers.checks import check_attention, check_softmax, compare


def stable_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_compare_accepts_the_right_answer():
    check = compare([[1.0, 2.0]], np.array([[1.0, 2.0]]), name="Q")
    assert check and check.message.startswith("✅")


@pytest.mark.parametrize("answer, fragment", [
    (None, "still empty"),
    ("text", "should be an array of numbers"),
    ([[1.0], [2.0]], "is the transpose of the answer"),
    ([1.0, 2.0, 3.0], "has shape (3,), expected (1, 2)"),
    ([[1.0, 2.5]], "differs at index (0, 1): expected 2, got 2.5"),
    ([[np.nan, 2.0]], "contains inf or nan"),
])
def test_compare_explains_what_is_wrong(answer, fragment):
    check = compare(answer, np.array([[1.0, 2.0]]), name="Q")
    assert not check
    assert fragment in check.message and check.message.startswith("❌")


def test_compare_names_a_known_mistake():
    check = compare([3.0, 4.0], [1.0, 2.0], mistakes={"you added instead": [3.0, 4.0]})
    assert not check and "you added instead" in check.message


def test_check_softmax_accepts_a_stable_softmax():
    assert check_softmax(stable_softmax)
    assert check_softmax(ah.softmax)


@pytest.mark.parametrize("fn, fragment", [
    (lambda x: np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True), "subtract each row's maximum"),
    (lambda x: np.exp(x) / np.exp(x).sum(axis=0, keepdims=True), "normalised over columns"),
    (lambda x: np.exp(x - x.max()) / np.exp(x - x.max()).sum(), "whole matrix"),
    (lambda x: np.exp(x), "do not sum to 1"),
    (lambda x: None, "still empty"),
    (lambda x: x.nope, "raised AttributeError"),
    ("not a function", "expected a function"),
])
def test_check_softmax_names_each_mistake(fn, fragment):
    check = check_softmax(fn)
    assert not check
    assert fragment in check.message


def test_check_attention_accepts_the_reference_and_names_mistakes():
    assert check_attention(lambda Q, K, V: ah.scaled_dot_product_attention(Q, K, V))
    unscaled = check_attention(lambda Q, K, V: ah.softmax(Q @ K.T) @ V)
    by_dk = check_attention(lambda Q, K, V: ah.softmax(Q @ K.T / Q.shape[-1]) @ V)
    weights_only = check_attention(lambda Q, K, V: ah.softmax(Q @ K.T / np.sqrt(Q.shape[-1])))
    assert "forgot to scale" in unscaled.message
    assert "instead of sqrt(d_k)" in by_dk.message
    assert "returned the weights" in weights_only.message
