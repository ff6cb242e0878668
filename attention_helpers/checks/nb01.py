"""Checkers for notebook 01, the Q, K, V projections."""

from __future__ import annotations

import numpy as np

from ._base import Check, call, checker, compare, right, wrong


def _qkv_mistakes(name, W_name, X, Ws):
    """{key: (hint, wrong array)} for the usual ways of getting one projection wrong."""
    W = Ws[W_name]
    mistakes = {}
    if W.shape[1] == X.shape[1]:
        mistakes[f"{W_name}_transposed"] = (
            f"{name} = X @ {W_name}.T: use {W_name} as it is stored, [d_model, columns], "
            f"without .T, so that {name} = X @ {W_name}.", X @ W.T)
    if W.shape[1] == X.shape[0]:
        mistakes[f"{W_name}_first"] = (
            f"{name} = {W_name} @ X: the order of the factors matters. X comes first, "
            f"so each token row of X meets the columns of {W_name}: {name} = X @ {W_name}.", W @ X)
    if W.shape == X.shape:
        mistakes[f"{name}_elementwise"] = (
            f"{name} was multiplied entry by entry (*); a projection is a matrix product: "
            f"{name} = X @ {W_name}.", X * W)
    for other, W_other in Ws.items():
        if other == W_name:
            continue
        if {name, other} == {"Q", "W_K"} or {name, other} == {"K", "W_Q"}:
            mistakes["Q_K_swapped"] = ("Q and K are swapped: Q comes from W_Q and K from W_K.", X @ W_other)
        else:
            mistakes[f"{name}_from_{other}"] = (
                f"{name} was computed with {other}; {name} needs its own matrix: {name} = X @ {W_name}.",
                X @ W_other)
    return mistakes


def _check_qkv_output(out, X, Ws) -> Check:
    if out is None:
        return wrong("your function returned None: compute Q, K and V, then `return Q, K, V`.", kind="empty")
    if not isinstance(out, (tuple, list)) or len(out) != 3:
        return wrong(f"return the three matrices as a tuple, `return Q, K, V`; got {type(out).__name__}"
                     + (f" of length {len(out)}." if isinstance(out, (tuple, list)) else "."),
                     kind="wrong_type")
    for name, W_name, got in zip("QKV", Ws, out, strict=True):
        check = compare(got, X @ Ws[W_name], name=name, mistakes=_qkv_mistakes(name, W_name, X, Ws))
        if not check:
            return check
    return right("")


@checker
def check_qkv(fn) -> Check:
    """Check a learner's `fn(X, W_Q, W_K, W_V) -> (Q, K, V)`.

    A square case comes first: there every wrong order of the factors still
    runs, so its numbers name the mistake. A case with d_model=4, d_k=2,
    d_v=3 follows, to check the shapes.
    """
    rng = np.random.default_rng(1)
    square = (3, 3), {"W_Q": (3, 3), "W_K": (3, 3), "W_V": (3, 3)}
    rectangular = (3, 4), {"W_Q": (4, 2), "W_K": (4, 2), "W_V": (4, 3)}  # d_model, d_k, d_v all differ
    for x_shape, w_shapes in (square, rectangular):
        X = rng.normal(size=x_shape)
        Ws = {name: rng.normal(size=shape) for name, shape in w_shapes.items()}
        out, err = call(fn, X.copy(), *(W.copy() for W in Ws.values()))
        if err is not None:
            return err
        check = _check_qkv_output(out, X, Ws)
        if not check:
            return check
    return right("Q = X·W_Q, K = X·W_K, V = X·W_V. With X (3, 4), W_Q and W_K (4, 2) and "
                 "W_V (4, 3) you get Q (3, 2), K (3, 2) and V (3, 3).")


@checker
def check_qkv_shapes(shapes, *, n, d_model, d_k, d_v) -> Check:
    """Check a dict {"W_Q": (rows, cols), ..., "V": (rows, cols)} of predicted shapes."""
    expected = {
        "W_Q": (d_model, d_k), "W_K": (d_model, d_k), "W_V": (d_model, d_v),
        "Q": (n, d_k), "K": (n, d_k), "V": (n, d_v),
    }
    if shapes is None:
        return wrong("shapes is still empty (None): fill in the dict above and run it again.", kind="empty")
    if not isinstance(shapes, dict):
        return wrong(f"shapes should be a dict such as {{'W_Q': (rows, columns), ...}}, "
                     f"got {type(shapes).__name__}.", kind="wrong_type")
    for name, exp in expected.items():
        if name not in shapes:
            return wrong(f"shapes has no entry {name!r}; it needs all of {list(expected)}.",
                         kind="wrong_type")
        got = shapes[name]
        if got is not None and (np.ndim(got) != 1 or len(got) != 2):
            return wrong(f"the shape of {name} is two numbers, (rows, columns); got {got!r}.",
                         kind="wrong_shape")
        width = "d_v" if name.endswith("V") else "d_k"
        if name.startswith("W"):
            mistakes = {
                "W_transposed_shape": (
                    f"{name} is [d_model, {width}]: its rows match the d_model columns of X, and its "
                    f"columns are the new size {width}. You have them the other way round.",
                    exp[::-1]),
                "W_wrong_width": (
                    f"{name} has {width} columns: only W_V uses d_v; queries and keys share d_k.",
                    (d_model, d_v if width == "d_k" else d_k)),
            }
        else:
            mistakes = {
                "width_unchanged": (
                    f"{name} keeps one row per token (n), but its width changes from d_model to {width}.",
                    (n, d_model)),
                "transposed_shape": (
                    f"{name} is [n, {width}]: rows are tokens, columns the {width} dimensions. "
                    "You have them the other way round.",
                    exp[::-1]),
                "rows_d_model": (
                    f"{name} has one row per token: n rows, not d_model.",
                    (d_model, exp[1])),
                "wrong_width": (
                    f"{name} has {width} columns: only V is d_v wide; queries and keys share d_k.",
                    (n, d_v if width == "d_k" else d_k)),
            }
        check = compare(got, exp, name=f"the shape of {name}", mistakes=mistakes)
        if check.kind == "wrong_value":
            return wrong(f"the shape of {name} is not {tuple(got)}. Which size do its rows carry "
                         "(n or d_model), and which its columns (d_model, d_k or d_v)?")
        if not check:
            return check
    listing = ", ".join(f"{name} {exp}" for name, exp in expected.items())
    return right(listing + ".")


@checker
def check_key_entry(answer, X, W_K, *, row, col) -> Check:
    """Check one entry K[row, col] of K = X·W_K, computed by hand."""
    X = np.asarray(X, dtype=float)
    W_K = np.asarray(W_K, dtype=float)
    K = X @ W_K
    name = f"K[{row}, {col}]"
    expected = K[row, col]
    mistakes = {
        "products_not_summed": (
            f"these are the {X.shape[1]} products; add them up (a dot product is a sum of products).",
            X[row] * W_K[:, col]),
    }
    if col < K.shape[0] and row < K.shape[1]:
        mistakes["row_col_swapped"] = (
            f"you computed K[{col}, {row}]: row and column are swapped. {name} is row {row} of X "
            f"(one token) dotted with column {col} of W_K.", K[col, row])
    if row >= 1 and col >= 1:
        mistakes["counted_from_1"] = (
            f"you computed K[{row - 1}, {col - 1}]: indices count from 0, so row {row} is the "
            f"token in position {row + 1} and column {col} is the column in position {col + 1}.",
            K[row - 1, col - 1])
    check = compare(answer, expected, name=name, mistakes=mistakes)
    if check.kind == "wrong_value":
        got = float(np.asarray(answer, dtype=float))
        return wrong(f"{name} is not {got:.4g}. It is the dot product of row {row} of X with column "
                     f"{col} of W_K: check each of the {X.shape[1]} products and their sum.")
    if not check:
        return check
    return right(f"{name} = row {row} of X · column {col} of W_K = {expected:.4g}.")
