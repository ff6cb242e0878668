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


def _shape_answer(name, answer):
    """A predicted shape as a tuple of ints, or the Check that says what is wrong with it."""
    if answer is None or answer is Ellipsis:
        return _wrong(f"{name} is still empty (None): fill in the code above and run it again.")
    try:
        return tuple(int(k) for k in answer)
    except (TypeError, ValueError):
        return _wrong(f"write the shape as a tuple of two whole numbers (rows, columns), "
                      f"for example (2, 3); got {answer!r}.")


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


# ---- notebook 00: input matrix ----

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


def check_build_X(fn) -> Check:
    """Check a learner's `fn(sentence, table) -> X`: one row per token, in sentence order."""
    table = {token: np.array(row) for token, row in _NB00_TABLE.items()}
    sentence = list(_NB00_SENTENCE)
    out, err = _call(fn, list(sentence), {t: r.copy() for t, r in table.items()})
    if err is not None:
        return err
    rows = [table[t] for t in sentence]
    expected = np.stack(rows)
    unique = list(dict.fromkeys(sentence))
    return compare(out, expected, name="build_X(sentence, table)", mistakes={
        "you stacked the embeddings as columns (shape (d_model, n_tokens)); X needs one ROW per "
        "token: np.stack(rows) or np.array(rows), without a transpose.": expected.T,
        "you joined the vectors end to end into one long 1-D vector (np.concatenate/np.hstack); "
        "X is 2-D: stack them as rows with np.stack(rows).": np.concatenate(rows),
        "you stacked the whole embedding table; X has one row per token of the SENTENCE: loop "
        "over the sentence and look each token up in the table.": np.stack(list(table.values())),
        "the rows are in reverse order: row i must be the embedding of the i-th token.":
            expected[::-1],
        "the rows are sorted alphabetically; keep the order of the sentence, because row i is "
        "token i.": np.stack([table[t] for t in sorted(sentence)]),
        "the repeated word appears only once: X needs one row per token, repeats included "
        "(do not use set() or a dict of the sentence's words).": np.stack([table[t] for t in unique]),
        "the repeated word appears only once and the rows are sorted: X needs one row per token, "
        "repeats included, in sentence order.": np.stack([table[t] for t in sorted(unique)]),
        "the last token is missing: loop over all of the sentence (range(len(sentence)), "
        "not len(sentence) - 1).": expected[:-1],
        "the first token is missing: row 0 is the embedding of the first token.": expected[1:],
    }, success="one row per token, in sentence order, shape (n_tokens, d_model) = (5, 3).")


def check_add_positions(fn) -> Check:
    """Check a learner's `fn(X) -> X + positional_encoding(n_tokens, d_model)`."""
    X = np.arange(20.0).reshape(5, 4) / 10  # 5 tokens, d_model = 4
    out, err = _call(fn, X.copy())
    if err is not None:
        if "broadcast" in err.message:
            return _wrong(
                "P does not have the shape of X: build it with "
                "ah.positional_encoding(n_tokens, d_model), both taken from X.shape "
                f"(rows first); {err.message.removeprefix('❌ Not yet: ')}"
            )
        return err
    n_tokens, d_model = X.shape
    P = core.positional_encoding(n_tokens, d_model)
    return compare(out, X + P, name="add_positions(X)", mistakes={
        "you returned X unchanged: add the position code, X + ah.positional_encoding(n_tokens, "
        "d_model).": X,
        "you returned P alone: the token embeddings must stay in, so return X + P.": P,
        "you swapped the arguments of ah.positional_encoding and transposed P to make it fit: "
        "call ah.positional_encoding(n_tokens, d_model), rows first; then P already has X's "
        "shape.": X + core.positional_encoding(d_model, n_tokens).T,
        "you concatenated P beside X (shape (n_tokens, 2*d_model)); position information is "
        "ADDED entry by entry, X + P, which keeps X's shape.": np.concatenate([X, P], axis=1),
        "you stacked P under X (shape (2*n_tokens, d_model)); position information is ADDED "
        "entry by entry, X + P, which keeps X's shape.": np.concatenate([X, P], axis=0),
        "you subtracted P; the position code is added: X + P.": X - P,
        "you multiplied X by P entry by entry; the position code is added: X + P.": X * P,
    }, success="X + P, the same shape as X, with row p shifted by the code of position p.")


def check_x_shape(answer, n_tokens=10, d_model=768) -> Check:
    """Check a predicted shape of X, (n_tokens, d_model), given as a tuple."""
    got = _shape_answer("shape_X", answer)
    if isinstance(got, Check):
        return got
    if len(got) != 2:
        return _wrong(f"X is 2-D, so its shape has two numbers (rows, columns); you gave {got}.")
    rows, cols = got
    if got == (n_tokens, d_model):
        return _right(f"X has shape {got}: one row per token, one column per embedding dimension.")
    if got == (d_model, n_tokens):
        return _wrong("rows and columns are swapped: X has one ROW per token and one COLUMN per "
                      "embedding dimension, so the shape is (n_tokens, d_model).")
    if cols == d_model:
        return _wrong("the columns are right; count the tokens again (one token per word, "
                      "len(sentence) gives it), and that count is the number of rows.")
    if rows == n_tokens and cols == d_model // 12:
        return _wrong("the rows are right, but that is the size of one of GPT-2's 12 attention "
                      "heads (d_model / 12); the columns of X are all d_model embedding numbers.")
    if rows == n_tokens and cols == 4:
        return _wrong("the rows are right, but 4 is the toy d_model of this notebook; use the "
                      "d_model of GPT-2 small given in the cell.")
    if rows == n_tokens:
        return _wrong("the rows are right; the number of columns is d_model, the length of one "
                      "token's embedding vector.")
    return _wrong("X has shape (n_tokens, d_model): count the tokens for the rows, and take the "
                  "embedding size for the columns.")


# ---- notebook 01: Q, K, V projections ----

def _qkv_mistakes(name, W_name, X, Ws):
    """{hint: wrong array} for the usual ways of getting one projection wrong."""
    W = Ws[W_name]
    mistakes = {}
    if W.shape[1] == X.shape[1]:
        mistakes[f"{name} = X @ {W_name}.T: use {W_name} as it is stored, [d_model, columns], "
                 f"without .T, so that {name} = X @ {W_name}."] = X @ W.T
    if W.shape[1] == X.shape[0]:
        mistakes[f"{name} = {W_name} @ X: the order of the factors matters. X comes first, "
                 f"so each token row of X meets the columns of {W_name}: {name} = X @ {W_name}."] = W @ X
    if W.shape == X.shape:
        mistakes[f"{name} was multiplied entry by entry (*); a projection is a matrix product: "
                 f"{name} = X @ {W_name}."] = X * W
    for other, W_other in Ws.items():
        if other == W_name:
            continue
        if {name, other} == {"Q", "W_K"} or {name, other} == {"K", "W_Q"}:
            hint = "Q and K are swapped: Q comes from W_Q and K from W_K."
        else:
            hint = f"{name} was computed with {other}; {name} needs its own matrix: {name} = X @ {W_name}."
        mistakes[hint] = X @ W_other
    return mistakes


def _check_qkv_output(out, X, Ws) -> Check:
    if out is None:
        return _wrong("your function returned None: compute Q, K and V, then `return Q, K, V`.")
    if not isinstance(out, (tuple, list)) or len(out) != 3:
        return _wrong(f"return the three matrices as a tuple, `return Q, K, V`; got {type(out).__name__}"
                      + (f" of length {len(out)}." if isinstance(out, (tuple, list)) else "."))
    for name, W_name, got in zip("QKV", Ws, out, strict=True):
        check = compare(got, X @ Ws[W_name], name=name, mistakes=_qkv_mistakes(name, W_name, X, Ws))
        if not check:
            return check
    return _right("")


def check_qkv(fn) -> Check:
    """Check a learner's `fn(X, W_Q, W_K, W_V) -> (Q, K, V)`.

    A square case comes first: there every wrong order of the factors still
    runs, so its numbers name the mistake. A case with d_model=4, d_k=2,
    d_v=3 follows, to check the shapes.
    """
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3, 3))
    Ws = {name: rng.normal(size=(3, 3)) for name in ("W_Q", "W_K", "W_V")}
    out, err = _call(fn, X.copy(), *(W.copy() for W in Ws.values()))
    if err is not None:
        return err
    check = _check_qkv_output(out, X, Ws)
    if not check:
        return check
    X = rng.normal(size=(3, 4))
    Ws = {"W_Q": rng.normal(size=(4, 2)), "W_K": rng.normal(size=(4, 2)), "W_V": rng.normal(size=(4, 3))}
    out, err = _call(fn, X.copy(), *(W.copy() for W in Ws.values()))
    if err is not None:
        return err
    check = _check_qkv_output(out, X, Ws)
    if not check:
        return check
    return _right("Q = X·W_Q, K = X·W_K, V = X·W_V. With X (3, 4), W_Q and W_K (4, 2) and "
                  "W_V (4, 3) you get Q (3, 2), K (3, 2) and V (3, 3).")


def check_qkv_shapes(shapes, *, n, d_model, d_k, d_v) -> Check:
    """Check a dict {"W_Q": (rows, cols), ..., "V": (rows, cols)} of predicted shapes."""
    expected = {
        "W_Q": (d_model, d_k), "W_K": (d_model, d_k), "W_V": (d_model, d_v),
        "Q": (n, d_k), "K": (n, d_k), "V": (n, d_v),
    }
    if shapes is None:
        return _wrong("shapes is still empty (None): fill in the dict above and run it again.")
    if not isinstance(shapes, dict):
        return _wrong(f"shapes should be a dict such as {{'W_Q': (rows, columns), ...}}, "
                      f"got {type(shapes).__name__}.")
    for name, exp in expected.items():
        if name not in shapes:
            return _wrong(f"shapes has no entry {name!r}; it needs all of {list(expected)}.")
        got = shapes[name]
        if got is not None and (np.ndim(got) != 1 or len(got) != 2):
            return _wrong(f"the shape of {name} is two numbers, (rows, columns); got {got!r}.")
        width = "d_v" if name.endswith("V") else "d_k"
        if name.startswith("W"):
            mistakes = {
                f"{name} is [d_model, {width}]: its rows match the d_model columns of X, and its "
                f"columns are the new size {width}. You have them the other way round.":
                    exp[::-1],
                f"{name} has {width} columns: only W_V uses d_v; queries and keys share d_k.":
                    (d_model, d_v if width == "d_k" else d_k),
            }
        else:
            mistakes = {
                f"{name} keeps one row per token (n), but its width changes from d_model to {width}.":
                    (n, d_model),
                f"{name} is [n, {width}]: rows are tokens, columns the {width} dimensions. "
                "You have them the other way round.": exp[::-1],
                f"{name} has one row per token: n rows, not d_model.": (d_model, exp[1]),
                f"{name} has {width} columns: only V is d_v wide; queries and keys share d_k.":
                    (n, d_v if width == "d_k" else d_k),
            }
        check = compare(got, exp, name=f"the shape of {name}", mistakes=mistakes)
        if not check and "differs at index" in check.message:
            return _wrong(f"the shape of {name} is not {tuple(got)}. Which size do its rows carry "
                          "(n or d_model), and which its columns (d_model, d_k or d_v)?")
        if not check:
            return check
    listing = ", ".join(f"{name} {exp}" for name, exp in expected.items())
    return _right(listing + ".")


def check_key_entry(answer, X, W_K, *, row, col) -> Check:
    """Check one entry K[row, col] of K = X·W_K, computed by hand."""
    X = np.asarray(X, dtype=float)
    W_K = np.asarray(W_K, dtype=float)
    K = X @ W_K
    name = f"K[{row}, {col}]"
    expected = K[row, col]
    mistakes = {
        f"these are the {X.shape[1]} products; add them up (a dot product is a sum of products).":
            X[row] * W_K[:, col],
    }
    if col < K.shape[0] and row < K.shape[1]:
        mistakes[f"you computed K[{col}, {row}]: row and column are swapped. {name} is row {row} of X "
                 f"(one token) dotted with column {col} of W_K."] = K[col, row]
    if row >= 1 and col >= 1:
        mistakes[f"you computed K[{row - 1}, {col - 1}]: indices count from 0, so row {row} is the "
                 f"token in position {row + 1} and column {col} is the column in position "
                 f"{col + 1}."] = K[row - 1, col - 1]
    check = compare(answer, expected, name=name, mistakes=mistakes)
    if not check and "differs at index" in check.message:
        got = float(np.asarray(answer, dtype=float))
        return _wrong(f"{name} is not {got:.4g}. It is the dot product of row {row} of X with column "
                      f"{col} of W_K: check each of the {X.shape[1]} products and their sum.")
    if not check:
        return check
    return _right(f"{name} = row {row} of X · column {col} of W_K = {expected:.4g}.")


# ---- notebook 02: dot-product scores ----

# "cat eats fish" (rows cat, eats, fish), the sheared W_Q of the notebook's Step 7 and the
# W_K of its Exercise 1; checks may import only numpy and core, so the numbers are repeated here.
_NB02_TOKENS = ["cat", "eats", "fish"]
_NB02_X = np.array([[1.0, 2.0], [3.0, 1.0], [2.0, 4.0]])
_NB02_W_Q2 = np.array([[1.0, 1.0], [0.0, 1.0]])
_NB02_W_K_EX = np.array([[1.0, 0.0], [1.0, 1.0]])


def check_eats_fish_score(answer) -> Check:
    """Check q_eats · k_fish with Q2 = X·W_Q2 and K_ex = X·W_K_ex (notebook 02), computed by hand."""
    X = _NB02_X
    Q2, K2, K_ex = X @ _NB02_W_Q2, X, X @ _NB02_W_K_EX  # K2: the identity W_K of Step 7
    q_eats, k_fish = Q2[1], K_ex[2]
    expected = q_eats @ k_fish
    if answer is not None:
        try:
            got = np.asarray(answer, dtype=float)
            if got.size == 1:
                answer = got.reshape(())  # accept 34, 34.0, np.float64 or [34]
        except (TypeError, ValueError):
            pass
    S = Q2 @ K_ex.T
    mistakes = {
        "that is fish's query against eats' key (S[2, 1]): the pair is reversed. These weights "
        "do not give a symmetric grid, so take the query from the eats row of Q2 and the key from "
        "the fish row of K_ex.": S[2, 1],
        "you used the fish row of K2 from Step 7 (identity W_K); this exercise's keys are the rows "
        "of K_ex.": q_eats @ K2[2],
        "that is x_eats · x_fish, the score with identity weights: take the query from Q2 and the "
        "key from K_ex.": X[1] @ X[2],
        "these are the two products of a dot product; add them up to get one score.": q_eats * k_fish,
        "you added the two vectors; a dot product multiplies matching entries and then adds the "
        "products.": q_eats + k_fish,
    }
    for (i, j), value in np.ndenumerate(S):
        if (i, j) not in ((1, 2), (2, 1)):
            mistakes.setdefault(
                f"that is q_{_NB02_TOKENS[i]} · k_{_NB02_TOKENS[j]}: the query is eats (row 1 of "
                f"Q2) and the key is fish (row 2 of K_ex).", value)
    check = compare(answer, expected, name="score_eats_fish", mistakes=mistakes)
    if not check and "differs at index" in check.message:
        return _wrong(f"score_eats_fish is not {float(answer):.4g}. Multiply the eats row of Q2 and "
                      "the fish row of K_ex entry by entry, then add the two products.")
    if not check and "has shape" in check.message:
        return _wrong("a score is a single number: multiply the entries of q_eats and k_fish pairwise "
                      "and add the products.")
    if not check:
        return check
    return _right(f"q_eats · k_fish = {q_eats[0]:g}×{k_fish[0]:g} + {q_eats[1]:g}×{k_fish[1]:g} "
                  f"= {expected:g}, while fish asking about eats scores {S[2, 1]:g}: order matters.")


def check_scores(fn) -> Check:
    """Check a learner's `fn(Q, K)` that returns the raw score matrix Q·Kᵀ."""
    rng = np.random.default_rng(2)
    Q, K = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    out, err = _call(fn, Q.copy(), K.copy())
    if err is not None:
        if "broadcast" in err.message:
            return _wrong("your function raised a broadcasting error: `*` multiplies entry by entry "
                          "and needs matching shapes. A score sums products over d_k, which is what "
                          f"the matrix product `@` does. ({err.message[len('❌ Not yet: '):]})")
        if "matmul" in err.message or "not aligned" in err.message:
            return _wrong("Q @ K cannot be formed: Q is (3, 4) and K is (3, 4), and a matrix product "
                          "needs the inner sizes to agree. Did you forget to transpose K? Kᵀ is "
                          f"(4, 3), so Q @ Kᵀ is (3, 3). ({err.message[len('❌ Not yet: '):]})")
        return err
    expected = Q @ K.T
    return compare(out, expected, name="my_scores(Q, K)", mistakes={
        "you returned K @ Q.T, the transpose of the scores: its row i is key i against every query. "
        "Queries go first, so that rows are queries and columns are keys.": K @ Q.T,
        "Q.T @ K has shape (d_k, d_k) = (4, 4): it pairs embedding dimensions, not tokens. Transpose "
        "K, not Q.": Q.T @ K,
        "K.T @ Q has shape (d_k, d_k) = (4, 4): it pairs embedding dimensions, not tokens. Put Q "
        "first and transpose K.": K.T @ Q,
        "Q * K multiplies entry by entry and keeps shape (3, 4); a score adds the products over the "
        "d_k dimensions, which is what the matrix product `@` does.": Q * K,
        "that is only the diagonal q_i · k_i, one number per token: every query must meet every "
        "key, giving an (n, n) grid.": (Q * K).sum(axis=1),
        "you divided by √d_k: that scaling is the next notebook's step. Return the raw scores.":
            expected / np.sqrt(Q.shape[1]),
    }, success="my_scores(Q, K) = Q @ K.T: entry (i, j) is query i against key j, shape (3, 3).")


def check_scores_shape(answer, n=5, d_k=8) -> Check:
    """Check the predicted shape of Q·Kᵀ for n tokens with Q and K of shape [n, d_k]."""
    got = _shape_answer("shape_for_5_tokens", answer)
    if isinstance(got, Check):
        return got
    hints = {
        (n, d_k): f"({n}, {d_k}) is the shape of Q (and of K) itself: one row per token, one column "
                  "per dimension. QKᵀ compares tokens with tokens.",
        (d_k, d_k): f"({d_k}, {d_k}) would be QᵀK, which pairs dimensions with dimensions. In QKᵀ the "
                    "d_k dimension is summed away.",
        (d_k, n): f"({d_k}, {n}) is the shape of Kᵀ; multiplying Q by it sums over d_k and leaves "
                  "one row per query.",
        (n,): "one number per token is only the diagonal; QKᵀ scores every query against every key.",
    }
    if got in hints:
        return _wrong(hints[got])
    if got != (n, n):
        return _wrong(f"{got} is not it: QKᵀ has one row per query and one column per key.")
    return _right(f"({n}, {n}): [{n}, {d_k}] @ [{d_k}, {n}] → [{n}, {n}], one score per (query, key) pair.")


# ---- notebook 03: scaling by sqrt(d_k) ----

def check_dot_variance(answer, d_k=128) -> Check:
    """Check a predicted Var(q·k) for q, k with d_k independent entries of mean 0 and variance 1."""
    if answer is None or answer is Ellipsis:
        return _wrong("my_variance is still empty (None): fill in the code above and run it again.")
    if isinstance(answer, (str, bytes)):
        return _wrong(f"write Var(q·k) as a number without quotes (got the text {answer!r}).")
    try:
        value = np.asarray(answer, dtype=float)
    except (TypeError, ValueError):
        return _wrong(f"Var(q·k) should be one number, got {type(answer).__name__}.")
    if value.shape != ():
        return _wrong(f"Var(q·k) should be one number, got an array of shape {value.shape}.")
    name = f"Var(q·k) for d_k = {d_k}"
    mistakes = {
        f"√d_k = {np.sqrt(d_k):.4g} is the standard deviation of q·k (the typical size of a score); "
        "the variance is its square.": np.sqrt(d_k),
        "1 is the variance of a single product q_i·k_i, or of the score after dividing by √d_k; "
        "the raw q·k adds d_k such products, and variances of independent terms add.": 1.0,
        "d_k² would need all the products to move together; they are independent, so their "
        "variances simply add up: d_k × 1.": float(d_k) ** 2,
        "0 is the mean of q·k (positive and negative products cancel on average); the variance "
        "measures the spread around that mean.": 0.0,
    }
    check = compare(value, float(d_k), name=name, mistakes=mistakes, rtol=2e-3,
                    success=f"Var(q·k) = d_k = {d_k}: a sum of {d_k} independent products, each "
                            f"of variance 1. A typical raw score is ±√{d_k} ≈ {np.sqrt(d_k):.1f}.")
    if check or not np.isfinite(value) or any(np.isclose(value, w, rtol=2e-3) for w in mistakes.values()):
        return check
    if value < 0:
        return _wrong(f"{name} cannot be negative: a variance is an average of squares.")
    if abs(value - d_k) <= 0.1 * d_k:
        return _wrong(f"{float(value):.4g} is close, but it looks like a measured value; the "
                      "prediction is exact: add up d_k variances of 1.")
    return _wrong(f"{float(value):.4g} is not it: q·k is a sum of d_k products q_i·k_i, each with "
                  "variance 1; add up their variances.")


def check_scaled_attention(fn) -> Check:
    """check_attention, plus the scaling slips of notebook 03.

    When check_attention finds no named mistake, the learner's function runs once
    more with d_k = 16, 3 queries and 4 keys, where dividing by the wrong size,
    multiplying instead of dividing, scaling after the softmax or a hard-coded
    d_k each give a different, recognisable output.
    """
    check = check_attention(fn)
    if check or not check.message.startswith("❌ Not yet: attention(Q, K, V) has"):
        return check  # right, or a named mistake already
    rng = np.random.default_rng(3)
    Q, K, V = rng.normal(size=(3, 16)), rng.normal(size=(4, 16)), rng.normal(size=(4, 2))
    out, err = _call(fn, Q, K, V)
    if err is not None:
        return check
    if isinstance(out, tuple):
        out = out[0]
    S = Q @ K.T
    expected = core.softmax(S / 4.0) @ V  # √d_k = √16 = 4
    mistakes = {
        "you divided by the square root of the number of keys (K.shape[0]); d_k is the number of "
        "columns of Q and K: d_k = Q.shape[-1].": core.softmax(S / np.sqrt(4)) @ V,
        "you divided by the square root of the number of queries (Q.shape[0]); d_k is the number of "
        "columns of Q and K: d_k = Q.shape[-1].": core.softmax(S / np.sqrt(3)) @ V,
        "you multiplied by √d_k instead of dividing: the scores must shrink, Q @ K.T / np.sqrt(d_k).":
            core.softmax(S * 4.0) @ V,
        "you divided after the softmax (the weights or the output): scale the scores Q @ K.T "
        "before the softmax, so that each row of weights still sums to 1.": core.softmax(S) @ V / 4.0,
    }
    for fixed in (2, 8, 32, 64, 128, 256, 512, 1024):
        hint = (f"you divided by √{fixed} whatever the input: read d_k from the arrays "
                "(d_k = Q.shape[-1]) instead of using a fixed number.")
        mistakes[hint] = core.softmax(S / np.sqrt(fixed)) @ V
    extra = compare(out, expected, name="attention(Q, K, V)", mistakes=mistakes)
    if not extra and any(extra.message == f"❌ Not yet: {hint}" for hint in mistakes):
        return extra
    return check


# ---- notebook 04: softmax ----

_KEEPDIMS_HINT = (
    "x.max(axis=-1) and e.sum(axis=-1) have shape (rows,) and do not line up with x of shape "
    "(rows, columns); pass keepdims=True so they have shape (rows, 1) and each row uses its own value."
)


def check_stable_softmax(fn) -> Check:
    """check_softmax, plus the mistakes it lets through: the shifted versions of its
    mistakes, a row max or sum without keepdims, a shift by each column's maximum,
    and a shift by the maximum of the whole array (right for one row, nan as soon
    as rows lie far apart)."""
    small = np.array([[3.2, 4.0, 1.0, 6.2, 8.0], [1.0, 1.0, 1.0, 1.0, 1.0]])
    out, err = _call(fn, small.copy())
    if err is not None:
        if "broadcast" in err.message:
            return _wrong(err.message.removeprefix("❌ Not yet: ") + " " + _KEEPDIMS_HINT)
        return err
    s = np.exp(small - small.max(axis=-1, keepdims=True))  # shifted by each row's maximum
    c = np.exp(small - small.max(axis=0, keepdims=True))  # shifted by each column's maximum
    mistakes = {
        "your rows do not sum to 1: divide each exp by the sum of its own row.": s,
        "you normalised over columns (axis=0); softmax runs along each row: use axis=-1 "
        "with keepdims=True.": s / s.sum(axis=0, keepdims=True),
        "you divided by the sum of the whole matrix; each row needs its own sum "
        "(axis=-1, keepdims=True).": s / s.sum(),
        "you subtracted each column's maximum (axis=0), which shifts the entries of a row "
        "by different amounts; shift each row by its own maximum: "
        "x.max(axis=-1, keepdims=True).": c / c.sum(axis=-1, keepdims=True),
    }
    first = compare(out, core.softmax(small), name="softmax(x)", mistakes=mistakes)
    if not first and any(hint in first.message for hint in mistakes):
        return first
    check = check_softmax(fn)
    if not check:
        return check
    mixed = np.array([[1000.0, 999.0, 990.0], [0.0, 1.0, 2.0]])
    out, err = _call(fn, mixed.copy())
    if err is not None:
        return err
    check = compare(out, core.softmax(mixed), name="softmax of the rows [1000, 999, 990] and [0, 1, 2]",
                    mistakes={
        "a row came out nan: you subtracted the maximum of the whole array (x.max()), so the row "
        "[0, 1, 2], 1000 below it, underflows to 0 / 0. Shift each row by its own maximum: "
        "x.max(axis=-1, keepdims=True).": None,
    })
    if not check:
        return check
    return _right("rows sum to 1, the axis is right, and every row is shifted by its own maximum, "
                  "so huge scores stay finite.")


def check_temperature_for_ratio(answer, gap=1.8, ratio=2.0) -> Check:
    """Check the temperature T at which two scores `gap` apart give probabilities in
    the ratio `ratio`: p_top / p_next = e^(gap / T), so T = gap / ln(ratio)."""
    expected = gap / np.log(ratio)
    return compare(answer, expected, name="T", mistakes={
        "the temperature divides the scores, so the ratio is e^(gap / T), not e^(gap · T): "
        "solve gap / T = ln(ratio) for T.": gap * np.log(ratio),
        "that is 1 / T: you solved for the factor the scores are multiplied by; T is what they "
        "are divided by, so take the reciprocal.": np.log(ratio) / gap,
        "the ratio of two probabilities is an exponential, e^(gap / T): take the logarithm of the "
        "ratio (ln 2) instead of the ratio itself.": gap / ratio,
        "T = 1 is plain softmax, where the ratio is e^gap (about 6), not 2: a larger T is needed "
        "to flatten the distribution.": 1.0,
    }, success=f"T = {expected:.3f}: above 1, so the scores are divided down, the distribution "
                f"flattens and the winner's lead shrinks from e^{gap:g} to {ratio:g}.")


def check_probability_by_hand(answer) -> Check:
    """Check softmax([1.0, 3.0, 0.5])[1], the probability of the second key, computed by hand."""
    row = np.array([1.0, 3.0, 0.5])
    e = np.exp(row)
    p = e / e.sum()
    return compare(answer, p[1], name="p_second", mistakes={
        "you divided the raw scores by their sum; softmax takes exp of every score first: "
        "e^3 / (e^1 + e^3 + e^0.5).": row[1] / row.sum(),
        "that is e^3 on its own: divide it by the sum of the exponentials of the whole row.": e[1],
        "only the numerator is exponentiated: the denominator is the sum of e^score over the row, "
        "not the sum of the scores.": e[1] / row.sum(),
        "that looks like a percentage: give the probability as a fraction between 0 and 1.": 100 * p[1],
        "that is the probability of the first key; the exercise asks for the second (index 1).": p[0],
        "that is the probability of the third key; the exercise asks for the second (index 1).": p[2],
    }, success=f"p_second = {p[1]:.4f}: the largest score takes most of the mass.")


# ---- notebook 05: weighted sum and self-attention ----

def check_output_row(answer, q, K, V) -> Check:
    """Check one output row softmax(q·Kᵀ/√d_k)·V worked out by hand for the query vector `q`."""
    q = np.asarray(q, dtype=float)
    K = np.asarray(K, dtype=float)
    V = np.asarray(V, dtype=float)
    d_k = q.shape[-1]
    scores = K @ q
    weights = core.softmax(scores / np.sqrt(d_k))
    expected = weights @ V
    if answer is not None and np.shape(answer) == (1,) + expected.shape:
        answer = np.asarray(answer)[0]  # a [1, d_v] row is fine too
    return compare(answer, expected, name="the output row", mistakes={
        "you multiplied the scaled scores by V: turn them into weights with the softmax first, "
        "then take weights @ V.": (scores / np.sqrt(d_k)) @ V,
        "you multiplied the raw scores by V: scale them by 1/sqrt(d_k) and take the softmax first "
        "to get the weights, then take weights @ V.": scores @ V,
        "you multiplied the weights by K: the output mixes the value rows, so take weights @ V.":
            weights @ K,
        "you forgot to scale: divide the scores by sqrt(d_k) before the softmax.":
            core.softmax(scores) @ V,
        "you divided the scores by d_k instead of sqrt(d_k).": core.softmax(scores / d_k) @ V,
        "that is the row of weights (one per key), not the output: multiply it by V.": weights,
    }, success=f"output row = {_fmt(expected)}, a mixture of the value rows with weights {_fmt(weights)}.")


def check_masked_attention(fn) -> Check:
    """Check `fn(Q, K, V, mask=None) -> output`: first without a mask (see check_attention),
    then with a boolean mask where True = may attend."""
    check = check_attention(fn)
    if not check:
        return check
    rng = np.random.default_rng(5)
    Q, K, V = rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
    # every row keeps at least one key and hides at least one, also when inverted
    mask = np.array([[True, False, True, False],
                     [True, True, False, False],
                     [False, True, True, True],
                     [True, False, False, True]])
    out, err = _call(fn, Q, K, V, mask.copy())
    if err is not None:
        return err
    if isinstance(out, tuple):
        out = out[0]
    scaled = Q @ K.T / np.sqrt(Q.shape[-1])
    expected, _ = core.scaled_dot_product_attention(Q, K, V, mask=mask)
    return compare(out, expected, name="attention(Q, K, V, mask)", mistakes={
        "your output contains inf or nan: hidden scores should become -np.inf before the softmax "
        "(np.where(mask, scores, -np.inf)), and the softmax should subtract the row maximum.": None,
        "the mask had no effect: set the scores to -np.inf where mask is False, before the softmax.":
            core.softmax(scaled) @ V,
        "the mask is the wrong way round: True means may attend, so hide the scores where mask is "
        "False (np.where(mask, scores, -np.inf)).":
            core.softmax(np.where(mask, -np.inf, scaled)) @ V,
        "you set the hidden scores to 0, but exp(0) = 1 still gives them weight: use -np.inf.":
            core.softmax(np.where(mask, scaled, 0.0)) @ V,
        "you zeroed the hidden weights after the softmax, so the rows no longer sum to 1: mask the "
        "scores with -np.inf before the softmax instead.": (core.softmax(scaled) * mask) @ V,
    }, success="softmax(Q·Kᵀ/√d_k)·V with and without a mask; hidden keys get weight 0.")


# ---- notebook 06: KV cache and GQA ----

# Exercise 1: Mistral-7B (32 layers, 8 KV heads of size 128) caching 3000 tokens in float32.
_MISTRAL = dict(n_layers=32, n_q_heads=32, n_kv_heads=8, d_head=128, seq_len=3000, bytes_per_value=4)


def check_mistral_cache_bytes(answer) -> Check:
    """Check the KV-cache size in bytes of Mistral-7B for 3000 tokens kept in float32."""
    c = _MISTRAL
    expected = core.kv_cache_bytes(c["n_layers"], c["n_kv_heads"], c["d_head"], c["seq_len"],
                                   bytes_per_value=c["bytes_per_value"])
    group = c["n_q_heads"] // c["n_kv_heads"]
    mistakes = {
        "that is half the answer: either the factor 2 for K and V is missing, or you kept "
        "kv_cache_bytes' default of 2 bytes per value (float16); float32 takes 4 bytes.":
            expected / 2,
        f"you used the {c['n_q_heads']} query heads; only the {c['n_kv_heads']} KV heads are "
        "cached (several query heads share one KV head).": expected * group,
        f"you used the {c['n_q_heads']} query heads (only the {c['n_kv_heads']} KV heads are cached) "
        "and 2 bytes per value (float32 takes 4).": expected * group / 2,
        "that counts numbers, not bytes: multiply by the bytes per value (4 for float32).":
            expected / c["bytes_per_value"],
        "that counts numbers, not bytes, and misses the factor 2 for K and V: multiply by 2 "
        "(K and V) and by 4 (bytes per float32).": expected / (2 * c["bytes_per_value"]),
        "that is the size in GiB; the exercise asks for bytes (do not divide by 2**30).":
            expected / 2**30,
        "that is the size in MiB; the exercise asks for bytes (do not divide by 2**20).":
            expected / 2**20,
    }
    check = compare(answer, expected, name="my_cache_bytes", mistakes=mistakes,
                    success=f"{expected:,} bytes = {expected / 2**30:.3f} GiB: "
                            "2 × layers × KV heads × d_head × tokens × bytes per value.")
    if check or "expected" not in check.message:  # right, empty, not numbers, or a known mistake
        return check
    if np.size(answer) != 1:
        return _wrong(f"my_cache_bytes should be one number (the bytes), got shape {np.shape(answer)}.")
    # a generic miss: say what to multiply, without giving the number away
    return _wrong(f"{float(np.asarray(answer, dtype=float).reshape(())):,.0f} is not the size yet: "
                  "multiply 2 (K and V) × layers × KV heads × d_head × tokens × bytes per value, "
                  "with the numbers in exercise_config.")


def _decode_example():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(6, 4))
    W_Q, W_K, W_V = (rng.normal(size=(4, 3)) for _ in range(3))
    return X, W_Q, W_K, W_V


def check_decode_step(fn) -> Check:
    """Check `fn(cache, x, W_Q, W_K, W_V) -> output row` for one decoding step.

    The cache starts with a 2-token prompt; fn is called once for each later
    token and must append that token's k and v, then attend over the whole cache.
    """
    X, W_Q, W_K, W_V = _decode_example()
    n, n_prompt = X.shape[0], 2
    d_v = W_V.shape[1]
    cache = core.KVCache()
    cache.append(X[:n_prompt] @ W_K, X[:n_prompt] @ W_V)
    rows = []
    for t in range(n_prompt, n):
        before = len(cache)
        out, err = _call(fn, cache, X[t].copy(), W_Q.copy(), W_K.copy(), W_V.copy())
        if err is not None:
            return err
        if out is None or out is Ellipsis:
            return compare(None, np.zeros(d_v), name="my_decode_step(...)")
        if isinstance(out, tuple):
            out = out[0]
        try:
            out = np.asarray(out, dtype=float)
        except (TypeError, ValueError):
            return _wrong(f"my_decode_step should return an array of numbers, got {type(out).__name__}.")
        if out.size != d_v:
            return _wrong(f"my_decode_step returned shape {out.shape}; it should return the output "
                          f"row of the new token only, {d_v} numbers (one per value column).")
        rows.append(out.reshape(d_v))
        grown = len(cache) - before
        if grown > 1:
            return _wrong(f"the cache grew by {grown} rows in one step: append the new token's k and "
                          "v exactly once per step.")
    Q, K, V = core.project_qkv(X, W_Q, W_K, W_V)
    d_k = Q.shape[1]
    expected = core.scaled_dot_product_attention(Q, K, V, mask=core.causal_mask(n))[0][n_prompt:]
    strictly_past = np.tril(np.ones((n, n), dtype=bool), k=-1)
    unscaled = core.softmax(np.where(core.causal_mask(n), Q @ K.T, -np.inf)) @ V
    check = compare(np.array(rows), expected, name="the decoded outputs", mistakes={
        "the cache never grew: append the new token's k and v (cache.append(k, v)) before "
        "attending, or the new token cannot see itself.":
            core.scaled_dot_product_attention(Q[n_prompt:], K[:n_prompt], V[:n_prompt])[0],
        "you attended before appending: the new token must see its own key too, so call "
        "cache.append(k, v) first and then attend over cache.keys and cache.values.":
            core.scaled_dot_product_attention(Q[n_prompt:], K, V, mask=strictly_past[n_prompt:])[0],
        "you attended over the new key only (the output is just v): use all cached keys and "
        "values, cache.keys and cache.values.": V[n_prompt:],
        "you forgot to scale: divide q · Kᵀ by sqrt(d_k) before the softmax.": unscaled[n_prompt:],
        "you divided by d_k instead of sqrt(d_k).":
            (core.softmax(np.where(core.causal_mask(n), Q @ K.T / d_k, -np.inf)) @ V)[n_prompt:],
        "you returned the query q = x·W_Q, not the attention output softmax(q·Kᵀ/√d_k)·V.":
            Q[n_prompt:],
    })
    if not check:
        return check
    if len(cache) != n or not np.allclose(cache.keys, K) or not np.allclose(cache.values, V):
        return _wrong("the outputs are right but the cache does not hold k = x·W_K and v = x·W_V of "
                      "every token: append exactly those rows, keys first, then values.")
    return _right(f"each step appends one key and value and attends over all {n} cached tokens by the "
                  "end; the outputs equal full causal attention.")


def check_kv_head(fn) -> Check:
    """Check `fn(i, h_q, h_kv) -> index of the KV head that query head i reads`."""
    cases = [(8, 8), (8, 2), (8, 1), (6, 3), (32, 8)]
    got, expected, interleaved, by_h_kv = [], [], [], []
    for h_q, h_kv in cases:
        for i in range(h_q):
            out, err = _call(fn, i, h_q, h_kv)
            if err is not None:
                return err
            if out is None or out is Ellipsis:
                return compare(None, 0, name=f"my_kv_head({i}, {h_q}, {h_kv})")
            got.append(out)
            expected.append(i // (h_q // h_kv))
            interleaved.append(i % h_kv)
            by_h_kv.append(i // h_kv)
    return compare(got, expected, name="the KV head indices", mistakes={
        "you dealt the query heads out in turn (i % h_kv); the heads are grouped in blocks: "
        "heads 0 … group-1 share KV head 0, the next block KV head 1, with group = h_q // h_kv.":
            interleaved,
        "you divided by h_kv; divide by the group size h_q // h_kv (the number of query heads "
        "per KV head).": by_h_kv,
    }, success="query head i reads KV head i // (h_q // h_kv): consecutive blocks of query heads share one.")
