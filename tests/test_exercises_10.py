"""Notebook 10 (attention that learns): the reference solutions pass their checkers, and each
typical slip is recognised by its key (check.mistake), never by the hint's wording."""

import numpy as np
import pytest

import solutions.nb10 as sol
from attention_helpers.checks import check_dV, check_softmax_backward, check_train_step
from tools.notebooks import ROOT, notebook_values


def failed(check, kind, mistake=None):
    assert not check and check.text.startswith("❌")
    assert check.kind == kind, (check.kind, check.hint)
    assert check.mistake == mistake, (check.mistake, check.hint)
    return True


# ---- exercise 1: the gradient of one softmax row ----------------------------------------------

def test_softmax_backward_solution_passes():
    check = check_softmax_backward(sol.my_softmax_backward)
    assert check, check.text


def test_softmax_backward_agrees_with_finite_differences():
    """The checker's expected answer, independently: differentiate sum(softmax(s) · dp) numerically."""
    s, dp, eps = np.array([1.0, 2.0, 0.5, -1.0]), np.array([0.3, -1.2, 0.8, 0.5]), 1e-6

    def f(s):
        e = np.exp(s - s.max())
        return (e / e.sum()) @ dp

    nudge = eps * np.eye(4)
    numeric = np.array([(f(s + nudge[i]) - f(s - nudge[i])) / (2 * eps) for i in range(4)])
    p = np.exp(s) / np.exp(s).sum()
    assert np.allclose(sol.my_softmax_backward(p, dp), numeric, atol=1e-8)


@pytest.mark.parametrize("fn, kind, mistake", [
    (lambda p, dp: -p * (p @ dp), "mistake", "no_diagonal"),
    (lambda p, dp: p * dp, "mistake", "only_diagonal"),
    (lambda p, dp: dp - p @ dp, "mistake", "no_p_factor"),
    (lambda p, dp: p * (p @ dp - dp), "mistake", "sign"),
    (lambda p, dp: np.diag(p) - np.outer(p, p), "mistake", "returned_jacobian"),
    (lambda p, dp: p * (dp - dp.mean()), "wrong_value", None),
    (lambda p, dp: p[:2], "wrong_shape", None),
    (lambda p, dp: None, "empty", None),
    (lambda p, dp: p @ np.ones((3, 3)), "raised", None),
    ("not a function", "not_callable", None),
])
def test_softmax_backward_mistakes_are_named(fn, kind, mistake):
    assert failed(check_softmax_backward(fn), kind, mistake)


# ---- exercise 2: dV --------------------------------------------------------------------------

def test_dV_solution_passes_on_the_notebooks_data():
    A_ex, dO_ex = notebook_values(ROOT / "notebooks" / "10_attention_that_learns.ipynb", "A_ex", "dO_ex")
    assert np.array_equal(A_ex, sol.A_ex) and np.array_equal(dO_ex, sol.dO_ex)
    check = check_dV(sol.dV, A_ex, dO_ex)
    assert check, check.text


def test_dV_by_a_loop():
    """dV[j] = Σ_i A[i, j] · dO[i]: each value row gets the output gradients that read it."""
    expected = sum(np.outer(sol.A_ex[i], sol.dO_ex[i]) for i in range(3))
    assert np.allclose(sol.dV, expected)


@pytest.mark.parametrize("answer, kind, mistake", [
    (lambda A, dO: A @ dO, "mistake", "not_transposed"),
    (lambda A, dO: dO.T @ A, "mistake", "transposed_product"),
    (lambda A, dO: A.T @ dO + 1.0, "wrong_value", None),
    (lambda A, dO: None, "empty", None),
    (lambda A, dO: "dV", "not_numbers", None),
])
def test_dV_mistakes_are_named(answer, kind, mistake):
    assert failed(check_dV(answer(sol.A_ex, sol.dO_ex), sol.A_ex, sol.dO_ex), kind, mistake)


# ---- exercise 3: one training step -----------------------------------------------------------

def test_train_step_solution_passes():
    check = check_train_step(sol.my_train_step)
    assert check, check.text


def test_train_step_solution_agrees_with_finite_differences():
    """Independently of any backward formula: the step is −lr times the numerical gradient."""
    rng = np.random.default_rng(0)
    X, target = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    Ws = [rng.normal(size=(3, 3)) for _ in range(3)]
    lr, eps = 0.1, 1e-6

    def loss(W_Q, W_K, W_V):
        Q, K, V = X @ W_Q, X @ W_K, X @ W_V
        S = Q @ K.T / np.sqrt(3)
        A = np.exp(S - S.max(axis=1, keepdims=True))
        return 0.5 * (((A / A.sum(axis=1, keepdims=True)) @ V - target) ** 2).sum()

    stepped = sol.my_train_step(X, *Ws, target, lr)
    for which in range(3):
        numeric = np.zeros((3, 3))
        for idx in np.ndindex(3, 3):
            up = [W.copy() for W in Ws]
            down = [W.copy() for W in Ws]
            up[which][idx] += eps
            down[which][idx] -= eps
            numeric[idx] = (loss(*up) - loss(*down)) / (2 * eps)
        assert np.allclose(stepped[which], Ws[which] - lr * numeric, atol=1e-7)


def _step(scale_q=True, scale_k=True, diagonal=True, sign=-1.0, transpose=False, lr_used=True):
    def step(X, W_Q, W_K, W_V, target, lr):
        Q, K, V = X @ W_Q, X @ W_K, X @ W_V
        d = Q.shape[1]
        S = Q @ K.T / np.sqrt(d)
        A = np.exp(S - S.max(axis=1, keepdims=True))
        A /= A.sum(axis=1, keepdims=True)
        dO = A @ V - target
        dA = dO @ V.T
        dS = (A * dA if diagonal else 0) - A * (A * dA).sum(axis=1, keepdims=True)
        grads = [X.T @ (dS @ K / (np.sqrt(d) if scale_q else 1)),
                 X.T @ (dS.T @ Q / (np.sqrt(d) if scale_k else 1)), X.T @ (A.T @ dO)]
        rate = lr if lr_used else 1.0
        return [W + sign * rate * (g.T if transpose else g) for W, g in zip((W_Q, W_K, W_V), grads)]
    return step


@pytest.mark.parametrize("fn, kind, mistake", [
    (_step(scale_q=False, scale_k=False), "mistake", "no_scale"),
    (_step(scale_q=False), "mistake", "no_scale_dQ"),
    (_step(scale_k=False), "mistake", "no_scale_dK"),
    (_step(diagonal=False), "mistake", "no_diagonal"),
    (_step(sign=1.0), "mistake", "ascent"),
    (_step(transpose=True), "mistake", "transposed_grad"),
    (_step(lr_used=False), "mistake", "no_lr"),
    (lambda X, W_Q, W_K, W_V, target, lr: (W_Q, W_K, W_V), "mistake", "no_step"),
    (lambda X, W_Q, W_K, W_V, target, lr: (W_Q * 0.9, W_K, W_V), "wrong_value", None),
    (lambda X, W_Q, W_K, W_V, target, lr: (W_Q, W_K), "wrong_shape", None),
    (lambda X, W_Q, W_K, W_V, target, lr: None, "empty", None),
    (lambda X, W_Q, W_K, W_V, target, lr: X @ np.ones((4, 4)), "raised", None),
])
def test_train_step_mistakes_are_named(fn, kind, mistake):
    assert failed(check_train_step(fn), kind, mistake)
