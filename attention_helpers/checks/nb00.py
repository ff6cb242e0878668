"""Checkers for notebook 00, the input matrix X."""

from __future__ import annotations

import numpy as np

from .. import core, examples
from ._base import Check, call, checker, compare, raised, right, shape_answer, wrong

# A small embedding table (d_model = 3) and a sentence the notebook never shows,
# with a repeated word, so that a learner's build_X cannot be hard-coded.
_NB00_TABLE = {
    "a":   [0.5, 0.5, 0.0],
    "dog": [0.9, 0.1, 0.4],
    "saw": [0.2, 0.8, 0.3],
    "the": [0.1, 0.3, 0.7],
    "cat": [0.6, 0.0, 0.2],
    "on":  [0.0, 0.4, 0.1],
    "mat": [0.3, 0.2, 0.9],
}
_NB00_SENTENCE = ["the", "dog", "saw", "the", "cat"]


@checker
def check_build_X(fn) -> Check:
    """Check a learner's `fn(sentence, table) -> X`: one row per token, in sentence order."""
    table = {token: np.array(row) for token, row in _NB00_TABLE.items()}
    sentence = list(_NB00_SENTENCE)
    out, err = call(fn, list(sentence), {t: r.copy() for t, r in table.items()})
    if err is not None:
        return err
    rows = [table[t] for t in sentence]
    expected = np.stack(rows)
    unique = list(dict.fromkeys(sentence))
    return compare(out, expected, name="build_X(sentence, table)", mistakes={
        "columns_not_rows": (
            "you stacked the embeddings as columns (shape (d_model, n_tokens)); X needs one ROW per "
            "token: np.stack(rows) or np.array(rows), without a transpose.",
            expected.T),
        "one_long_vector": (
            "you joined the vectors end to end into one long 1-D vector (np.concatenate/np.hstack); "
            "X is 2-D: stack them as rows with np.stack(rows).",
            np.concatenate(rows)),
        "whole_table": (
            "you stacked the whole embedding table; X has one row per token of the SENTENCE: loop "
            "over the sentence and look each token up in the table.",
            np.stack(list(table.values()))),
        "reversed_rows": (
            "the rows are in reverse order: row i must be the embedding of the i-th token.",
            expected[::-1]),
        "sorted_rows": (
            "the rows are sorted alphabetically; keep the order of the sentence, because row i is "
            "token i.",
            np.stack([table[t] for t in sorted(sentence)])),
        "repeat_dropped": (
            "the repeated word appears only once: X needs one row per token, repeats included "
            "(do not use set() or a dict of the sentence's words).",
            np.stack([table[t] for t in unique])),
        "repeat_dropped_and_sorted": (
            "the repeated word appears only once and the rows are sorted: X needs one row per token, "
            "repeats included, in sentence order.",
            np.stack([table[t] for t in sorted(unique)])),
        "last_token_missing": (
            "the last token is missing: loop over all of the sentence (range(len(sentence)), "
            "not len(sentence) - 1).",
            expected[:-1]),
        "first_token_missing": (
            "the first token is missing: row 0 is the embedding of the first token.",
            expected[1:]),
    }, success="one row per token, in sentence order, shape (n_tokens, d_model) = (5, 3).")


@checker
def check_add_positions(fn) -> Check:
    """Check a learner's `fn(X) -> X + positional_encoding(n_tokens, d_model)`."""
    X = np.arange(20.0).reshape(5, 4) / 10  # 5 tokens, d_model = 4
    out, err = call(fn, X.copy())
    if err is not None:
        if raised(err, "broadcast"):
            return wrong(
                "P does not have the shape of X: build it with "
                "ah.positional_encoding(n_tokens, d_model), both taken from X.shape "
                f"(rows first); {err.hint}", kind="raised", mistake="P_wrong_shape", error=err.error,
            )
        return err
    n_tokens, d_model = X.shape
    P = core.positional_encoding(n_tokens, d_model)
    return compare(out, X + P, name="add_positions(X)", mistakes={
        "X_unchanged": (
            "you returned X unchanged: add the position code, X + ah.positional_encoding(n_tokens, "
            "d_model).",
            X),
        "P_alone": (
            "you returned P alone: the token embeddings must stay in, so return X + P.",
            P),
        "P_transposed": (
            "you swapped the arguments of ah.positional_encoding and transposed P to make it fit: "
            "call ah.positional_encoding(n_tokens, d_model), rows first; then P already has X's "
            "shape.",
            X + core.positional_encoding(d_model, n_tokens).T),
        "concatenated_beside": (
            "you concatenated P beside X (shape (n_tokens, 2*d_model)); position information is "
            "ADDED entry by entry, X + P, which keeps X's shape.",
            np.concatenate([X, P], axis=1)),
        "stacked_under": (
            "you stacked P under X (shape (2*n_tokens, d_model)); position information is ADDED "
            "entry by entry, X + P, which keeps X's shape.",
            np.concatenate([X, P], axis=0)),
        "subtracted": (
            "you subtracted P; the position code is added: X + P.",
            X - P),
        "multiplied": (
            "you multiplied X by P entry by entry; the position code is added: X + P.",
            X * P),
    }, success="X + P, the same shape as X, with row p shifted by the code of position p.")


@checker
def check_x_shape(answer, n_tokens=None, d_model=None) -> Check:
    """Check a predicted shape of X, (n_tokens, d_model), given as a tuple; by default for the
    sentence and the d_model of GPT-2 small in examples.gpt2_shape_exercise()."""
    tokens, gpt2_d_model = examples.gpt2_shape_exercise()
    n_tokens = len(tokens) if n_tokens is None else n_tokens
    d_model = gpt2_d_model if d_model is None else d_model
    got = shape_answer("shape_X", answer)
    if isinstance(got, Check):
        return got
    if len(got) != 2:
        return wrong(f"X is 2-D, so its shape has two numbers (rows, columns); you gave {got}.",
                     kind="wrong_shape")
    rows, cols = got
    if got == (n_tokens, d_model):
        return right(f"X has shape {got}: one row per token, one column per embedding dimension.")
    if got == (d_model, n_tokens):
        return wrong("rows and columns are swapped: X has one ROW per token and one COLUMN per "
                     "embedding dimension, so the shape is (n_tokens, d_model).", kind="mistake",
                     mistake="swapped")
    if cols == d_model:
        return wrong("the columns are right; count the tokens again (one token per word, "
                     "len(sentence) gives it), and that count is the number of rows.", kind="mistake",
                     mistake="token_count")
    if rows == n_tokens and cols == d_model // 12:
        return wrong("the rows are right, but that is the size of one of GPT-2's 12 attention "
                     "heads (d_model / 12); the columns of X are all d_model embedding numbers.",
                     kind="mistake", mistake="head_size")
    if rows == n_tokens and cols == 4:
        return wrong("the rows are right, but 4 is the toy d_model of this notebook; use the "
                     "d_model of GPT-2 small given in the cell.", kind="mistake",
                     mistake="toy_d_model")
    if rows == n_tokens:
        return wrong("the rows are right; the number of columns is d_model, the length of one "
                     "token's embedding vector.", kind="mistake",
                     mistake="columns")
    return wrong("X has shape (n_tokens, d_model): count the tokens for the rows, and take the "
                 "embedding size for the columns.")
