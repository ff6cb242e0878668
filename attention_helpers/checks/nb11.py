"""Checkers for notebook 11, the KV-cache designs of current models.

Each named mistake has a short key (`check.mistake`): "never_truncated", "off_by_one",
"no_sink", "sink_some_rows", "sink_unshifted", "sink_not_dropped", "not_rounded", "scale_per_tensor",
"scale_per_channel", "wrong_q_max", "not_nearest". Tests and tools read these keys, never the hints.
"""

from __future__ import annotations

import numpy as np

from .. import core, kv_designs
from ._base import Check, array_answer, call, checker, compare, empty, right, wrong

_WINDOW = 3


def _compare(answer, expected, *, name, mistakes, success=None) -> Check:
    """`compare` with mistakes as a list [(key, hint, wrong array)], so that two slips
    with different hints can share one key (a window one too long or one too short)."""
    check = compare(answer, expected, name=name, success=success,
                    mistakes={str(i): (hint, bad) for i, (_, hint, bad) in enumerate(mistakes)})
    if check.kind == "mistake":
        return wrong(check.hint, kind="mistake", mistake=mistakes[int(check.mistake)][0])
    return check


# ---- exercise 1: one decoding step with a sliding-window cache -------------------------

def _window_data():
    rng = np.random.default_rng(11)
    return rng.normal(size=(7, 2)), rng.normal(size=(7, 2)), rng.normal(size=(7, 2))


def _masked_rows(Q, K, V, mask):
    return core.scaled_dot_product_attention(Q, K, V, mask=mask)[0]


@checker
def check_window_step(fn) -> Check:
    """Check `fn(keys, values, k, v, q, window) -> (output, keys, values)`: append the new token's
    k and v, keep only the last `window` rows, attend with q over them."""
    Q, K, V = _window_data()
    n = len(Q)
    keys, values, rows = np.zeros((0, 2)), np.zeros((0, 2)), []
    longest = 0
    for t in range(n):
        out, err = call(fn, keys.copy(), values.copy(), K[t].copy(), V[t].copy(), Q[t].copy(), _WINDOW)
        if err is not None and t == 0:
            return wrong(f"{err.hint} (on the first token, when the cache is still empty: append k and "
                         "v first, so the new token sees its own key, then attend).", kind="raised",
                         error=err.error)
        if err is not None:
            return err
        if out is None or out is Ellipsis:
            return empty("my_window_step(...)")
        try:
            row, keys, values = out
            row, keys, values = (np.asarray(a, dtype=float) for a in (row, keys, values))
        except (TypeError, ValueError):
            return wrong("my_window_step should return three things, (output, keys, values): the output "
                         f"row and the cache after this step; got {type(out).__name__}.", kind="wrong_type")
        if row.size != 2 or keys.ndim != 2 or keys.shape != values.shape:
            return wrong(f"got an output of shape {row.shape}, keys {keys.shape} and values {values.shape}: "
                         "return one output row (2 numbers) and the cached keys and values, one row per "
                         "token, oldest first.", kind="wrong_shape")
        rows.append(row.ravel())
        longest = max(longest, len(keys))
    mask = kv_designs.sliding_window_mask(n, _WINDOW)
    check = _compare(np.array(rows), _masked_rows(Q, K, V, mask), name="the decoded outputs", mistakes=[
        ("never_truncated", "the cache was never cut back: after appending, keep only the last `window` "
                            "rows (keys[-window:]), or it grows with the text and every token sees the "
                            "whole past.", _masked_rows(Q, K, V, core.causal_mask(n))),
        ("off_by_one", f"your cache keeps {_WINDOW + 1} tokens, one too many: the window counts the new "
                       f"token itself (0 ≤ i − j < window), so keep the last {_WINDOW} rows after "
                       "appending (cutting before appending leaves one extra).",
         _masked_rows(Q, K, V, kv_designs.sliding_window_mask(n, _WINDOW + 1))),
        ("off_by_one", f"your cache keeps {_WINDOW - 1} tokens, one too few: the window of {_WINDOW} "
                       "counts the new token itself and the ones just before it.",
         _masked_rows(Q, K, V, kv_designs.sliding_window_mask(n, _WINDOW - 1))),
    ])
    if not check:
        return check
    if longest > _WINDOW:
        return wrong(f"the outputs are right, but your cache held {longest} rows at one point: keep at "
                     f"most {_WINDOW}, so its memory stays fixed.", kind="mistake", mistake="never_truncated")
    return right(f"each step keeps the last {_WINDOW} keys and values, and the outputs equal full "
                 "attention with ah.sliding_window_mask(7, 3).")


# ---- exercise 2: attention with a sink per head --------------------------------------------------

def _sink_data():
    """Three heads and three tokens (so a sink broadcast along the wrong axis still runs)."""
    rng = np.random.default_rng(4)
    Q, K, V = (1.5 * rng.normal(size=(3, 3, 2)) for _ in range(3))
    return Q, K, V, np.array([0.5, -1.0, 2.0])


def _sink_weights(S, sinks, how="right"):
    top = S.max(axis=-1, keepdims=True)
    e = np.exp(S - top)
    if how == "some_rows":  # sinks [h] added to a [h, n] array: row i of every head gets sinks[i]
        return e / (e.sum(axis=-1) + np.exp(sinks[None, :] - top[..., 0]))[..., None]
    if how == "unshifted":
        return e / (e.sum(axis=-1, keepdims=True) + np.exp(sinks)[:, None, None])
    return e / (e.sum(axis=-1, keepdims=True) + np.exp(sinks[:, None, None] - top))


@checker
def check_sink_attention(fn) -> Check:
    """Check `fn(Q, K, V, sinks) -> (output, weights)`, Q [h, n, d], one sink logit per head."""
    Q, K, V, sinks = _sink_data()
    out, err = call(fn, Q.copy(), K.copy(), V.copy(), sinks.copy())
    if err is not None:
        return err
    if out is None or out is Ellipsis:
        return empty("my_sink_attention(...)")
    if not isinstance(out, tuple) or len(out) != 2:
        return wrong("my_sink_attention should return two things, (output, weights).", kind="wrong_type")
    output, weights = (array_answer(name, a) for a, name in zip(out, ("output", "weights")))
    for got in (output, weights):
        if isinstance(got, Check):
            return got
    if weights.shape == (3, 3, 4):
        return wrong("weights has a fourth column: that is the sink's weight. Drop it after the softmax "
                     "(weights[..., :-1]); the sink takes attention but adds no value.",
                     kind="mistake", mistake="sink_not_dropped")
    S = Q @ np.swapaxes(K, 1, 2) / np.sqrt(Q.shape[-1])
    check = _compare(weights, _sink_weights(S, sinks), name="weights", success="weights match", mistakes=[
        ("no_sink", "each row sums to 1, so the sink never joined the softmax: put each head's sink "
                    "logit into its rows' denominators, then drop it.", core.softmax(S)),
        ("sink_some_rows", "the right sink reached only some rows: sinks has one entry per head, so it "
                           "must line up with the head axis, sinks[:, None, None]; added to a [h, n] "
                           "array as it is, row i of every head got head i's sink.",
         _sink_weights(S, sinks, "some_rows")),
        ("sink_unshifted", "you shifted the scores by their row maximum but added exp(sink) unshifted: "
                           "shift the sink by the same maximum, exp(sink − max), or put the sink into "
                           "the row before the softmax.", _sink_weights(S, sinks, "unshifted")),
    ])
    if not check:
        return check
    check = compare(output, _sink_weights(S, sinks) @ V, name="output")
    if not check:
        return check
    sums = _sink_weights(S, sinks).sum(axis=-1)
    return right(f"each row's weights sum to less than 1 (from {sums.min():.2f} to {sums.max():.2f}): the "
                 "sink took the rest, and the output is weights · V.")


# ---- exercise 3: quantise per token -------------------------------------------------------------

def _quant_data():
    return np.array([[8.0, -3.0, 1.5, 0.2],
                     [0.06, -0.02, 0.04, 0.01],
                     [-1.2, 0.7, 0.3, -0.9]])


def _roundtrip(x, bits, axis=-1, q_max_of=lambda bits: 2 ** (bits - 1) - 1, rounding=np.round):
    q_max = q_max_of(bits)
    largest = np.abs(x).max() if axis is None else np.abs(x).max(axis=axis, keepdims=True)
    scale = largest / q_max
    return np.clip(rounding(x / scale), -q_max, q_max) * scale


@checker
def check_quantize_per_token(fn) -> Check:
    """Check `fn(x, bits) -> x_hat`: symmetric quantisation with one scale per token (row),
    q_max = 2^(bits−1) − 1, returning the dequantised values q · scale."""
    x = _quant_data()
    got = []
    for bits in (4, 8):
        out, err = call(fn, x.copy(), bits)
        if err is not None:
            return err
        arr = array_answer(f"my_quantize_per_token(x, {bits})", out)
        if isinstance(arr, Check):
            return arr
        got.append(arr)
    if any(a.shape != x.shape for a in got):
        return wrong(f"return x_hat with the shape of x, {x.shape}; got {got[0].shape}.", kind="wrong_shape")

    def both(**options):  # the round trip at 4 and at 8 bits
        return np.stack([_roundtrip(x, bits, **options) for bits in (4, 8)])

    return _compare(np.stack(got), both(), name="x_hat", mistakes=[
        ("not_rounded", "x_hat equals x: nothing was rounded. Divide by the scale, round to whole "
                        "numbers, clip to ±q_max, and multiply back.", np.stack([x, x])),
        ("scale_per_tensor", "you used one scale for the whole matrix: the small row 1 then rounds to 0 "
                             "or to coarse steps. Take each row's own largest |x| (axis=-1, keepdims=True).",
         both(axis=None)),
        ("scale_per_channel", "you took one scale per column (axis=0): the exercise asks for one per token, "
                              "that is per row (axis=-1, keepdims=True).", both(axis=0)),
        ("wrong_q_max", "your largest level is off: with b bits a symmetric code reaches q_max = "
                        "2**(bits-1) - 1 (7 for int4, 127 for int8), not 2**(bits-1).",
         both(q_max_of=lambda b: 2 ** (b - 1))),
        ("wrong_q_max", "your largest level is off: with b bits a symmetric code reaches q_max = "
                        "2**(bits-1) - 1 (7 for int4, 127 for int8), not 2**bits - 1.",
         both(q_max_of=lambda b: 2 ** b - 1)),
        ("not_nearest", "you rounded down (np.floor): round to the nearest level with np.round, so no "
                        "entry moves by more than half a step.", both(rounding=np.floor)),
        ("not_nearest", "int() or astype(int) cuts towards zero: round to the nearest level with np.round, "
                        "so no entry moves by more than half a step.", both(rounding=np.trunc)),
    ], success="one scale per row, rounded to the nearest of 2·q_max + 1 levels: every entry within half "
               "a step of x.")
