"""Checkers for notebook 10, attention that learns: the backward pass and one training step."""

from __future__ import annotations

import numpy as np

from .. import core
from ._base import Check, array_answer, call, checker, compare, empty, right, wrong

# Exercise 1: two softmax rows and the gradient arriving at their probabilities.
_SOFTMAX_SCORES = np.array([[1.0, 2.0, 0.5, -1.0], [0.0, 3.0, -2.0, 1.0]])
_SOFTMAX_DP = np.array([[0.3, -1.2, 0.8, 0.5], [1.0, 0.0, -0.5, 2.0]])

# Exercise 3: a small self-attention layer, its target output and a learning rate.
_rng = np.random.default_rng(10)
_X, _TARGET = _rng.normal(size=(4, 3)), _rng.normal(size=(4, 3))   # 4 tokens, d_model = d_k = d_v = 3
_W_Q, _W_K, _W_V = (_rng.normal(size=(3, 3)) for _ in range(3))
_LR = 0.02
del _rng


def _softmax_backward(p, dp, diagonal=True, off_diagonal=True):
    """ds = J·dp with J = diag(p) − p·pᵀ, either part optional (to build the typical mistakes)."""
    return (p * dp if diagonal else 0.0) - (p * (p @ dp) if off_diagonal else 0.0)


@checker
def check_softmax_backward(fn) -> Check:
    """Check `fn(p, dp) -> ds`: the gradient of the scores of one softmax row, given its
    probabilities p and the gradient dp arriving at them."""
    rows = []
    for s, dp in zip(_SOFTMAX_SCORES, _SOFTMAX_DP):
        p = core.softmax(s)
        out, err = call(fn, p.copy(), dp.copy())
        if err is not None:
            return err
        got = array_answer("my_softmax_backward(p, dp)", out)
        if isinstance(got, Check):
            return got
        if got.shape == (4, 4) and np.allclose(got, np.diag(p) - np.outer(p, p)):
            return wrong("that is the Jacobian J = diag(p) − p·pᵀ itself: return J · dp, one number per "
                         "score.", kind="mistake", mistake="returned_jacobian")
        rows.append(got)
    try:
        got = np.array(rows, dtype=float)
    except ValueError:
        return wrong("my_softmax_backward should return one number per score.", kind="wrong_shape")
    probs = core.softmax(_SOFTMAX_SCORES)

    def each(**parts):
        return np.array([_softmax_backward(p, dp, **parts) for p, dp in zip(probs, _SOFTMAX_DP)])

    expected = each()
    return compare(got, expected, name="ds for two test rows", mistakes={
        "no_diagonal": ("the Jacobian's diagonal term is missing: ∂p_i/∂s_i = p_i(1 − p_i) has a p_i of its "
                        "own, so ds = p ⊙ dp − p (p · dp), not only −p (p · dp).", each(diagonal=False)),
        "only_diagonal": ("only the diagonal of the Jacobian: every p_j also depends on s_i (through the sum "
                          "below the fraction), which subtracts p (p · dp).", each(off_diagonal=False)),
        "no_p_factor": ("ds = p ⊙ (dp − p · dp): the whole bracket is multiplied by p, element by element.",
                        np.array([dp - p @ dp for p, dp in zip(probs, _SOFTMAX_DP)])),
        "sign": ("the sign is flipped: ds = p ⊙ dp − p (p · dp).", -expected),
    }, success="ds = p ⊙ (dp − p · dp): the Jacobian diag(p) − p·pᵀ applied to dp. Its entries add "
                "up to 0, as they must (adding a constant to every score changes no probability).")


@checker
def check_dV(answer, A, dO) -> Check:
    """Check dV, the gradient of the values, for weights A [n_q, n_k] and output gradient dO [n_q, d_v]."""
    A, dO = np.asarray(A, dtype=float), np.asarray(dO, dtype=float)
    expected = A.T @ dO
    return compare(answer, expected, name="dV", mistakes={
        "not_transposed": ("that is A · dO. Value row j reaches output row i with weight A[i, j], so its "
                           "gradient gathers down column j of A: dV = Aᵀ · dO.", A @ dO),
        "transposed_product": ("that is dOᵀ · A, the transpose of the answer: dV has one row per key, like "
                               "V, so dV = Aᵀ · dO.", dO.T @ A),
    }, success=(
        f"dV = Aᵀ · dO, shape {expected.shape}: one row per key, each the gradient of the output rows "
        "weighted by how much they read that key."))


def _step(X, W_Q, W_K, W_V, target, lr, scale_q=True, scale_k=True, diagonal=True, sign=-1.0,
          transpose=False, use_lr=True):
    """One gradient step on ½·sum((O − target)²), with the switches that make the typical mistakes."""
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    output, A = core.scaled_dot_product_attention(Q, K, V)
    dO = output - target
    dV = A.T @ dO
    dA = dO @ V.T
    dS = (A * dA if diagonal else 0.0) - A * (A * dA).sum(axis=-1, keepdims=True)
    root = np.sqrt(Q.shape[-1])
    dQ = dS @ K / (root if scale_q else 1.0)
    dK = dS.T @ Q / (root if scale_k else 1.0)
    grads = [X.T @ g for g in (dQ, dK, dV)]
    grads = [g.T for g in grads] if transpose else grads
    rate = lr if use_lr else 1.0
    return np.array([W + sign * rate * g for W, g in zip((W_Q, W_K, W_V), grads)])


@checker
def check_train_step(fn) -> Check:
    """Check `fn(X, W_Q, W_K, W_V, target, lr) -> (W_Q, W_K, W_V)`: one gradient-descent step of a
    self-attention layer on the loss ½·sum((output − target)²)."""
    args = (_X, _W_Q, _W_K, _W_V, _TARGET, _LR)
    out, err = call(fn, *(a.copy() if isinstance(a, np.ndarray) else a for a in args))
    if err is not None:
        return err
    if out is None or out is Ellipsis:
        return empty("my_train_step(...)")
    try:
        got = np.array([np.asarray(w, dtype=float) for w in out])
    except (TypeError, ValueError):
        return wrong("my_train_step should return three matrices (W_Q, W_K, W_V), each of the shape it "
                     f"was given {_W_Q.shape}.", kind="wrong_type")
    expected = _step(*args)
    if got.shape == (3, *_W_Q.shape):
        unchanged = np.array([_W_Q, _W_K, _W_V])
        if np.allclose(got, unchanged):
            return wrong("the weights came back unchanged: subtract lr times each gradient.",
                         kind="mistake", mistake="no_step")
    check = compare(got, expected, name="the new (W_Q, W_K, W_V)", mistakes={
        "no_scale": ("dQ and dK are each missing the 1/√d_k: the scores are Q·Kᵀ/√d_k, so both gradients "
                     "carry that factor.", _step(*args, scale_q=False, scale_k=False)),
        "no_scale_dQ": ("W_Q moved too far: dQ = dS · K / √d_k; the 1/√d_k of the scores is missing there.",
                        _step(*args, scale_q=False)),
        "no_scale_dK": ("W_K moved too far: dK = dSᵀ · Q / √d_k; the 1/√d_k of the scores is missing there.",
                        _step(*args, scale_k=False)),
        "no_diagonal": ("W_Q and W_K are off: the softmax backward is dS = A ⊙ (dA − rowsum(A ⊙ dA)); "
                        "the diagonal term A ⊙ dA is missing.", _step(*args, diagonal=False)),
        "ascent": ("the weights moved uphill: gradient descent subtracts lr · gradient.",
                   _step(*args, sign=1.0)),
        "transposed_grad": ("each weight gradient is transposed: the gradient of W in X·W is Xᵀ · (gradient "
                            "of X·W), with X's rows (the tokens) summed over.", _step(*args, transpose=True)),
        "no_lr": ("the step is the whole gradient: multiply it by the learning rate lr first.",
                  _step(*args, use_lr=False)),
    })
    if not check:
        return check
    before = 0.5 * ((core.self_attention(_X, _W_Q, _W_K, _W_V)[0] - _TARGET) ** 2).sum()
    after = 0.5 * ((core.self_attention(_X, *expected)[0] - _TARGET) ** 2).sum()
    return right(f"one step of lr = {_LR} takes the loss from {before:.4f} to {after:.4f}, every weight "
                 "as the chain rule says.")
