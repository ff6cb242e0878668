"""Checkers for notebook 06, the KV cache and grouped-query attention."""

from __future__ import annotations

import numpy as np

from .. import core, examples
from ._base import Check, call, checker, compare, empty, right, wrong
from ._mistakes import scaling_mistakes


@checker
def check_mistral_cache_bytes(answer) -> Check:
    """Check the KV-cache size in bytes of Mistral-7B for 3000 tokens kept in float32."""
    c = examples.mistral_cache_exercise()
    expected = core.kv_cache_bytes(c["n_layers"], c["n_kv_heads"], c["d_head"], c["seq_len"],
                                   bytes_per_value=c["bytes_per_value"])
    group = c["n_q_heads"] // c["n_kv_heads"]
    mistakes = {
        "half_size": (
            "that is half the answer: either the factor 2 for K and V is missing, or you kept "
            "kv_cache_bytes' default of 2 bytes per value (float16); float32 takes 4 bytes.",
            expected / 2),
        "query_heads": (
            f"you used the {c['n_q_heads']} query heads; only the {c['n_kv_heads']} KV heads are "
            "cached (several query heads share one KV head).",
            expected * group),
        "query_heads_and_half": (
            f"you used the {c['n_q_heads']} query heads (only the {c['n_kv_heads']} KV heads are cached) "
            "and 2 bytes per value (float32 takes 4).",
            expected * group / 2),
        "numbers_not_bytes": (
            "that counts numbers, not bytes: multiply by the bytes per value (4 for float32).",
            expected / c["bytes_per_value"]),
        "numbers_and_half": (
            "that counts numbers, not bytes, and misses the factor 2 for K and V: multiply by 2 "
            "(K and V) and by 4 (bytes per float32).",
            expected / (2 * c["bytes_per_value"])),
        "gib": (
            "that is the size in GiB; the exercise asks for bytes (do not divide by 2**30).",
            expected / 2**30),
        "mib": (
            "that is the size in MiB; the exercise asks for bytes (do not divide by 2**20).",
            expected / 2**20),
    }
    check = compare(answer, expected, name="my_cache_bytes", mistakes=mistakes,
                    success=f"{expected:,} bytes = {expected / 2**30:.3f} GiB: "
                            "2 × layers × KV heads × d_head × tokens × bytes per value.")
    if check.kind not in ("wrong_shape", "wrong_value", "transposed"):  # right, or a named mistake
        return check
    if np.size(answer) != 1:
        return wrong(f"my_cache_bytes should be one number (the bytes), got shape {np.shape(answer)}.",
                     kind="wrong_shape")
    # a generic miss: say what to multiply, without giving the number away
    return wrong(f"{float(np.asarray(answer, dtype=float).reshape(())):,.0f} is not the size yet: "
                 "multiply 2 (K and V) × layers × KV heads × d_head × tokens × bytes per value, "
                 "with the numbers in exercise_config.")


def _decode_example():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(6, 4))
    W_Q, W_K, W_V = (rng.normal(size=(4, 3)) for _ in range(3))
    return X, W_Q, W_K, W_V


@checker
def check_decode_step(fn) -> Check:
    """Check `fn(cache, x, W_Q, W_K, W_V) -> output row` for one decoding step.

    The cache starts with a 2-token prompt; fn is called once for each later
    token and must append that token's k and v, then attend over the whole cache.
    """
    X, W_Q, W_K, W_V = _decode_example()
    n, n_prompt = X.shape[0], 2
    d_v = W_V.shape[1]
    cache = core.KVCache()
    cache.append(X[:n_prompt] @ W_K, X[:n_prompt] @ W_V)
    rows = []
    for t in range(n_prompt, n):
        before = len(cache)
        out, err = call(fn, cache, X[t].copy(), W_Q.copy(), W_K.copy(), W_V.copy())
        if err is not None:
            return err
        if out is None or out is Ellipsis:
            return empty("my_decode_step(...)")
        if isinstance(out, tuple):
            out = out[0]
        try:
            out = np.asarray(out, dtype=float)
        except (TypeError, ValueError):
            return wrong(f"my_decode_step should return an array of numbers, got {type(out).__name__}.",
                         kind="not_numbers")
        if out.size != d_v:
            return wrong(f"my_decode_step returned shape {out.shape}; it should return the output "
                         f"row of the new token only, {d_v} numbers (one per value column).",
                         kind="wrong_shape")
        rows.append(out.reshape(d_v))
        grown = len(cache) - before
        if grown > 1:
            return wrong(f"the cache grew by {grown} rows in one step: append the new token's k and "
                         "v exactly once per step.", kind="mistake",
                         mistake="appended_twice")
    Q, K, V = core.project_qkv(X, W_Q, W_K, W_V)
    d_k = Q.shape[1]
    expected = core.scaled_dot_product_attention(Q, K, V, mask=core.causal_mask(n))[0][n_prompt:]
    strictly_past = np.tril(np.ones((n, n), dtype=bool), k=-1)

    def attend(factor):  # causal attention with the scores multiplied by `factor`, new tokens only
        return (core.softmax(np.where(core.causal_mask(n), Q @ K.T * factor, -np.inf)) @ V)[n_prompt:]

    check = compare(np.array(rows), expected, name="the decoded outputs", mistakes={
        "cache_never_grew": (
            "the cache never grew: append the new token's k and v (cache.append(k, v)) before "
            "attending, or the new token cannot see itself.",
            core.scaled_dot_product_attention(Q[n_prompt:], K[:n_prompt], V[:n_prompt])[0]),
        "attended_before_append": (
            "you attended before appending: the new token must see its own key too, so call "
            "cache.append(k, v) first and then attend over cache.keys and cache.values.",
            core.scaled_dot_product_attention(Q[n_prompt:], K, V, mask=strictly_past[n_prompt:])[0]),
        "new_key_only": (
            "you attended over the new key only (the output is just v): use all cached keys and "
            "values, cache.keys and cache.values.",
            V[n_prompt:]),
        **scaling_mistakes(attend, d_k, scores="q · Kᵀ"),
        "returned_query": (
            "you returned the query q = x·W_Q, not the attention output softmax(q·Kᵀ/√d_k)·V.",
            Q[n_prompt:]),
    })
    if not check:
        return check
    if len(cache) != n or not np.allclose(cache.keys, K) or not np.allclose(cache.values, V):
        return wrong("the outputs are right but the cache does not hold k = x·W_K and v = x·W_V of "
                     "every token: append exactly those rows, keys first, then values.", kind="mistake",
                     mistake="wrong_cache_rows")
    return right(f"each step appends one key and value and attends over all {n} cached tokens by the "
                 "end; the outputs equal full causal attention.")


@checker
def check_kv_head(fn) -> Check:
    """Check `fn(h, h_q, h_kv) -> index of the KV head that query head h reads`."""
    cases = [(8, 8), (8, 2), (8, 1), (6, 3), (32, 8)]
    got, expected, interleaved, by_h_kv = [], [], [], []
    for h_q, h_kv in cases:
        for h in range(h_q):
            out, err = call(fn, h, h_q, h_kv)
            if err is not None:
                return err
            if out is None or out is Ellipsis:
                return empty(f"my_kv_head({h}, {h_q}, {h_kv})")
            got.append(out)
            expected.append(h // (h_q // h_kv))
            interleaved.append(h % h_kv)
            by_h_kv.append(h // h_kv)
    return compare(got, expected, name="the KV head indices", mistakes={
        "interleaved": (
            "you dealt the query heads out in turn (h % h_kv); the heads are grouped in blocks: "
            "heads 0 … group-1 share KV head 0, the next block KV head 1, with group = h_q // h_kv.",
            interleaved),
        "divided_by_h_kv": (
            "you divided by h_kv; divide by the group size h_q // h_kv (the number of query heads "
            "per KV head).",
            by_h_kv),
    }, success="query head h reads KV head h // (h_q // h_kv): consecutive blocks of query heads share one.")
