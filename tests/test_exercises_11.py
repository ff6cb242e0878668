"""Notebook 11 (KV-cache designs): the reference solutions pass their checkers, and each
classic slip is recognised by its key (check.mistake), never by the hint's wording."""

import numpy as np
import pytest

import solutions.nb11 as sol
from attention_helpers.checks import check_quantize_per_token, check_sink_attention, check_window_step


def failed(check, kind, mistake=None):
    assert not check and check.text.startswith("❌")
    assert check.kind == kind, (check.kind, check.hint)
    assert check.mistake == mistake, (check.mistake, check.hint)
    return True


# ---- exercise 1: a sliding-window decoding step ---------------------------------------------

def attend(q, keys, values):
    s = keys @ q / np.sqrt(q.size)
    w = np.exp(s - s.max())
    return (w / w.sum()) @ values


def never_truncated(keys, values, k, v, q, window):
    keys, values = np.vstack([keys, k]), np.vstack([values, v])
    return attend(q, keys, values), keys, values


def cut_before_append(keys, values, k, v, q, window):            # keeps window + 1 rows
    keys, values = np.vstack([keys[-window:], k]), np.vstack([values[-window:], v])
    return attend(q, keys, values), keys, values


def keeps_one_too_few(keys, values, k, v, q, window):
    keys, values = np.vstack([keys, k])[-(window - 1):], np.vstack([values, v])[-(window - 1):]
    return attend(q, keys, values), keys, values


def truncates_but_reports_all(keys, values, k, v, q, window):   # right outputs, a cache that grows
    out, _, _ = sol.my_window_step(keys, values, k, v, q, window)
    return out, np.vstack([keys, k]), np.vstack([values, v])


def attend_before_append(keys, values, k, v, q, window):
    out = attend(q, keys, values)                                 # empty cache at the first token
    return out, np.vstack([keys, k])[-window:], np.vstack([values, v])[-window:]


def test_window_step_solution_passes():
    check = check_window_step(sol.my_window_step)
    assert check and check.kind == "right", check.text


@pytest.mark.parametrize("fn, kind, mistake", [
    (never_truncated, "mistake", "never_truncated"),
    (cut_before_append, "mistake", "off_by_one"),
    (keeps_one_too_few, "mistake", "off_by_one"),
    (truncates_but_reports_all, "mistake", "never_truncated"),
    (attend_before_append, "raised", None),
    (lambda *a: None, "empty", None),
    (lambda *a: sol.my_window_step(*a)[0], "wrong_type", None),
])
def test_window_step_slips_are_named(fn, kind, mistake):
    assert failed(check_window_step(fn), kind, mistake)


def test_window_step_unscaled_is_a_plain_wrong_value():
    def unscaled(keys, values, k, v, q, window):
        keys, values = np.vstack([keys, k])[-window:], np.vstack([values, v])[-window:]
        return attend(q * np.sqrt(q.size), keys, values), keys, values
    assert failed(check_window_step(unscaled), "wrong_value")


# ---- exercise 2: sinks ----------------------------------------------------------------------------

def scores_of(Q, K):
    return Q @ np.swapaxes(K, 1, 2) / np.sqrt(Q.shape[-1])


def no_sink(Q, K, V, sinks):
    e = np.exp(scores_of(Q, K))
    w = e / e.sum(-1, keepdims=True)
    return w @ V, w


def sink_broadcast_on_rows(Q, K, V, sinks):                      # [h, n] + [h]: the classic slip
    S = scores_of(Q, K)
    top = S.max(-1)
    e = np.exp(S - top[..., None])
    w = e / (e.sum(-1) + np.exp(sinks - top))[..., None]
    return w @ V, w


def sink_unshifted(Q, K, V, sinks):
    S = scores_of(Q, K)
    e = np.exp(S - S.max(-1, keepdims=True))
    w = e / (e.sum(-1, keepdims=True) + np.exp(sinks)[:, None, None])
    return w @ V, w


def sink_kept(Q, K, V, sinks):
    S = scores_of(Q, K)
    row = np.concatenate([S, np.broadcast_to(sinks[:, None, None], S.shape[:2] + (1,))], -1)
    w = np.exp(row) / np.exp(row).sum(-1, keepdims=True)
    return w[..., :-1] @ V, w


def wrong_output(Q, K, V, sinks):
    out, w = sol.my_sink_attention(Q, K, V, sinks)
    return out + 1.0, w


def test_sink_solution_passes():
    check = check_sink_attention(sol.my_sink_attention)
    assert check and check.kind == "right", check.text


@pytest.mark.parametrize("fn, kind, mistake", [
    (no_sink, "mistake", "no_sink"),
    (sink_broadcast_on_rows, "mistake", "sink_some_rows"),
    (sink_unshifted, "mistake", "sink_unshifted"),
    (sink_kept, "mistake", "sink_not_dropped"),
    (wrong_output, "wrong_value", None),
    (lambda Q, K, V, sinks: sol.my_sink_attention(Q, K, V, sinks)[0], "wrong_type", None),
    (lambda Q, K, V, sinks: None, "empty", None),
    (lambda Q, K, V, sinks: Q @ K, "raised", None),
])
def test_sink_slips_are_named(fn, kind, mistake):
    assert failed(check_sink_attention(fn), kind, mistake)


def test_the_unshifted_slip_is_right_on_a_row_whose_maximum_is_zero():
    # why the slip hides: exp(sink − 0) = exp(sink), so such rows agree with the right answer
    Q, K = np.zeros((1, 1, 2)), np.ones((1, 3, 2))
    V, sinks = np.ones((1, 3, 2)), np.array([0.7])
    assert np.allclose(sink_unshifted(Q, K, V, sinks)[1], sol.my_sink_attention(Q, K, V, sinks)[1])


# ---- exercise 3: quantise per token -----------------------------------------------------------------

def roundtrip(x, bits, axis=-1, q_max=None, rounding=np.round):
    q_max = 2 ** (bits - 1) - 1 if q_max is None else q_max
    scale = (np.abs(x).max() if axis is None else np.abs(x).max(axis=axis, keepdims=True)) / q_max
    return np.clip(rounding(x / scale), -q_max, q_max) * scale


def test_quantize_solution_passes():
    check = check_quantize_per_token(sol.my_quantize_per_token)
    assert check and check.kind == "right", check.text


@pytest.mark.parametrize("fn, kind, mistake", [
    (lambda x, bits: roundtrip(x, bits, axis=None), "mistake", "scale_per_tensor"),
    (lambda x, bits: roundtrip(x, bits, axis=0), "mistake", "scale_per_channel"),
    (lambda x, bits: roundtrip(x, bits, q_max=2 ** (bits - 1)), "mistake", "wrong_q_max"),
    (lambda x, bits: roundtrip(x, bits, q_max=2 ** bits - 1), "mistake", "wrong_q_max"),
    (lambda x, bits: roundtrip(x, bits, rounding=np.floor), "mistake", "not_nearest"),
    (lambda x, bits: roundtrip(x, bits, rounding=np.trunc), "mistake", "not_nearest"),
    (lambda x, bits: x, "mistake", "not_rounded"),
    (lambda x, bits: roundtrip(x, bits).T, "wrong_shape", None),
    (lambda x, bits: None, "empty", None),
    (lambda x, bits: roundtrip(x, bits) + 0.01, "wrong_value", None),
])
def test_quantize_slips_are_named(fn, kind, mistake):
    assert failed(check_quantize_per_token(fn), kind, mistake)


def test_per_tensor_loses_the_small_row_at_int4():
    # the reason the slip matters: with one scale 8/7 the row of size 0.06 rounds to zeros
    x = np.array([[8.0, -3.0], [0.06, -0.02]])
    assert np.all(roundtrip(x, 4, axis=None)[1] == 0)
    assert np.all(sol.my_quantize_per_token(x, 4)[1] != 0)
