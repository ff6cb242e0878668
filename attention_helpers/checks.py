"""Exercise checkers: compare a learner's array or function with the reference
and, when it is wrong, name the likely mistake.

Each checker returns a Check, which shows as one line starting with ✅ (right)
or ❌ (not yet, with a hint). `bool(check)` says which, for tests.

The general tool is `compare(answer, expected, mistakes=...)`: `mistakes`
maps a hint to the array that the mistake would produce, so a new exercise
only has to compute its typical wrong answers.
"""

from __future__ import annotations

import warnings

import numpy as np

from . import core

__all__ = ["Check", "compare", "check_softmax", "check_attention"]


class Check:
    """The outcome of a check: `ok` and the message shown to the learner."""

    def __init__(self, ok: bool, message: str):
        self.ok, self.message = bool(ok), message

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        return self.message


def _right(text: str) -> Check:
    return Check(True, f"✅ Correct: {text}")


def _wrong(text: str) -> Check:
    return Check(False, f"❌ Not yet: {text}")


def _fmt(a) -> str:
    return np.array2string(np.asarray(a, dtype=float), precision=3, suppress_small=True)


def compare(answer, expected, *, name="your answer", mistakes=None, success=None,
            rtol=1e-5, atol=1e-8) -> Check:
    """Compare `answer` with `expected`; if wrong, look for a known mistake.

    mistakes: {hint: array the mistake produces}. The first one that `answer`
    matches gives its hint. A transposed answer is recognised on its own.
    """
    expected = np.asarray(expected, dtype=float)
    if answer is None or answer is Ellipsis:
        return _wrong(f"{name} is still empty (None): fill in the code above and run it again.")
    try:
        got = np.asarray(answer, dtype=float)
    except (TypeError, ValueError):
        return _wrong(f"{name} should be an array of numbers, got {type(answer).__name__}.")
    if not np.isfinite(got).all():
        hint = next((h for h, m in (mistakes or {}).items() if m is None), None)
        return _wrong(hint or f"{name} contains inf or nan: some step overflowed or divided by zero.")
    for hint, wrong in (mistakes or {}).items():
        if wrong is None:
            continue
        wrong = np.asarray(wrong, dtype=float)
        if wrong.shape == got.shape and np.allclose(got, wrong, rtol=rtol, atol=atol) and not (
                wrong.shape == expected.shape and np.allclose(wrong, expected, rtol=rtol, atol=atol)):
            return _wrong(hint)
    if got.shape != expected.shape:
        if got.shape == expected.T.shape and np.allclose(got, expected.T, rtol=rtol, atol=atol):
            return _wrong(f"{name} is the transpose of the answer (shape {got.shape}, expected "
                          f"{expected.shape}): rows should be tokens; check the order of the factors.")
        return _wrong(f"{name} has shape {got.shape}, expected {expected.shape}.")
    if not np.allclose(got, expected, rtol=rtol, atol=atol):
        i = tuple(int(k) for k in np.argwhere(~np.isclose(got, expected, rtol=rtol, atol=atol))[0])
        return _wrong(f"{name} has the right shape {got.shape} but differs at index {i}: "
                      f"expected {expected[i]:.4g}, got {got[i]:.4g}.")
    return _right(success or f"{name} matches, shape {got.shape}.")


def _call(fn, *args):
    """Run a learner's function; return (result, None) or (None, Check explaining the error).

    Test the second item with `is not None`: a failing Check is falsy.
    """
    if not callable(fn):
        return None, _wrong(f"expected a function, got {type(fn).__name__}.")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # overflow is diagnosed below
            return fn(*args), None
    except Exception as err:  # the learner's code: any error becomes a hint
        return None, _wrong(f"your function raised {type(err).__name__}: {err}")


def check_softmax(fn) -> Check:
    """Check a learner's row-wise softmax `fn(x)` on small and on huge scores."""
    small = np.array([[3.2, 4.0, 1.0, 6.2, 8.0], [1.0, 1.0, 1.0, 1.0, 1.0]])
    huge = np.array([[800.0, 799.0, 790.0]])
    out, err = _call(fn, small.copy())
    if err is not None:
        return err
    e = np.exp(small)
    check = compare(out, core.softmax(small), name="softmax(x)", mistakes={
        "your rows do not sum to 1: divide each exp by the sum of its own row.": e,
        "you normalised over columns (axis=0); softmax runs along each row: use axis=-1 "
        "with keepdims=True.": e / e.sum(axis=0, keepdims=True),
        "you divided by the sum of the whole matrix; each row needs its own sum "
        "(axis=-1, keepdims=True).": e / e.sum(),
    })
    if not check:
        return check
    out, err = _call(fn, huge.copy())
    if err is not None:
        return err
    check = compare(out, core.softmax(huge), name="softmax([800, 799, 790])", mistakes={
        "exp(800) overflows to inf, so you get nan: subtract each row's maximum before exp "
        "(x - x.max(axis=-1, keepdims=True)).": None,
    })
    if not check:
        return check
    return _right("rows sum to 1, the axis is right, and huge scores stay finite.")


def check_attention(fn) -> Check:
    """Check a learner's `fn(Q, K, V) -> output` against softmax(QKᵀ/√d_k)·V."""
    rng = np.random.default_rng(7)
    Q, K, V = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    out, err = _call(fn, Q, K, V)
    if err is not None:
        return err
    if isinstance(out, tuple):
        out = out[0]
    d_k = Q.shape[-1]
    expected, _ = core.scaled_dot_product_attention(Q, K, V)
    scores = Q @ K.T
    return compare(out, expected, name="attention(Q, K, V)", mistakes={
        "you forgot to scale: divide Q @ K.T by sqrt(d_k) before the softmax.":
            core.softmax(scores) @ V,
        "you divided by d_k instead of sqrt(d_k).": core.softmax(scores / d_k) @ V,
        "the softmax runs over the wrong axis: each query row must sum to 1 (axis=-1).":
            core.softmax(scores / np.sqrt(d_k), axis=0) @ V,
        "you returned the weights, not the output: multiply the weights by V.":
            core.softmax(scores / np.sqrt(d_k)),
    }, success="softmax(Q·Kᵀ/√d_k)·V, shape (3, 2) for 3 queries and 2 value columns.")
