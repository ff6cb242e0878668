"""A tiny attention-only language model, trained in NumPy with gradients written by hand.

The task: read a sequence of random letters and, at every position t ≥ 1, predict the letter
at t − 1 (copy the previous token). No letter says where its predecessor is, so the model
must learn it from positions: an attention head that looks one step back.

The model, for one sequence of n token ids:

    X = W_E[tokens] + W_pos                     embeddings [n, d_model]
    Q, K, V = X·W_Q, X·W_K, X·W_V               split into heads [heads, n, d_head]
    O = causal attention per head, heads side by side, times W_O
    h = X + O                                   the residual stream
    logits = h·W_U                              one score per letter [n, vocab]
    loss = cross-entropy of softmax(logits) against the previous token

`scaled=False` drops the division by √d_head; that is the same as multiplying the queries
by √d_head, which is how it is computed here (so one backward serves both).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from . import core
from .backward import attention_backward

__all__ = ["LETTERS", "NAMES", "TRAINING", "SQRT_EXPERIMENT", "init_params", "make_batch", "forward",
           "loss_and_grads", "train", "CHECKPOINT", "load_checkpoint", "save_checkpoint"]

LETTERS = "ABCDEFGH"                     # the vocabulary
VOCAB, N_TOKENS = len(LETTERS), 8        # letters, and tokens per sequence
CHECKPOINT = Path(__file__).parent / "data" / "tiny_model.npz"
NAMES = ("W_E", "W_pos", "W_Q", "W_K", "W_V", "W_O", "W_U")
# How the stored checkpoint was trained (scripts/train_tiny_model.py); the notebook retrains with these.
TRAINING = dict(seed=0, steps=200, lr=0.01, batch=32, d_head=8, n_heads=2, scaled=True,
                snapshot_steps=(0, 5, 10, 15, 20, 30, 40, 60, 100, 200))
# The √d_k experiment: the same model with wide heads, with and without the division, a few seeds.
SQRT_EXPERIMENT = dict(d_head=128, seeds=(0, 1, 2), steps=150)


def init_params(seed=0, d_model=16, n_heads=2, d_head=8, vocab=VOCAB, n=N_TOKENS) -> dict:
    """Random weights: embeddings of size about 1, projections of std 1/√(fan in)."""
    rng = np.random.default_rng(seed)
    width = n_heads * d_head
    return {
        "W_E": rng.normal(size=(vocab, d_model)),
        "W_pos": rng.normal(size=(n, d_model)),
        "W_Q": rng.normal(size=(d_model, width)) / np.sqrt(d_model),
        "W_K": rng.normal(size=(d_model, width)) / np.sqrt(d_model),
        "W_V": rng.normal(size=(d_model, width)) / np.sqrt(d_model),
        "W_O": rng.normal(size=(width, d_model)) / np.sqrt(width),
        "W_U": rng.normal(size=(d_model, vocab)) / np.sqrt(d_model),
    }


def make_batch(rng, batch=32, n=N_TOKENS, vocab=VOCAB) -> np.ndarray:
    """Random token ids [batch, n]; the target at position t is the token at t − 1."""
    return rng.integers(0, vocab, size=(batch, n))


def _t_times(A, B):
    """Aᵀ·B with every sequence of the batch stacked as rows: the gradient of a weight matrix."""
    return A.reshape(-1, A.shape[-1]).T @ B.reshape(-1, B.shape[-1])


def forward(params, tokens, n_heads=2, scaled=True):
    """(logits [batch, n, vocab], weights [batch, heads, n, n], cache for the backward pass)."""
    tokens = np.atleast_2d(tokens)
    n = tokens.shape[1]
    X = params["W_E"][tokens] + params["W_pos"][:n]
    d_head = params["W_Q"].shape[1] // n_heads
    boost = 1.0 if scaled else np.sqrt(d_head)       # unscaled scores: Q·Kᵀ = (√d·Q)·Kᵀ / √d
    Q = core.split_heads(X @ params["W_Q"], n_heads) * boost
    K, V = core.split_heads(X @ params["W_K"], n_heads), core.split_heads(X @ params["W_V"], n_heads)
    mask = core.causal_mask(n)
    heads, weights = core.scaled_dot_product_attention(Q, K, V, mask=mask)
    h = X + core.merge_heads(heads) @ params["W_O"]
    logits = h @ params["W_U"]
    return logits, weights, (tokens, X, Q, K, V, mask, heads, h, boost)


def loss_and_grads(params, tokens, n_heads=2, scaled=True):
    """(mean cross-entropy over positions 1 … n−1, {name: gradient}, attention weights)."""
    logits, weights, (tokens, X, Q, K, V, mask, heads, h, boost) = forward(params, tokens, n_heads, scaled)
    target = tokens[:, :-1]                           # position t predicts the token at t − 1
    probs = core.softmax(logits[:, 1:])
    count = target.size
    picked = np.take_along_axis(probs, target[..., None], axis=-1)[..., 0]
    loss = -np.log(picked).mean()

    # Cross-entropy after softmax: ∂loss/∂logits = (probabilities − one-hot) / count.
    dlogits = np.zeros_like(logits)
    dlogits[:, 1:] = probs
    np.put_along_axis(dlogits[:, 1:], target[..., None], picked[..., None] - 1.0, axis=-1)
    dlogits /= count

    grads = {"W_U": _t_times(h, dlogits)}
    dh = dlogits @ params["W_U"].T
    merged = core.merge_heads(heads)
    grads["W_O"] = _t_times(merged, dh)
    dheads = core.split_heads(dh @ params["W_O"].T, n_heads)
    dQ, dK, dV = attention_backward(Q, K, V, dheads, mask=mask)
    dQ = core.merge_heads(dQ * boost)
    dK, dV = core.merge_heads(dK), core.merge_heads(dV)
    grads["W_Q"] = _t_times(X, dQ)
    grads["W_K"] = _t_times(X, dK)
    grads["W_V"] = _t_times(X, dV)
    dX = dh + dQ @ params["W_Q"].T + dK @ params["W_K"].T + dV @ params["W_V"].T   # residual + three paths
    grads["W_pos"] = np.zeros_like(params["W_pos"])
    grads["W_pos"][:tokens.shape[1]] = dX.sum(axis=0)
    grads["W_E"] = np.zeros_like(params["W_E"])
    np.add.at(grads["W_E"], tokens, dX)               # each row of W_E gets the gradient of its tokens
    return loss, grads, weights


def train(seed=0, steps=200, lr=0.01, batch=32, d_head=8, n_heads=2, scaled=True, snapshot_steps=()):
    """Adam on fresh random batches. Returns a dict of arrays: "loss", "grad_norm_Q", "grad_norm_K"
    (one per step, before the update), "snapshot_steps" and, per weight name, its snapshots."""
    params = init_params(seed, d_head=d_head, n_heads=n_heads)
    rng = np.random.default_rng(seed + 1000)
    m = {k: np.zeros_like(v) for k, v in params.items()}
    s = {k: np.zeros_like(v) for k, v in params.items()}
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    history = {"loss": [], "grad_norm_Q": [], "grad_norm_K": []}
    snaps = {k: [] for k in params}
    for step in range(steps + 1):
        if step in snapshot_steps:
            for k in params:
                snaps[k].append(params[k].copy())
        if step == steps:
            break
        loss, grads, _ = loss_and_grads(params, make_batch(rng, batch), n_heads, scaled)
        history["loss"].append(loss)
        history["grad_norm_Q"].append(np.linalg.norm(grads["W_Q"]))
        history["grad_norm_K"].append(np.linalg.norm(grads["W_K"]))
        for k in params:                              # Adam: a step of about lr per weight
            m[k] = beta1 * m[k] + (1 - beta1) * grads[k]
            s[k] = beta2 * s[k] + (1 - beta2) * grads[k] ** 2
            m_hat, s_hat = m[k] / (1 - beta1 ** (step + 1)), s[k] / (1 - beta2 ** (step + 1))
            params[k] = params[k] - lr * m_hat / (np.sqrt(s_hat) + eps)
    out = {k: np.array(v) for k, v in history.items()}
    out["snapshot_steps"] = np.array(sorted(snapshot_steps), dtype=int)
    out.update({k: np.array(v) for k, v in snaps.items() if v})
    return out


def save_checkpoint(arrays: dict, path=CHECKPOINT) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **arrays)
    return path


def load_checkpoint(path=CHECKPOINT) -> dict:
    """The stored arrays by name (see scripts/train_tiny_model.py for what it holds)."""
    with np.load(path) as data:
        return {k: data[k] for k in data.files}
