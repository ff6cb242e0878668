"""The backward pass of scaled dot-product attention, in plain NumPy.

Forward, as core.scaled_dot_product_attention computes it:

    S = Q·Kᵀ / √d_k        A = softmax(S) row by row        O = A·V

Backward, given dO = ∂L/∂O (for L = sum(O · dO), the gradients below are exact):

    dV = Aᵀ·dO
    dA = dO·Vᵀ
    dS = A ⊙ (dA − rowsum(A ⊙ dA))     the softmax's Jacobian, diag(p) − p·pᵀ, applied row by row
    dQ = dS·K / √d_k
    dK = dSᵀ·Q / √d_k

A masked score has A = 0, so its dS is 0 as well: nothing flows back through a hidden key.
"""

from __future__ import annotations

import numpy as np

from . import core

__all__ = ["attention_backward"]


def _sum_to(grad: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum `grad` over the leading dimensions that broadcasting added or stretched, back to `shape`."""
    extra = grad.ndim - len(shape)
    grad = grad.sum(axis=tuple(range(extra))) if extra else grad
    stretched = tuple(i for i, size in enumerate(shape) if size == 1 and grad.shape[i] != 1)
    return grad.sum(axis=stretched, keepdims=True) if stretched else grad


def attention_backward(Q, K, V, dO, mask=None):
    """Gradients (dQ, dK, dV) of sum(output · dO), where output = scaled_dot_product_attention(Q, K, V, mask).

    Shapes and mask as scaled_dot_product_attention takes them: Q [..., n_q, d_k], K [..., n_k, d_k],
    V [..., n_k, d_v], leading batch/head dimensions broadcast, mask boolean with True = may attend.
    dO has the output's shape [..., n_q, d_v]. Each gradient has the shape of its input (a leading
    dimension that was broadcast is summed over, as the chain rule asks).
    """
    Q, K, V = (core._array(name, a, min_ndim=2) for name, a in (("Q", Q), ("K", K), ("V", V)))
    dO = core._array("dO", dO, min_ndim=2)
    output, A = core.scaled_dot_product_attention(Q, K, V, mask=mask)  # checks Q, K, V and the mask
    if dO.shape != output.shape:
        raise ValueError(
            f"dO has shape {dO.shape}; it is the gradient of the output, so it must have the "
            f"output's shape {output.shape} ([..., n_q, d_v])"
        )
    scale = 1.0 / np.sqrt(Q.shape[-1])
    dV = np.swapaxes(A, -1, -2) @ dO
    dA = dO @ np.swapaxes(V, -1, -2)
    dS = A * (dA - (A * dA).sum(axis=-1, keepdims=True))
    dQ = dS @ K * scale
    dK = np.swapaxes(dS, -1, -2) @ Q * scale
    return _sum_to(dQ, Q.shape), _sum_to(dK, K.shape), _sum_to(dV, V.shape)
