"""Checkers for notebook 04, softmax; check_softmax is the plain check, check_stable_softmax
the exercise."""

from __future__ import annotations

import numpy as np

from .. import core, examples
from ._base import Check, call, checker, compare, raised, right, wrong
from ._mistakes import softmax_mistakes


@checker
def check_softmax(fn) -> Check:
    """Check a learner's row-wise softmax `fn(S)` (S: scores, one query per row, as in
    notebook 04) on small and on huge scores."""
    small = np.array([[3.2, 4.0, 1.0, 6.2, 8.0], [1.0, 1.0, 1.0, 1.0, 1.0]])
    huge = np.array([[800.0, 799.0, 790.0]])
    out, err = call(fn, small.copy())
    if err is not None:
        return err
    check = compare(out, core.softmax(small), name="softmax(S)", mistakes=softmax_mistakes(np.exp(small)))
    if not check:
        return check
    out, err = call(fn, huge.copy())
    if err is not None:
        return err
    check = compare(out, core.softmax(huge), name="softmax([800, 799, 790])", mistakes={
        "overflow": (
            "exp(800) overflows to inf, so you get nan: subtract each row's maximum before exp "
            "(S - S.max(axis=-1, keepdims=True)).",
            None),
    })
    if not check:
        return check
    return right("rows sum to 1, the axis is right, and huge scores stay finite.")



_KEEPDIMS_HINT = (
    "S.max(axis=-1) and E.sum(axis=-1) have shape (rows,) and do not line up with S of shape "
    "(rows, columns); pass keepdims=True so they have shape (rows, 1) and each row uses its own value."
)


@checker
def check_stable_softmax(fn) -> Check:
    """check_softmax, plus the mistakes it lets through: the shifted versions of its
    mistakes, a row max or sum without keepdims, a shift by each column's maximum,
    and a shift by the maximum of the whole array (right for one row, nan as soon
    as rows lie far apart)."""
    small = np.array([[3.2, 4.0, 1.0, 6.2, 8.0], [1.0, 1.0, 1.0, 1.0, 1.0]])
    out, err = call(fn, small.copy())
    if err is not None:
        if raised(err, "broadcast"):
            return wrong(f"{err.hint} {_KEEPDIMS_HINT}", kind="raised", mistake="no_keepdims",
                         error=err.error)
        return err
    s = np.exp(small - small.max(axis=-1, keepdims=True))  # shifted by each row's maximum
    c = np.exp(small - small.max(axis=0, keepdims=True))  # shifted by each column's maximum
    mistakes = {
        **softmax_mistakes(s),
        "column_max_shift": (
            "you subtracted each column's maximum (axis=0), which shifts the entries of a row "
            "by different amounts; shift each row by its own maximum: "
            "S.max(axis=-1, keepdims=True).",
            c / c.sum(axis=-1, keepdims=True)),
    }
    first = compare(out, core.softmax(small), name="softmax(S)", mistakes=mistakes)
    if first.kind == "mistake":
        return first
    check = check_softmax(fn)
    if not check:
        return check
    mixed = np.array([[1000.0, 999.0, 990.0], [0.0, 1.0, 2.0]])
    out, err = call(fn, mixed.copy())
    if err is not None:
        return err
    check = compare(out, core.softmax(mixed), name="softmax of the rows [1000, 999, 990] and [0, 1, 2]",
                    mistakes={
        "global_max_shift": (
            "a row came out nan: you subtracted the maximum of the whole array (S.max()), so the row "
            "[0, 1, 2], 1000 below it, underflows to 0 / 0. Shift each row by its own maximum: "
            "S.max(axis=-1, keepdims=True).",
            None),
    })
    if not check:
        return check
    return right("rows sum to 1, the axis is right, and every row is shifted by its own maximum, "
                 "so huge scores stay finite.")


@checker
def check_temperature_for_ratio(answer, gap=1.8, ratio=2.0) -> Check:
    """Check the temperature T at which two scores `gap` apart give probabilities in
    the ratio `ratio`: p_top / p_next = e^(gap / T), so T = gap / ln(ratio)."""
    expected = gap / np.log(ratio)
    return compare(answer, expected, name="T", mistakes={
        "multiplied_by_T": (
            "the temperature divides the scores, so the ratio is e^(gap / T), not e^(gap · T): "
            "solve gap / T = ln(ratio) for T.",
            gap * np.log(ratio)),
        "reciprocal": (
            "that is 1 / T: you solved for the factor the scores are multiplied by; T is what they "
            "are divided by, so take the reciprocal.",
            np.log(ratio) / gap),
        "ratio_not_log": (
            "the ratio of two probabilities is an exponential, e^(gap / T): take the logarithm of the "
            "ratio (ln 2) instead of the ratio itself.",
            gap / ratio),
        "plain_softmax": (
            "T = 1 is plain softmax, where the ratio is e^gap (about 6), not 2: a larger T is needed "
            "to flatten the distribution.",
            1.0),
    }, success=f"T = {expected:.3f}: above 1, so the scores are divided down, the distribution "
                f"flattens and the winner's lead shrinks from e^{gap:g} to {ratio:g}.")


@checker
def check_probability_by_hand(answer) -> Check:
    """Check softmax(row)[1], the probability of the second key, computed by hand, for the
    row of examples.softmax_exercise_row()."""
    row = examples.softmax_exercise_row()
    e = np.exp(row)
    p = e / e.sum()
    return compare(answer, p[1], name="p_second", mistakes={
        "no_exp": (
            "you divided the raw scores by their sum; softmax takes exp of every score first: "
            f"e^{row[1]:g} / (e^{row[0]:g} + e^{row[1]:g} + e^{row[2]:g}).",
            row[1] / row.sum()),
        "exp_not_divided": (
            f"that is e^{row[1]:g} on its own: divide it by the sum of the exponentials of the whole row.",
            e[1]),
        "numerator_only": (
            "only the numerator is exponentiated: the denominator is the sum of e^score over the row, "
            "not the sum of the scores.",
            e[1] / row.sum()),
        "percentage": (
            "that looks like a percentage: give the probability as a fraction between 0 and 1.",
            100 * p[1]),
        "first_key": (
            "that is the probability of the first key; the exercise asks for the second (index 1).",
            p[0]),
        "third_key": (
            "that is the probability of the third key; the exercise asks for the second (index 1).",
            p[2]),
    }, success=f"p_second = {p[1]:.4f}: the largest score takes most of the mass.")
