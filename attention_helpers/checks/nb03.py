"""Checkers for notebook 03, scaling by sqrt(d_k); check_attention is shared with notebook 05."""

from __future__ import annotations

import numpy as np

from .. import core
from ._base import Check, call, checker, compare, empty, wrong
from ._mistakes import scaling_mistakes


@checker
def check_attention(fn) -> Check:
    """Check a learner's `fn(Q, K, V) -> output` against softmax(QKᵀ/√d_k)·V."""
    rng = np.random.default_rng(7)
    Q, K, V = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    out, err = call(fn, Q, K, V)
    if err is not None:
        return err
    if isinstance(out, tuple):
        out = out[0]
    d_k = Q.shape[-1]
    expected, _ = core.scaled_dot_product_attention(Q, K, V)
    scores = Q @ K.T
    return compare(out, expected, name="attention(Q, K, V)", mistakes={
        **scaling_mistakes(lambda factor: core.softmax(scores * factor) @ V, d_k),
        "wrong_axis": (
            "the softmax runs over the wrong axis: each query row must sum to 1 (axis=-1).",
            core.softmax(scores / np.sqrt(d_k), axis=0) @ V),
        "returned_weights": (
            "you returned the weights, not the output: multiply the weights by V.",
            core.softmax(scores / np.sqrt(d_k))),
    }, success="softmax(Q·Kᵀ/√d_k)·V, shape (3, 2) for 3 queries and 2 value columns.")



@checker
def check_dot_variance(answer, *, d_k) -> Check:
    """Check a predicted Var(q·k) for q, k with d_k independent entries of mean 0 and variance 1
    (the notebook passes its d_k)."""
    if answer is None or answer is Ellipsis:
        return empty("my_variance")
    if isinstance(answer, (str, bytes)):
        return wrong(f"write Var(q·k) as a number without quotes (got the text {answer!r}).",
                     kind="not_numbers")
    try:
        value = np.asarray(answer, dtype=float)
    except (TypeError, ValueError):
        return wrong(f"Var(q·k) should be one number, got {type(answer).__name__}.", kind="not_numbers")
    if value.shape != ():
        return wrong(f"Var(q·k) should be one number, got an array of shape {value.shape}.",
                     kind="wrong_shape")
    name = f"Var(q·k) for d_k = {d_k}"
    mistakes = {
        "std_not_variance": (
            f"√d_k = {np.sqrt(d_k):.4g} is the standard deviation of q·k (the typical size of a score); "
            "the variance is its square.",
            np.sqrt(d_k)),
        "one_product": (
            "1 is the variance of a single product q_i·k_i, or of the score after dividing by √d_k; "
            "the raw q·k adds d_k such products, and variances of independent terms add.",
            1.0),
        "d_k_squared": (
            "d_k² would need all the products to move together; they are independent, so their "
            "variances simply add up: d_k × 1.",
            float(d_k) ** 2),
        "mean_not_variance": (
            "0 is the mean of q·k (positive and negative products cancel on average); the variance "
            "measures the spread around that mean.",
            0.0),
    }
    check = compare(value, float(d_k), name=name, mistakes=mistakes, rtol=2e-3,
                    success=f"Var(q·k) = d_k = {d_k}: a sum of {d_k} independent products, each "
                            f"of variance 1. A typical raw score is ±√{d_k} ≈ {np.sqrt(d_k):.1f}.")
    if check or not np.isfinite(value) or any(np.isclose(value, w, rtol=2e-3) for _, w in mistakes.values()):
        return check
    if value < 0:
        return wrong(f"{name} cannot be negative: a variance is an average of squares.",
                     mistake="negative")
    if abs(value - d_k) <= 0.1 * d_k:
        return wrong(f"{float(value):.4g} is close, but it looks like a measured value; the "
                     "prediction is exact: add up d_k variances of 1.", mistake="measured")
    return wrong(f"{float(value):.4g} is not it: q·k is a sum of d_k products q_i·k_i, each with "
                 "variance 1; add up their variances.")


@checker
def check_scaled_attention(fn) -> Check:
    """check_attention, plus the scaling slips of notebook 03.

    When check_attention finds no named mistake, the learner's function runs once
    more with d_k = 16, 3 queries and 4 keys, where dividing by the wrong size,
    multiplying instead of dividing, scaling after the softmax or a hard-coded
    d_k each give a different, recognisable output.
    """
    check = check_attention(fn)
    if check.kind not in ("wrong_shape", "wrong_value"):
        return check  # right, a named mistake already, or nothing to run again
    rng = np.random.default_rng(3)
    Q, K, V = rng.normal(size=(3, 16)), rng.normal(size=(4, 16)), rng.normal(size=(4, 2))
    out, err = call(fn, Q, K, V)
    if err is not None:
        return check
    if isinstance(out, tuple):
        out = out[0]
    S = Q @ K.T
    expected = core.softmax(S / 4.0) @ V  # √d_k = √16 = 4
    mistakes = {
        "sqrt_n_keys": (
            "you divided by the square root of the number of keys (K.shape[0]); d_k is the number of "
            "columns of Q and K: d_k = Q.shape[-1].",
            core.softmax(S / np.sqrt(4)) @ V),
        "sqrt_n_queries": (
            "you divided by the square root of the number of queries (Q.shape[0]); d_k is the number of "
            "columns of Q and K: d_k = Q.shape[-1].",
            core.softmax(S / np.sqrt(3)) @ V),
        "multiplied_by_sqrt": (
            "you multiplied by √d_k instead of dividing: the scores must shrink, Q @ K.T / np.sqrt(d_k).",
            core.softmax(S * 4.0) @ V),
        "scaled_after_softmax": (
            "you divided after the softmax (the weights or the output): scale the scores Q @ K.T "
            "before the softmax, so that each row of weights still sums to 1.",
            core.softmax(S) @ V / 4.0),
    }
    for fixed in (None, 2, 8, 32, 64, 128, 256, 512, 1024):  # None: the mistakes above
        if fixed is not None:
            mistakes = {"fixed_d_k": (
                f"you divided by √{fixed} whatever the input: read d_k from the arrays "
                "(d_k = Q.shape[-1]) instead of using a fixed number.",
                core.softmax(S / np.sqrt(fixed)) @ V)}
        extra = compare(out, expected, name="attention(Q, K, V)", mistakes=mistakes)
        if extra.kind == "mistake":
            return extra
    return check
