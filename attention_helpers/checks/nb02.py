"""Checkers for notebook 02, dot-product scores."""

from __future__ import annotations

import numpy as np

from .. import examples
from ._base import Check, call, checker, compare, raised, right, shape_answer, wrong


@checker
def check_eats_fish_score(answer) -> Check:
    """Check q_eats · k_fish with Q2 = X·W_Q2 and K_ex = X·W_K_ex (notebook 02), computed by hand."""
    tokens, X, _, W_K, _ = examples.cat_eats_fish()
    W_Q2, W_K_ex = examples.scores_exercise_weights()
    Q2, K2, K_ex = X @ W_Q2, X @ W_K, X @ W_K_ex  # K2: the identity W_K of Step 7
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
        "reversed_pair": (
            "that is fish's query against eats' key (S[2, 1]): the pair is reversed. These weights "
            "do not give a symmetric grid, so take the query from the eats row of Q2 and the key from "
            "the fish row of K_ex.",
            S[2, 1]),
        "K2_not_K_ex": (
            "you used the fish row of K2 from Step 7 (identity W_K); this exercise's keys are the rows "
            "of K_ex.",
            q_eats @ K2[2]),
        "identity_weights": (
            "that is x_eats · x_fish, the score with identity weights: take the query from Q2 and the "
            "key from K_ex.",
            X[1] @ X[2]),
        "products_not_summed": (
            "these are the two products of a dot product; add them up to get one score.",
            q_eats * k_fish),
        "vectors_added": (
            "you added the two vectors; a dot product multiplies matching entries and then adds the "
            "products.",
            q_eats + k_fish),
    }
    for (i, j), value in np.ndenumerate(S):
        if (i, j) not in ((1, 2), (2, 1)):
            mistakes[f"q_{tokens[i]}_k_{tokens[j]}"] = (
                f"that is q_{tokens[i]} · k_{tokens[j]}: the query is eats (row 1 of "
                f"Q2) and the key is fish (row 2 of K_ex).", value)
    check = compare(answer, expected, name="score_eats_fish", mistakes=mistakes)
    if check.kind == "wrong_value":
        return wrong(f"score_eats_fish is not {float(answer):.4g}. Multiply the eats row of Q2 and "
                     "the fish row of K_ex entry by entry, then add the two products.")
    if check.kind == "wrong_shape":
        return wrong("a score is a single number: multiply the entries of q_eats and k_fish pairwise "
                     "and add the products.", kind="wrong_shape")
    if not check:
        return check
    return right(f"q_eats · k_fish = {q_eats[0]:g}×{k_fish[0]:g} + {q_eats[1]:g}×{k_fish[1]:g} "
                 f"= {expected:g}, while fish asking about eats scores {S[2, 1]:g}: order matters.")


@checker
def check_scores(fn) -> Check:
    """Check a learner's `fn(Q, K)` that returns the raw score matrix Q·Kᵀ."""
    rng = np.random.default_rng(2)
    Q, K = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    out, err = call(fn, Q.copy(), K.copy())
    if err is not None:
        if raised(err, "broadcast"):
            return wrong("your function raised a broadcasting error: `*` multiplies entry by entry "
                         "and needs matching shapes. A score sums products over d_k, which is what "
                         f"the matrix product `@` does. ({err.hint})", kind="raised", mistake="elementwise",
                         error=err.error)
        if raised(err, "matmul", "not aligned"):
            return wrong("Q @ K cannot be formed: Q is (3, 4) and K is (3, 4), and a matrix product "
                         "needs the inner sizes to agree. Did you forget to transpose K? Kᵀ is "
                         f"(4, 3), so Q @ Kᵀ is (3, 3). ({err.hint})", kind="raised",
                         mistake="K_not_transposed", error=err.error)
        return err
    expected = Q @ K.T
    return compare(out, expected, name="my_scores(Q, K)", mistakes={
        "transposed_product": (
            "you returned K @ Q.T, the transpose of the scores: its row i is key i against every query. "
            "Queries go first, so that rows are queries and columns are keys.",
            K @ Q.T),
        "QT_K": (
            "Q.T @ K has shape (d_k, d_k) = (4, 4): it pairs embedding dimensions, not tokens. Transpose "
            "K, not Q.",
            Q.T @ K),
        "KT_Q": (
            "K.T @ Q has shape (d_k, d_k) = (4, 4): it pairs embedding dimensions, not tokens. Put Q "
            "first and transpose K.",
            K.T @ Q),
        "elementwise": (
            "Q * K multiplies entry by entry and keeps shape (3, 4); a score adds the products over the "
            "d_k dimensions, which is what the matrix product `@` does.",
            Q * K),
        "diagonal_only": (
            "that is only the diagonal q_i · k_i, one number per token: every query must meet every "
            "key, giving an (n, n) grid.",
            (Q * K).sum(axis=1)),
        "scaled_too_early": (
            "you divided by √d_k: that scaling is the next notebook's step. Return the raw scores.",
            expected / np.sqrt(Q.shape[1])),
    }, success="my_scores(Q, K) = Q @ K.T: entry (i, j) is query i against key j, shape (3, 3).")


@checker
def check_scores_shape(answer, n=5, d_k=8) -> Check:
    """Check the predicted shape of Q·Kᵀ for n tokens with Q and K of shape [n, d_k]."""
    got = shape_answer("shape_for_5_tokens", answer)
    if isinstance(got, Check):
        return got
    mistakes = {
        "shape_of_Q": (f"({n}, {d_k}) is the shape of Q (and of K) itself: one row per token, one "
                       "column per dimension. QKᵀ compares tokens with tokens.", (n, d_k)),
        "QT_K": (f"({d_k}, {d_k}) would be QᵀK, which pairs dimensions with dimensions. In QKᵀ the "
                 "d_k dimension is summed away.", (d_k, d_k)),
        "shape_of_KT": (f"({d_k}, {n}) is the shape of Kᵀ; multiplying Q by it sums over d_k and "
                        "leaves one row per query.", (d_k, n)),
        "diagonal_only": ("one number per token is only the diagonal; QKᵀ scores every query "
                          "against every key.", (n,)),
    }
    for key, (hint, shape) in mistakes.items():
        if got == shape:
            return wrong(hint, kind="mistake", mistake=key)
    if got != (n, n):
        return wrong(f"{got} is not it: QKᵀ has one row per query and one column per key.")
    return right(f"({n}, {n}): [{n}, {d_k}] @ [{d_k}, {n}] → [{n}, {n}], one score per (query, key) pair.")
