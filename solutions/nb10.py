"""Reference solutions for the exercises of notebooks/10_attention_that_learns.ipynb.

Not imported by the notebook (it never shows the solution); the tests in
tests/test_exercises_10.py check these against the checkers in attention_helpers.checks.
"""

import numpy as np

__all__ = ["my_softmax_backward", "A_ex", "dO_ex", "dV", "my_train_step"]


# Exercise 1: the gradient of one softmax row, ds = J · dp with J = diag(p) − p·pᵀ.
def my_softmax_backward(p, dp):
    return p * (dp - p @ dp)


# Exercise 2: dV for a small causal case.
A_ex, dO_ex = (np.array([[1.0, 0.0, 0.0], [0.25, 0.75, 0.0], [0.5, 0.3, 0.2]]),
               np.array([[1.0, -1.0], [0.5, 2.0], [-1.0, 0.0]]))
dV = A_ex.T @ dO_ex


# Exercise 3: one gradient-descent step of a self-attention layer on ½·sum((O − target)²).
def my_train_step(X, W_Q, W_K, W_V, target, lr):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    S = Q @ K.T / np.sqrt(Q.shape[1])
    A = np.exp(S - S.max(axis=1, keepdims=True))
    A = A / A.sum(axis=1, keepdims=True)
    dO = A @ V - target                        # ∂loss/∂O for ½·sum((O − target)²)
    dV = A.T @ dO
    dA = dO @ V.T
    dS = A * (dA - (A * dA).sum(axis=1, keepdims=True))
    dQ = dS @ K / np.sqrt(Q.shape[1])
    dK = dS.T @ Q / np.sqrt(Q.shape[1])
    return W_Q - lr * X.T @ dQ, W_K - lr * X.T @ dK, W_V - lr * X.T @ dV
