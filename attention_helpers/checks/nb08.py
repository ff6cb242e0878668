"""Checkers for notebook 08, the decoder block: its weights and the pre-norm block."""

from __future__ import annotations

import numpy as np

from ._base import Check, call, checker, compare, compare_number

_EPS = 1e-6


def _rms(X, gamma, axis=-1, eps=_EPS):
    return gamma * X / np.sqrt((X ** 2).mean(axis=axis, keepdims=True) + eps)


@checker
def check_block_params(answer, d_model, d_ff) -> Check:
    """Check the number of weights of one block as notebook 08 builds it: W_Q, W_K, W_V, W_O
    (d_model × d_model each), W_1 (d_model × d_ff), W_2 (d_ff × d_model) and two RMSNorm gains."""
    attention, ffn, gains = 4 * d_model * d_model, 2 * d_model * d_ff, 2 * d_model
    expected = attention + ffn + gains
    return compare_number(
        answer, expected, name="my_block_params",
        success=f"{expected:,} weights: {attention:,} in attention, {ffn:,} in the feed-forward "
                f"block and {gains:,} in the two gains.",
        mistakes={
            "no_gains": (
                "the two RMSNorm gains (d_model numbers each) are weights too.",
                attention + ffn),
            "three_attention_matrices": (
                "attention has four matrices: W_Q, W_K, W_V and the output "
                "projection W_O.",
                3 * d_model * d_model + ffn + gains),
            "one_ffn_matrix": (
                "the feed-forward block has two matrices: W_1 expands "
                "(d_model × d_ff), W_2 projects back (d_ff × d_model).",
                attention + d_model * d_ff + gains),
            "norm_bias": (
                "this block uses RMSNorm: a gain and no bias β, so d_model "
                "numbers per norm.",
                attention + ffn + 4 * d_model),
            "one_norm": (
                "there are two norms in a pre-norm block, one before attention and "
                "one before the feed-forward block.",
                attention + ffn + d_model),
            "attention_only": (
                "that is attention alone; add the feed-forward block and the gains.",
                attention),
            "ffn_only": (
                "that is the feed-forward block alone; add attention and the gains.",
                ffn),
        },
        otherwise=lambda value: f"{value:,.0f} is not it yet: add up the sizes of W_Q, W_K, W_V, W_O, W_1, "
                                "W_2 and the two gains (rows × columns for each matrix).")


@checker
def check_pre_norm_block(fn) -> Check:
    """Check `fn(X, attention, ffn, norm)`: h = X + attention(norm(X)); out = h + ffn(norm(h))."""
    rng = np.random.default_rng(89)
    X = rng.normal(size=(3, 4))
    A, B = rng.normal(size=(4, 4)), rng.normal(size=(4, 4))

    def attention(Z):
        return Z @ A

    def ffn(Z):
        return np.tanh(Z @ B)

    def norm(Z):
        return _rms(Z, 1.0)

    out, err = call(fn, X.copy(), attention, ffn, norm)
    if err is not None:
        return err
    h = X + attention(norm(X))
    return compare(out, h + ffn(norm(h)), name="my_block(X, attention, ffn, norm)", mistakes={
        "post_norm": (
            "that is the post-norm block of the original transformer, norm(x + attention(x)); real decoders "
            "today normalise first: h = X + attention(norm(X)), then h + ffn(norm(h)).",
            norm(norm(X + attention(X)) + ffn(norm(X + attention(X))))),
        "no_first_residual": (
            "the first residual is missing: h = X + attention(norm(X)), not attention(norm(X)) alone.",
            attention(norm(X)) + ffn(norm(attention(norm(X))))),
        "no_second_residual": (
            "the second residual is missing: return h + ffn(norm(h)), not ffn(norm(h)) alone.",
            ffn(norm(h))),
        "no_residuals": (
            "both residuals are missing: each sub-block adds its result to what it was given.",
            ffn(norm(attention(norm(X))))),
        "ffn_reads_X": (
            "the feed-forward network must read h, the output of the attention step, not X: "
            "h + ffn(norm(h)).",
            h + ffn(norm(X))),
        "no_norm": (
            "norm is missing: each sub-block reads a normalised copy, attention(norm(X)) and ffn(norm(h)).",
            X + attention(X) + ffn(X + attention(X))),
    }, success="h = X + attention(norm(X)), then h + ffn(norm(h)): pre-norm with two residuals.")
