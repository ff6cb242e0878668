"""The verdict of a graded check cell in the nbgrader course (copied beside each notebook).

scripts/make_nbgrader_course.py puts a hidden test (`### BEGIN HIDDEN TESTS`) into every
graded check cell. That test runs this file's source into a namespace of its own and
calls `verdict(...)`, which decides the exercise's points without trusting anything an
answer cell could have changed:

- it loads a fresh, private copy of `attention_helpers.checks` from the assignment's
  own folder (nbgrader puts the course's copy back before it grades), never the one
  in `sys.modules`, so `ah.checks.grading(False)`, ATTENTION_GRADING, or checkers
  replaced or wrapped in the kernel change nothing;
- it asserts on the structured result (`Check.ok`, of the private `Check` class);
- for an answer that is a function, it calls the function again on inputs the
  student never saw (the checker's own inputs, with every float array redrawn by
  a seeded generator) and compares it with the reference solution, which is in
  the hidden test and never released;
- a helper the exercise forbids ("without `ah.padding_mask`") fails the exercise if
  the function names it or calls it: while the check and the re-check run, the helper's
  function itself refuses (its code is swapped), in every module of the student's
  `attention_helpers`, so every way of reaching it refuses too (an alias, the module that
  defines it, getattr with a built name, a module's __dict__, a functools.partial or a
  default argument bound before the check); and the private copy is out of sys.modules
  once loaded, so an answer that searches sys.modules for a copy that works finds none.

This runs inside the student's kernel, so it cannot stop code that rewrites NumPy or
Python itself, the student's `attention_helpers` before the check, or a copy of the
helper's code that the answer carries or loads itself (its source pasted, its file loaded
again with importlib); it stops every shortcut that goes through the course's own helper.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import functools
import importlib
import sys
import types
import uuid
import zlib
from pathlib import Path

import numpy as np

TRIALS = 3  # recorded calls re-checked
REDRAWS = 4  # new inputs per recorded call
MATH_MODULES = ("core", "examples", "backward", "kv_designs")  # not plots or widgets


def unpack(packed: str) -> str:
    """A reference solution packed by make_nbgrader_course.pack."""
    return zlib.decompress(base64.b64decode(packed)).decode()


def fresh_package(folder: Path) -> types.ModuleType:
    """`attention_helpers` from `folder`, imported anew under a private name (its checks,
    core and examples; not its plots or widgets), and taken out of sys.modules again."""
    name = f"_graded_attention_helpers_{uuid.uuid4().hex}"
    package = types.ModuleType(name)
    package.__path__ = [str(folder)]
    package.__package__ = name
    sys.modules[name] = package  # the relative imports inside need it there, while they run
    try:
        package.checks = importlib.import_module(f"{name}.checks")
        maths = [importlib.import_module(f"{name}.{module}") for module in MATH_MODULES
                 if (folder / f"{module}.py").exists()]
    finally:  # an answer that searches sys.modules for a copy of a forbidden helper finds none
        for loaded in [key for key in sys.modules if key == name or key.startswith(f"{name}.")]:
            del sys.modules[loaded]

    def math_name(attribute):  # ah.softmax and the like, for the reference solutions
        for module in maths:
            found = getattr(module, attribute, None)
            if found is not None:
                return found
        raise AttributeError(f"the graded copy of attention_helpers has no {attribute}")

    package.__getattr__ = math_name
    return package


def _code_names(code) -> set[str]:
    names = set(code.co_names)  # globals and attributes the code reads, not its own variables
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def _uses(fn, helper: str, depth: int = 2) -> bool:
    """True if `fn` names `helper` (ah.padding_mask, padding_mask) or reaches the helper's function
    through another name: a global, a closure variable, or a function of its own that does."""
    code = fn.__code__
    if helper in _code_names(code):
        return True
    values = [fn.__globals__.get(name) for name in _code_names(code)]
    values += [cell.cell_contents for cell in (fn.__closure__ or ()) if _filled(cell)]
    for value in values:
        if getattr(value, "__name__", None) == helper and str(getattr(value, "__module__", "")).startswith(
                "attention_helpers"):
            return True
        if depth and isinstance(value, types.FunctionType) and _uses(value, helper, depth - 1):
            return True
    return False


def _filled(cell) -> bool:
    try:
        cell.cell_contents  # noqa: B018 (reading it is the test)
    except ValueError:  # a closure variable not bound yet
        return False
    return True


def _recorder(fn):
    """The student's function, remembering the arguments of each call in `.calls`."""
    @functools.wraps(fn)
    def recorded(*args):
        recorded.calls.append(copy.deepcopy(args))
        return fn(*args)
    recorded.calls, recorded.fn = [], fn
    return recorded


def _has_floats(value) -> bool:
    if isinstance(value, np.ndarray):
        return value.dtype.kind == "f" and value.size > 0
    if isinstance(value, dict):
        return any(_has_floats(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_floats(v) for v in value)
    return False


def _redraw(value, rng, ints: bool):
    """`value` with every float array (inside lists, tuples and dicts too) replaced by one of the
    same shape and new values; with `ints`, whole numbers redrawn too (for functions of numbers only)."""
    if isinstance(value, np.ndarray) and value.dtype.kind == "f" and value.size:
        scale = max(1.0, float(np.abs(value).max()) / 2)
        return rng.normal(0.0, scale, size=value.shape).astype(value.dtype)
    if isinstance(value, np.ndarray) and value.dtype.kind in "iu" and value.size and ints:
        return rng.integers(0, max(2, 2 * int(value.max()) + 1), size=value.shape).astype(value.dtype)
    if isinstance(value, int) and not isinstance(value, bool) and ints:
        low = 1 if value >= 1 else 0
        return int(rng.integers(low, max(low + 1, 2 * value + 1)))
    if isinstance(value, dict):
        return {k: _redraw(v, rng, ints) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_redraw(v, rng, ints) for v in value)
    return copy.deepcopy(value)


def _same(a, b) -> bool:
    if isinstance(b, (tuple, list)):
        return isinstance(a, (tuple, list)) and len(a) == len(b) and all(map(_same, a, b))
    try:
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    except (TypeError, ValueError):
        return False
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=1e-6, atol=1e-8, equal_nan=True))


def _fail(text: str):
    raise AssertionError(text)


def verdict(namespace: dict, folder, call: str, answers, reference: str = "", forbidden=(),
            seed: int = 0) -> None:
    """Raise AssertionError (with the hint) unless the exercise checked by `call` is right.

    namespace: the notebook's globals; folder: the assignment's folder; call: the check
    cell's expression, e.g. "ah.checks.check_softmax(my_softmax)"; answers: the names the
    student's answer binds; reference: the reference solution, packed by `pack`; forbidden:
    names of helpers the exercise forbids ("padding_mask").
    """
    __tracebackhide__ = True
    package = fresh_package(Path(folder) / "attention_helpers")
    checks = package.checks
    scope = dict(namespace)
    scope["ah"] = package
    recorders = {}
    for name in answers:
        value = namespace.get(name)
        if isinstance(value, types.FunctionType):
            for helper in forbidden:
                if _uses(value, helper):
                    _fail(f"❌ Not yet: {name} uses {helper}, which this exercise asks you to do without.")
            recorders[name] = scope[name] = _recorder(value)
    with _refused(forbidden):  # the re-check too: an answer memorised for the check may call it after
        result = eval(call, scope)  # noqa: S307 (the course's own locked cell)
        if not isinstance(result, checks.Check):
            _fail("❌ Not yet: the check returned no result of the course's own checker.")
        if not result.ok:
            _fail(result.text)
        if recorders and reference:
            _recheck(recorders, reference, package, np.random.default_rng(seed))


def _helper_modules() -> list[types.ModuleType]:
    """Every module of the student's `attention_helpers` loaded in this kernel."""
    return [module for name, module in list(sys.modules.items())
            if module is not None and (name == "attention_helpers" or name.startswith("attention_helpers."))]


@contextlib.contextmanager
def _refused(forbidden):
    """Each forbidden helper refuses while this runs, however the answer reaches it.

    Not the modules' names are replaced but the code of the helper's function itself, found in
    every module of the student's `attention_helpers` (the package, the module that defines
    it, any other that imported it): a name, an alias, getattr, a module's __dict__, and a
    partial or default argument that holds the function since before the check all reach it."""
    helpers = {}
    for helper in forbidden:
        for module in _helper_modules():
            fn = getattr(module, helper, None)
            if isinstance(fn, types.FunctionType) and str(fn.__module__).startswith("attention_helpers"):
                helpers[id(fn)] = (fn, fn.__code__, _refusal(helper))  # each function once: its own code
    try:
        for fn, _, refusal in helpers.values():
            fn.__code__ = refusal
        yield
    finally:
        for fn, code, _ in helpers.values():
            fn.__code__ = code


def _refusal(helper: str) -> types.CodeType:
    """Code for the helper's function that raises instead (with no free variables, as the
    helper, a module-level function, has none)."""
    namespace = {}
    exec(f"def {helper}(*args, **kwargs):\n"  # noqa: S102 (a fixed one-line function)
         f"    raise PermissionError({f'ah.{helper} is not allowed in this exercise'!r})", namespace)
    return namespace[helper].__code__


def _recheck(recorders, reference, package, rng):
    """Each function again, on new inputs shaped like those the check used, against the reference.

    An input the reference cannot take, or the student's function refuses, is skipped (a
    function may check its inputs); but a function that refuses every new input fails."""
    solution = {"np": np, "ah": package, "__builtins__": __builtins__}
    exec(unpack(reference), solution)  # noqa: S102 (the hidden test's reference solution)
    for name, recorder in recorders.items():
        expected_fn = solution.get(name)
        if not callable(expected_fn):
            continue
        tried = compared = 0
        for args in recorder.calls[:TRIALS]:
            ints = not _has_floats(args)
            for _ in range(REDRAWS):
                new = _redraw(args, rng, ints)
                if repr(new) == repr(args):
                    continue
                try:
                    expected = expected_fn(*copy.deepcopy(new))
                except Exception:  # the new input breaks an assumption of the exercise
                    continue
                tried += 1
                try:
                    got = recorder.fn(*copy.deepcopy(new))
                except Exception:  # the student's function may refuse an input it finds invalid
                    continue
                compared += 1
                if not _same(got, expected):
                    _fail(f"❌ Not yet: {name} passed the visible check but gives a different answer "
                          "on other inputs of the same shapes.")
        if tried and not compared:
            _fail(f"❌ Not yet: {name} raised an error on every input the check had not shown.")
