"""Notebook 06 (KV cache and GQA): the reference solutions pass their checkers,
and each typical wrong answer gets its own hint."""

from pathlib import Path

import numpy as np
import pytest

import attention_helpers as ah
from attention_helpers.checks import check_decode_step, check_kv_head, check_mistral_cache_bytes
from tools.notebooks import hint as _message
from tools.notebooks import load_solutions, notebook_value

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "06_kv_cache_gqa.ipynb"


sol = load_solutions("06")


# ---- exercise 1: the cache size of Mistral-7B in float32 -------------------------

def test_cache_bytes_solution_passes():
    check = check_mistral_cache_bytes(sol.my_cache_bytes)
    assert check, check.message
    assert sol.my_cache_bytes == 2 * 32 * 8 * 128 * 3000 * 4 == 786_432_000


N = sol.my_cache_bytes


@pytest.mark.parametrize("answer, fragment", [
    (N // 2, "the factor 2 for K and V is missing"),
    (2 * 32 * 8 * 128 * 3000 * 2, "default of 2 bytes per value"),  # kv_cache_bytes without bytes_per_value=4
    (N * 4, "you used the 32 query heads; only the 8 KV heads"),
    (N * 2, "and 2 bytes per value"),
    (N // 4, "that counts numbers, not bytes: multiply by the bytes per value"),
    (N // 8, "misses the factor 2 for K and V"),
    (N / 2**30, "size in GiB"),
    (750, "size in MiB"),
    (None, "still empty"),
    ("0.73 GiB", "should be an array of numbers"),
])
def test_cache_bytes_mistakes_get_their_hint(answer, fragment):
    assert fragment in _message(check_mistral_cache_bytes(answer))


def test_cache_bytes_generic_hint_does_not_give_the_answer_away():
    message = _message(check_mistral_cache_bytes(12345))
    assert "12,345 is not the size yet" in message
    assert "786432000" not in message and "786,432,000" not in message and "expected" not in message
    assert "one number" in _message(check_mistral_cache_bytes([1, 2]))


# ---- exercise 2: one decoding step -------------------------------------------------

def _attend(q, K, V, scale=True):
    scores = K @ q / (np.sqrt(q.shape[0]) if scale else 1.0)
    w = np.exp(scores - scores.max())
    return (w / w.sum()) @ V


def attend_then_append(cache, x, W_Q, W_K, W_V):
    q, k, v = x @ W_Q, x @ W_K, x @ W_V
    out = _attend(q, cache.keys, cache.values)
    cache.append(k, v)
    return out


def never_append(cache, x, W_Q, W_K, W_V):
    return _attend(x @ W_Q, cache.keys, cache.values)


def new_key_only(cache, x, W_Q, W_K, W_V):
    q, k, v = x @ W_Q, x @ W_K, x @ W_V
    cache.append(k, v)
    return _attend(q, k[None, :], v[None, :])


def unscaled(cache, x, W_Q, W_K, W_V):
    q, k, v = x @ W_Q, x @ W_K, x @ W_V
    cache.append(k, v)
    return _attend(q, cache.keys, cache.values, scale=False)


def divided_by_d_k(cache, x, W_Q, W_K, W_V):
    q, k, v = x @ W_Q, x @ W_K, x @ W_V
    cache.append(k, v)
    return _attend(q / np.sqrt(q.shape[0]), cache.keys, cache.values)


def append_twice(cache, x, W_Q, W_K, W_V):
    cache.append(x @ W_K, x @ W_V)
    return sol.my_decode_step(cache, x, W_Q, W_K, W_V)


def returns_query(cache, x, W_Q, W_K, W_V):
    cache.append(x @ W_K, x @ W_V)
    return x @ W_Q


def returns_all_rows(cache, x, W_Q, W_K, W_V):
    sol.my_decode_step(cache, x, W_Q, W_K, W_V)
    return cache.values


def raises(cache, x, W_Q, W_K, W_V):
    return x @ W_Q.T


def test_decode_step_solution_passes():
    check = check_decode_step(sol.my_decode_step)
    assert check, check.message
    assert check.message.startswith("✅")


def test_decode_step_accepts_a_row_of_shape_1_by_d_v():
    assert check_decode_step(lambda *args: sol.my_decode_step(*args)[None, :])


@pytest.mark.parametrize("fn, fragment", [
    (attend_then_append, "you attended before appending"),
    (never_append, "the cache never grew"),
    (new_key_only, "you attended over the new key only"),
    (unscaled, "you forgot to scale"),
    (divided_by_d_k, "divided by d_k instead of sqrt(d_k)"),
    (append_twice, "the cache grew by 2 rows in one step"),
    (returns_query, "you returned the query"),
    (returns_all_rows, "the output row of the new token only"),
    (raises, "your function raised ValueError"),
    (lambda cache, x, W_Q, W_K, W_V: None, "still empty"),
])
def test_decode_step_mistakes_get_their_hint(fn, fragment):
    assert fragment in _message(check_decode_step(fn))


def test_decode_step_checks_what_was_cached():
    def caches_queries(cache, x, W_Q, W_K, W_V):
        out = sol.my_decode_step(cache, x, W_Q, W_K, W_V)
        if len(cache) == 6:  # after the last step: right outputs, but a query stored as the last key
            cache._keys[-1] = (x @ W_Q)[None, :]
        return out

    assert "the cache does not hold k = x·W_K" in _message(check_decode_step(caches_queries))


# ---- exercise 3: which KV head a query head reads ------------------------------------

def test_kv_head_solution_passes():
    check = check_kv_head(sol.my_kv_head)
    assert check, check.message


@pytest.mark.parametrize("fn, fragment", [
    (lambda i, h_q, h_kv: i % h_kv, "dealt the query heads out in turn"),
    (lambda i, h_q, h_kv: i // h_kv, "you divided by h_kv"),
    (lambda i, h_q, h_kv: None, "still empty"),
    (lambda i, h_q, h_kv: 0, "differs at index"),
])
def test_kv_head_mistakes_get_their_hint(fn, fragment):
    assert fragment in _message(check_kv_head(fn))


# ---- the notebook shows the configuration the checker uses ------------------------

def test_notebook_exercise_config_matches_the_solution():
    assert notebook_value(NOTEBOOK, "exercise_config") == ah.examples.mistral_cache_exercise()
