"""Notebook 06 (KV cache and GQA): the reference solutions pass their checkers,
and each typical wrong answer is named by its own mistake key."""

from pathlib import Path

import numpy as np
import pytest

import attention_helpers as ah
import solutions.nb06 as sol
from attention_helpers.checks import check_decode_step, check_kv_head, check_mistral_cache_bytes
from tools.notebooks import notebook_value

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "06_kv_cache_gqa.ipynb"


# ---- exercise 1: the cache size of Mistral-7B in float32 -------------------------

def test_cache_bytes_solution_passes():
    check = check_mistral_cache_bytes(sol.my_cache_bytes)
    assert check, check.text
    assert sol.my_cache_bytes == 2 * 32 * 8 * 128 * 3000 * 4 == 786_432_000


N = sol.my_cache_bytes


@pytest.mark.parametrize("answer, kind, mistake", [
    (N // 2, "mistake", "half_size"),
    (2 * 32 * 8 * 128 * 3000 * 2, "mistake", "half_size"),  # kv_cache_bytes without bytes_per_value=4
    (N * 4, "mistake", "query_heads"),
    (N * 2, "mistake", "query_heads_and_half"),
    (N // 4, "mistake", "numbers_not_bytes"),
    (N // 8, "mistake", "numbers_and_half"),
    (N / 2**30, "mistake", "gib"),
    (750, "mistake", "mib"),
    (None, "empty", None),
    ("0.73 GiB", "not_numbers", None),
])
def test_cache_bytes_mistakes_are_named(answer, kind, mistake):
    check = check_mistral_cache_bytes(answer)
    assert (check.kind, check.mistake) == (kind, mistake), check.text


def test_cache_bytes_generic_hint_does_not_give_the_answer_away():
    check = check_mistral_cache_bytes(12345)
    assert (check.kind, check.mistake) == ("wrong_value", None)
    assert "12,345" in check.hint  # it says what the student gave, and not the answer
    assert "786432000" not in check.hint and "786,432,000" not in check.hint and "expected" not in check.hint
    assert check_mistral_cache_bytes([1, 2]).kind == "wrong_shape"


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
    assert check, check.text


def test_decode_step_accepts_a_row_of_shape_1_by_d_v():
    assert check_decode_step(lambda *args: sol.my_decode_step(*args)[None, :])


@pytest.mark.parametrize("fn, kind, mistake", [
    (attend_then_append, "mistake", "attended_before_append"),
    (never_append, "mistake", "cache_never_grew"),
    (new_key_only, "mistake", "new_key_only"),
    (unscaled, "mistake", "no_scale"),
    (divided_by_d_k, "mistake", "divided_by_d_k"),
    (append_twice, "mistake", "appended_twice"),
    (returns_query, "mistake", "returned_query"),
    (returns_all_rows, "wrong_shape", None),
    (raises, "raised", None),
    (lambda cache, x, W_Q, W_K, W_V: None, "empty", None),
])
def test_decode_step_mistakes_are_named(fn, kind, mistake):
    check = check_decode_step(fn)
    assert (check.kind, check.mistake) == (kind, mistake), check.text


def test_decode_step_checks_what_was_cached():
    def caches_queries(cache, x, W_Q, W_K, W_V):
        if len(cache) < 5:
            return sol.my_decode_step(cache, x, W_Q, W_K, W_V)
        # the last step attends over the right keys, then caches the query in place of the key:
        # right outputs, wrong cache
        K, V = np.vstack([cache.keys, x @ W_K]), np.vstack([cache.values, x @ W_V])
        out, _ = ah.scaled_dot_product_attention((x @ W_Q)[None, :], K, V)
        cache.append(x @ W_Q, x @ W_V)
        return out[0]

    check = check_decode_step(caches_queries)
    assert (check.kind, check.mistake) == ("mistake", "wrong_cache_rows"), check.text


# ---- exercise 3: which KV head a query head reads ------------------------------------

def test_kv_head_solution_passes():
    check = check_kv_head(sol.my_kv_head)
    assert check, check.text


@pytest.mark.parametrize("fn, kind, mistake", [
    (lambda i, h_q, h_kv: i % h_kv, "mistake", "interleaved"),
    (lambda i, h_q, h_kv: i // h_kv, "mistake", "divided_by_h_kv"),
    (lambda i, h_q, h_kv: None, "empty", None),
    (lambda i, h_q, h_kv: 0, "wrong_value", None),
])
def test_kv_head_mistakes_are_named(fn, kind, mistake):
    check = check_kv_head(fn)
    assert (check.kind, check.mistake) == (kind, mistake), check.text


# ---- the notebook shows the configuration the checker uses ------------------------

def test_notebook_exercise_config_matches_the_solution():
    assert notebook_value(NOTEBOOK, "exercise_config") == ah.examples.mistral_cache_exercise()
