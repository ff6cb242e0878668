"""Mistake builders shared by several notebooks' checkers: each returns {key: (hint, wrong array)}
for `compare`, so a hint about the same slip reads the same everywhere."""

from __future__ import annotations


def softmax_mistakes(e):
    """The ways of normalising exponentials `e` (one row per query) that are not a softmax."""
    return {
        "rows_not_normalised": (
            "your rows do not sum to 1: divide each exp by the sum of its own row.",
            e),
        "normalised_over_columns": (
            "you normalised over columns (axis=0); softmax runs along each row: use axis=-1 "
            "with keepdims=True.",
            e / e.sum(axis=0, keepdims=True)),
        "normalised_over_matrix": (
            "you divided by the sum of the whole matrix; each row needs its own sum "
            "(axis=-1, keepdims=True).",
            e / e.sum()),
    }


def scaling_mistakes(attend, d_k, scores="Q @ K.T"):
    """The two slips in scaling the scores by 1/√d_k.

    attend(factor) -> the output when the scores are multiplied by `factor`
    instead of 1/√d_k; `scores` names them in the hint.
    """
    return {
        "no_scale": (
            f"you forgot to scale: divide {scores} by sqrt(d_k) before the softmax.",
            attend(1.0)),
        "divided_by_d_k": (
            "you divided by d_k instead of sqrt(d_k).",
            attend(1.0 / d_k)),
    }
