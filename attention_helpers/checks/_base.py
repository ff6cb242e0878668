"""The shared base of the exercise checkers: a structured result, `compare`, and grading mode.

The API that every checker module (nb00.py, nb01.py, ...) builds on:

- `Check`: what a check found. Fields: `ok` (bool), `kind` (one of KINDS),
  `hint` (the sentence for the learner), `mistake` (the key of the matched
  mistake, or None), `error` (the exception a learner's function raised, or
  None). `check.text` is the line the learner sees ("✅ Correct: …" or
  "❌ Not yet: …"), built from those fields; `bool(check)` is `check.ok`.
  Decide what to do next from the fields, never from the text.
- `right(hint)` and `wrong(hint, kind=..., mistake=..., error=...)` build one;
  a failed Check of kind "mistake" needs its key, and any other failed kind
  may carry one too (a "raised" error that has a known cause, say).
- `compare(answer, expected, name=..., mistakes={key: (hint, wrong_array)}, success=...)`:
  the general tool. It reports "empty", "not_numbers", "not_finite",
  "mistake" (the first entry of `mistakes` the answer equals: `mistake` is its
  key, a short stable name such as "no_scale", and `hint` its sentence; a
  wrong_array of None means "the answer is not finite"), "transposed",
  "wrong_shape" or "wrong_value".
- `call(fn, *args) -> (result, None) or (None, failed Check)`: runs a learner's
  function; an error becomes a Check of kind "raised" (or "not_callable").
- `shape_answer(name, answer) -> tuple of ints or failed Check`;
  `array_answer(name, answer) -> float array or failed Check`;
  `number_answer(name, answer) -> float or failed Check`;
  `compare_number(answer, expected, name=, mistakes={key: (hint, wrong_value)}, success=,
  otherwise=)` for exercises whose answer is one number.
- `@checker`: wrap every public `check_…` function with it. In grading mode
  a failed check raises AssertionError with its text, so that a check cell
  can stop a script or a test; checkers that call other checkers still get
  the Check back and raise only at the outermost call. The nbgrader course
  does not rely on it: its hidden tests load a private copy of the checks and
  assert on `Check.ok` (scripts/nbgrader_autograder.py), so no switch in a
  student's kernel changes a grade.
- `grading(on=True)`: turn grading mode on or off (also a context manager that
  restores the previous state); the environment variable ATTENTION_GRADING=1
  turns it on too. `grading_on()` says whether it is on.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import warnings

import numpy as np

KINDS = ("right", "empty", "raised", "not_callable", "not_numbers", "not_finite", "wrong_type",
         "wrong_shape", "transposed", "mistake", "wrong_value")


class Check:
    """What a check found; shows as one line, ✅ (right) or ❌ (not yet, with a hint)."""

    __slots__ = ("ok", "kind", "hint", "mistake", "error")

    def __init__(self, ok, kind, hint, mistake=None, error=None):
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
        self.ok, self.kind, self.hint, self.mistake, self.error = bool(ok), kind, hint, mistake, error

    @property
    def text(self) -> str:
        return f"✅ Correct: {self.hint}" if self.ok else f"❌ Not yet: {self.hint}"

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        return self.text


def right(hint: str) -> Check:
    return Check(True, "right", hint)


def wrong(hint: str, kind: str = "wrong_value", mistake: str | None = None, error=None) -> Check:
    """A failed Check. A named mistake (kind="mistake") needs `mistake`, its short key."""
    if kind == "mistake" and not mistake:
        raise ValueError(f"a Check of kind 'mistake' needs its key (mistake='...'); hint: {hint!r}")
    return Check(False, kind, hint, mistake=mistake, error=error)


def fmt(a) -> str:
    """An array rounded to 3 decimals, for hints."""
    return np.array2string(np.asarray(a, dtype=float), precision=3, suppress_small=True)


def empty(name: str) -> Check:
    return wrong(f"{name} is still empty (None): fill in the code above and run it again.", kind="empty")


def compare(answer, expected, *, name="your answer", mistakes=None, success=None,
            rtol=1e-5, atol=1e-8) -> Check:
    """Compare `answer` with `expected`; if wrong, look for a known mistake.

    mistakes: {key: (hint, array the mistake produces)}. The first one that
    `answer` matches gives the Check its key (`mistake`) and its hint; an
    array of None stands for "inf or nan". A transposed answer is recognised
    on its own.
    """
    mistakes = _keyed(mistakes)
    expected = np.asarray(expected, dtype=float)
    got = array_answer(name, answer)
    if isinstance(got, Check):
        return got
    if not np.isfinite(got).all():
        key = next((k for k, (_, bad) in mistakes.items() if bad is None), None)
        if key is not None:
            return wrong(mistakes[key][0], kind="mistake", mistake=key)
        return wrong(f"{name} contains inf or nan: some step overflowed or divided by zero.",
                     kind="not_finite")
    found = _matching_mistake(got, expected, mistakes, rtol=rtol, atol=atol)
    if found is not None:
        return found
    if got.shape != expected.shape:
        if got.shape == expected.T.shape and np.allclose(got, expected.T, rtol=rtol, atol=atol):
            return wrong(f"{name} is the transpose of the answer (shape {got.shape}, expected "
                         f"{expected.shape}): rows should be tokens; check the order of the factors.",
                         kind="transposed")
        return wrong(f"{name} has shape {got.shape}, expected {expected.shape}.", kind="wrong_shape")
    if not np.allclose(got, expected, rtol=rtol, atol=atol):
        i = tuple(int(k) for k in np.argwhere(~np.isclose(got, expected, rtol=rtol, atol=atol))[0])
        return wrong(f"{name} has the right shape {got.shape} but differs at index {i}: "
                     f"expected {expected[i]:.4g}, got {got[i]:.4g}.")
    return right(success or f"{name} matches, shape {got.shape}.")


def _matching_mistake(got, expected, mistakes, rtol=1e-5, atol=1e-8) -> Check | None:
    """The failed Check of the first mistake ({key: (hint, wrong answer)}) whose wrong answer
    `got` equals, where that wrong answer is not itself right; None if there is none."""
    for key, (hint, bad) in _keyed(mistakes).items():
        if bad is None:
            continue
        bad = np.asarray(bad, dtype=float)
        if bad.shape == got.shape and np.allclose(got, bad, rtol=rtol, atol=atol) and not (
                bad.shape == expected.shape and np.allclose(bad, expected, rtol=rtol, atol=atol)):
            return wrong(hint, kind="mistake", mistake=key)
    return None


def _keyed(mistakes) -> dict:
    """`mistakes`, {key: (hint, wrong answer)}, checked: a checker that writes another form gets
    a clear error, not a mistake that can never match."""
    keyed = dict(mistakes or {})
    for key, entry in keyed.items():
        if not (isinstance(key, str) and isinstance(entry, tuple) and len(entry) == 2
                and isinstance(entry[0], str)):
            raise TypeError(f"mistakes must map a key to (hint, wrong answer), got {key!r}: {entry!r}")
    return keyed


def shape_answer(name, answer):
    """A predicted shape as a tuple of ints, or the Check that says what is wrong with it."""
    if answer is None or answer is Ellipsis:
        return empty(name)
    try:
        return tuple(int(k) for k in answer)
    except (TypeError, ValueError):
        return wrong(f"write the shape as a tuple of two whole numbers (rows, columns), "
                     f"for example (2, 3); got {answer!r}.", kind="wrong_type")


def array_answer(name, answer):
    """An answer of numbers as a float array, or the Check that says what is wrong with it."""
    if answer is None or answer is Ellipsis:
        return empty(name)
    try:
        return np.asarray(answer, dtype=float)
    except (TypeError, ValueError):
        return wrong(f"{name} should be an array of numbers, got {type(answer).__name__}.",
                     kind="not_numbers")


def number_answer(name, answer):
    """A numeric answer as a float, or the Check that says what is wrong with it."""
    if answer is None or answer is Ellipsis:
        return empty(name)
    try:
        return float(answer)
    except (TypeError, ValueError):
        return wrong(f"{name} should be one whole number, got {answer!r}.", kind="not_numbers")


def compare_number(answer, expected, *, name, mistakes, success, otherwise):
    """Check a numeric answer: `success` if it equals `expected`; the key and hint of the
    first entry of `mistakes` ({key: (hint, wrong value)}) it equals; else `otherwise(value)`."""
    value = number_answer(name, answer)
    if isinstance(value, Check):
        return value
    if value == expected:
        return right(success)
    for key, (hint, bad) in _keyed(mistakes).items():
        if value == bad:
            return wrong(hint, kind="mistake", mistake=key)
    return wrong(otherwise(value))


def call(fn, *args):
    """Run a learner's function; return (result, None) or (None, Check explaining the error).

    Test the second item with `is not None`: a failing Check is falsy.
    """
    if not callable(fn):
        return None, wrong(f"expected a function, got {type(fn).__name__}.", kind="not_callable")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # overflow is diagnosed by the checker
            return fn(*args), None
    except Exception as err:  # the learner's code: any error becomes a hint
        return None, wrong(f"your function raised {type(err).__name__}: {err}", kind="raised", error=err)


def raised(check: Check, *fragments: str) -> bool:
    """True if `check` reports a learner's function that raised, with any of `fragments` in
    the error's own text (numpy's words, not ours)."""
    return check.kind == "raised" and any(f in str(check.error) for f in fragments)


# ---- grading mode --------------------------------------------------------------

_state = threading.local()
_grading = [False]


def grading_on() -> bool:
    """True when failed checks raise AssertionError: after grading(True), or with ATTENTION_GRADING=1."""
    env = os.environ.get("ATTENTION_GRADING", "").strip().lower()
    return _grading[0] or env in ("1", "true", "yes", "on")


class _Restore(contextlib.AbstractContextManager):
    """What grading() returns: shows the new state, and restores the old one after a with block."""

    def __init__(self, previous):
        self.previous = previous

    def __repr__(self) -> str:
        if _grading[0]:
            return "grading mode on: a check that fails raises AssertionError with its hint"
        return "grading mode off: a check shows ✅ or ❌ and never raises"

    def __exit__(self, *exc):
        _grading[0] = self.previous
        return False


def grading(on: bool = True):
    """Turn grading mode on (or off with grading(False)).

    Use it as a call, `ah.checks.grading(True)`, or as `with ah.checks.grading(False): ...`,
    which restores the previous state at the end of the block.
    """
    if not isinstance(on, bool):
        raise TypeError(f"grading(on) takes True or False, got {type(on).__name__}")
    previous, _grading[0] = _grading[0], on
    return _Restore(previous)


def checker(fn):
    """Make `fn` a public checker: in grading mode a failed result raises AssertionError."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        __tracebackhide__ = True  # pytest: report the hint, not this frame
        depth = getattr(_state, "depth", 0)
        _state.depth = depth + 1
        try:
            result = fn(*args, **kwargs)
        finally:
            _state.depth = depth
        if depth == 0 and not result.ok and grading_on():
            raise AssertionError(result.text)
        return result
    return wrapper
