"""The math of attention in plain NumPy: no plotting, no widgets.

Every public function checks its inputs and raises a ValueError or TypeError
that names the argument, the shape it expected and the shape it got, so that a
student who edits a cell wrongly reads what to fix instead of a broadcasting
trace from deep inside NumPy.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "softmax",
    "project_qkv",
    "scaled_dot_product_attention",
    "causal_mask",
    "padding_mask",
    "self_attention",
    "multi_head_attention",
    "grouped_query_attention",
    "KVCache",
    "kv_cache_bytes",
    "positional_encoding",
    "apply_rope",
    "tiled_attention",
]


# --------------------------------------------------------------------------
# Input checks: one place that turns bad input into a clear message. validate_qkv,
# validate_mask and validate_projections are for the package's other modules too (the
# exercise checkers, ah.checks.check_…, are another thing).
# --------------------------------------------------------------------------

def _array(name: str, value, *, ndim: int | None = None, min_ndim: int | None = None,
           allow_neg_inf: bool = False) -> np.ndarray:
    """Return `value` as a float array, or raise naming `name`."""
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(f"{name} must be a numeric array, got {type(value).__name__}")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as err:
        raise TypeError(
            f"{name} must be a numeric array (a list of equal-length rows or a NumPy array); "
            f"could not read it as numbers: {err}"
        ) from None
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {arr.shape} ({arr.ndim}-D)")
    if min_ndim is not None and arr.ndim < min_ndim:
        raise ValueError(
            f"{name} must have at least {min_ndim} dimensions [..., rows, columns], "
            f"got shape {arr.shape} ({arr.ndim}-D)"
        )
    bad = np.isnan(arr) | (np.isposinf(arr) if allow_neg_inf else np.isinf(arr))
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"{name} (shape {arr.shape}) must hold finite numbers; "
            f"found {arr[where]} at index {where}"
        )
    return arr


def _positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be a whole number, got {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, got {value}")
    return int(value)


def validate_qkv(Q, K, V, *, broadcast: bool = True):
    """Q, K and V as float arrays, checked to fit attention, or a ValueError/TypeError that
    names the argument, the shape it needs and the shape it has.

    Q is [..., n_q, d_k], K is [..., n_k, d_k], V is [..., n_k, d_v]. With
    broadcast=True the leading (batch/head) dimensions must broadcast together;
    grouped-query attention, whose head counts differ on purpose, passes False.
    """
    Q = _array("Q", Q, min_ndim=2)
    K = _array("K", K, min_ndim=2)
    V = _array("V", V, min_ndim=2)
    d_k, n_k = Q.shape[-1], K.shape[-2]
    if K.shape[-1] != d_k:
        raise ValueError(f"K has shape {K.shape}; Q has d_k={d_k} columns, so K must be (..., n_k, {d_k})")
    if V.shape[-2] != n_k:
        raise ValueError(f"V has shape {V.shape}; K has n_k={n_k} rows, so V must be (..., {n_k}, d_v): "
                         "one value row per key")
    if broadcast:
        try:
            np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
        except ValueError:
            raise ValueError(f"the leading (batch/head) dimensions of Q {Q.shape}, K {K.shape} and "
                             f"V {V.shape} do not broadcast together") from None
    return Q, K, V


def validate_mask(mask, shape) -> np.ndarray:
    """`mask` as a boolean array that fits scores of `shape` (..., n_q, n_k), or a clear error.

    True = may attend. The mask must end in (n_q, n_k), or in (1, n_k) to apply
    one row to every query; its leading dimensions must broadcast with those of
    `shape`; and every query row must keep at least one key (a row with none
    would be a silent NaN).
    """
    *lead, n_q, n_k = shape
    m = np.asarray(mask)
    if m.dtype != bool:
        raise TypeError(
            f"mask must be a boolean array (True = may attend), got dtype {m.dtype}; "
            "build one with causal_mask(n) or a comparison such as scores > 0"
        )
    if m.ndim < 2 or m.shape[-2] not in (1, n_q) or m.shape[-1] != n_k:
        raise ValueError(
            f"mask has shape {m.shape}; with {n_q} queries and {n_k} keys it must end in "
            f"({n_q}, {n_k}), or in (1, {n_k}) to apply one row to every query"
        )
    try:
        np.broadcast_shapes(tuple(lead), m.shape[:-2])
    except ValueError:
        raise ValueError(f"mask has shape {m.shape}; its leading dimensions {m.shape[:-2]} do not "
                         f"broadcast with the scores' {tuple(lead)}") from None
    if not m.any(axis=-1).all():
        row = tuple(int(i) for i in np.argwhere(~m.any(axis=-1))[0])
        raise ValueError(
            f"mask (shape {m.shape}) hides every key from query row {row}: "
            "that row would have no weights at all (a silent NaN), so at least one "
            "entry per row must be True"
        )
    return m


def validate_projections(X, W_Q, W_K, W_V, *, batched: bool = False):
    """X [n, d_model] (or [..., n, d_model] when batched) and the weights W_Q, W_K
    [d_model, d_k], W_V [d_model, d_v] as float arrays, or a clear error naming the
    one that does not fit."""
    X = _array("X", X, min_ndim=2) if batched else _array("X", X, ndim=2)
    d_model = X.shape[-1]
    Ws = []
    for name, W in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)):
        W = _array(name, W, ndim=2)
        if W.shape[0] != d_model:
            cols = "d_v" if name == "W_V" else "d_k"
            raise ValueError(f"{name} has shape {W.shape}; X has d_model={d_model} columns, "
                             f"so {name} must be ({d_model}, {cols}): {d_model} rows, one per column of X")
        Ws.append(W)
    if Ws[0].shape[1] != Ws[1].shape[1]:
        raise ValueError(f"W_Q has shape {Ws[0].shape} and W_K has shape {Ws[1].shape}; queries and "
                         "keys are compared by a dot product, so both need the same d_k columns")
    return (X, *Ws)


def rotate_pairs(x, angle) -> np.ndarray:
    """Turn each pair (2i, 2i+1) of x's last axis counter-clockwise by angle[..., i].

        out[2i]   = x[2i] · cos(angle) − x[2i+1] · sin(angle)
        out[2i+1] = x[2i] · sin(angle) + x[2i+1] · cos(angle)

    `angle` broadcasts against x's pairs (shape [..., d/2]); a 2-vector and a
    number turn one pair. The rotation RoPE applies; unchecked, for callers
    that have checked their input.
    """
    x = np.asarray(x, dtype=float)
    even, odd = x[..., 0::2], x[..., 1::2]
    cos, sin = np.cos(angle), np.sin(angle)
    out = np.empty(np.broadcast_shapes(x.shape[:-1] + (x.shape[-1] // 2,), np.shape(angle))[:-1]
                   + (x.shape[-1],))
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out


# --------------------------------------------------------------------------
# Softmax
# --------------------------------------------------------------------------

def softmax(x, axis: int = -1) -> np.ndarray:
    """Turn scores into probabilities along `axis` (each slice sums to 1).

    The maximum is subtracted first, so inputs such as 800 or 1e308 stay
    finite: exp(x - max) is at most 1. An entry of -inf gets probability 0
    (that is how masking works); a slice that is -inf everywhere raises.
    """
    arr = _array("x", x, min_ndim=1, allow_neg_inf=True)
    if not -arr.ndim <= axis < arr.ndim:
        raise ValueError(f"axis={axis} is out of range for x with shape {arr.shape}")
    top = arr.max(axis=axis, keepdims=True)
    if np.isneginf(top).any():
        raise ValueError(
            f"x (shape {arr.shape}) has a slice along axis {axis} that is -inf everywhere: "
            "nothing to attend to, so its probabilities are undefined"
        )
    with np.errstate(over="ignore"):  # (-1e308) - 1e308 = -inf, whose exp is exactly 0
        e = np.exp(arr - top)
    return e / e.sum(axis=axis, keepdims=True)


# --------------------------------------------------------------------------
# Projections and attention
# --------------------------------------------------------------------------

def project_qkv(X, W_Q, W_K, W_V):
    """Q = X·W_Q, K = X·W_K, V = X·W_V for X of shape [n, d_model]."""
    X, W_Q, W_K, W_V = validate_projections(X, W_Q, W_K, W_V)
    return X @ W_Q, X @ W_K, X @ W_V


def causal_mask(n: int) -> np.ndarray:
    """Boolean [n, n]: True on and below the diagonal (a token sees itself and the past)."""
    n = _positive_int("n", n)
    return np.tril(np.ones((n, n), dtype=bool))


def padding_mask(lengths, n: int) -> np.ndarray:
    """Boolean [batch, 1, n]: True where key j is a real token of sentence b (j < lengths[b]).

    The middle axis of size 1 applies each sentence's row to all its queries;
    combine it with the causal mask by `&`: padding_mask(lengths, n) & causal_mask(n).
    """
    n = _positive_int("n", n)
    lengths = np.asarray(lengths)
    if lengths.ndim != 1 or not np.issubdtype(lengths.dtype, np.integer):
        raise TypeError(f"lengths must be a 1-D list of whole numbers (one per sentence), got {lengths!r}")
    if ((lengths < 1) | (lengths > n)).any():
        raise ValueError(f"every length must be between 1 and n={n}, got lengths {lengths.tolist()}")
    return np.arange(n)[None, None, :] < lengths[:, None, None]


def scaled_dot_product_attention(Q, K, V, mask=None):
    """softmax(Q·Kᵀ / √d_k) · V, returning (output, weights).

    Q is [..., n_q, d_k], K is [..., n_k, d_k], V is [..., n_k, d_v]; leading
    batch or head dimensions broadcast. `mask` is boolean, True = may attend.
    """
    Q, K, V = validate_qkv(Q, K, V)
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        m = validate_mask(mask, scores.shape)
        scores = np.where(m, scores, -np.inf)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights


def self_attention(X, W_Q, W_K, W_V, mask=None):
    """Project X to Q, K, V and attend: everything comes from the same sequence."""
    Q, K, V = project_qkv(X, W_Q, W_K, W_V)
    return scaled_dot_product_attention(Q, K, V, mask=mask)


def multi_head_attention(X, W_Q, W_K, W_V, W_O, n_heads, mask=None):
    """Multi-head self-attention, returning (output, weights).

    X is [..., n, d_model]. Head h uses columns h·d_head … (h+1)·d_head − 1 of
    W_Q, W_K and W_V; each head attends on its own (scaled by its own √d_head),
    the heads' outputs are put side by side again and mixed by W_O:
    output = concat(head_0, …, head_{h-1}) · W_O, shape [..., n, W_O.shape[1]];
    weights are [..., n_heads, n, n]. `mask` (True = may attend) is one mask
    for every head: [n, n], or [batch, 1, n] from padding_mask.
    """
    X, W_Q, W_K, W_V = validate_projections(X, W_Q, W_K, W_V, batched=True)
    n_heads = _positive_int("n_heads", n_heads)
    n = X.shape[-2]
    for name, W in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)):
        if W.shape[1] % n_heads:
            raise ValueError(
                f"{name} has {W.shape[1]} columns (shape {W.shape}), which do not split into "
                f"n_heads={n_heads} equal heads: d_model must be divisible by n_heads"
            )
    W_O = _array("W_O", W_O, ndim=2)
    if W_O.shape[0] != W_V.shape[1]:
        raise ValueError(
            f"W_O has shape {W_O.shape}; the heads put side by side have {W_V.shape[1]} "
            f"columns (the columns of W_V), so W_O must have {W_V.shape[1]} rows"
        )

    Q, K, V = (split_heads(X @ W, n_heads) for W in (W_Q, W_K, W_V))
    if mask is not None:
        mask = validate_mask(mask, X.shape[:-2] + (n, n))[..., None, :, :]  # the same mask for every head
    heads, weights = scaled_dot_product_attention(Q, K, V, mask=mask)
    return merge_heads(heads) @ W_O, weights


def split_heads(M, n_heads: int):
    """[..., n, n_heads·d] -> [..., n_heads, n, d]: head h takes columns h·d … (h+1)·d − 1."""
    return np.swapaxes(M.reshape(*M.shape[:-1], n_heads, M.shape[-1] // n_heads), -2, -3)


def merge_heads(H):
    """[..., n_heads, n, d] -> [..., n, n_heads·d]: the heads side by side again (split_heads undone)."""
    return np.swapaxes(H, -2, -3).reshape(*H.shape[:-3], H.shape[-2], -1)


def grouped_query_attention(Q, K, V, mask=None):
    """Attention where groups of query heads share one key/value head.

    Q is [h_q, n_q, d_k]; K is [h_kv, n_k, d_k] and V is [h_kv, n_k, d_v].
    Query head h reads KV head h // (h_q // h_kv). h_kv == h_q is ordinary
    multi-head attention, h_kv == 1 is multi-query attention (MQA).
    """
    Q, K, V = validate_qkv(Q, K, V, broadcast=False)
    for name, M in (("Q", Q), ("K", K), ("V", V)):
        if M.ndim != 3:
            raise ValueError(f"{name} must be 3-D, got shape {M.shape} ({M.ndim}-D): "
                             "[heads, tokens, columns]")
    h_q, h_kv = Q.shape[0], K.shape[0]
    if V.shape[0] != h_kv:
        raise ValueError(
            f"K has shape {K.shape} and V has shape {V.shape}; both need the same number of "
            f"KV heads (first dimension), got {h_kv} and {V.shape[0]}"
        )
    if h_q % h_kv:
        raise ValueError(
            f"Q has {h_q} query heads (shape {Q.shape}) and K has {h_kv} KV heads "
            f"(shape {K.shape}); h_q must be a multiple of h_kv so that each KV head "
            "serves a whole group of query heads"
        )
    group = h_q // h_kv
    K_full = np.repeat(K, group, axis=0)  # head i -> KV head i // group
    V_full = np.repeat(V, group, axis=0)
    return scaled_dot_product_attention(Q, K_full, V_full, mask=mask)


# --------------------------------------------------------------------------
# KV cache
# --------------------------------------------------------------------------

class KVCache:
    """Keys and values of the tokens generated so far, grown one step at a time.

    >>> cache = KVCache()
    >>> cache.append(k_new, v_new)     # k_new: [d_k] or [n_new, d_k]
    >>> cache.keys, cache.values       # [n_cached, d_k], [n_cached, d_v]
    """

    def __init__(self):
        self._keys: list[np.ndarray] = []
        self._values: list[np.ndarray] = []

    def append(self, k, v) -> None:
        k = np.atleast_2d(_array("k", k))
        v = np.atleast_2d(_array("v", v))
        if k.ndim != 2 or v.ndim != 2:
            raise ValueError(f"k and v must be [d] or [n_new, d]; got k {k.shape}, v {v.shape}")
        if k.shape[0] != v.shape[0]:
            raise ValueError(
                f"k has shape {k.shape} and v has shape {v.shape}; they must hold the same "
                "number of new tokens (rows)"
            )
        if self._keys:
            d_k, d_v = self._keys[0].shape[1], self._values[0].shape[1]
            if k.shape[1] != d_k or v.shape[1] != d_v:
                raise ValueError(
                    f"the cache holds keys of size {d_k} and values of size {d_v}; "
                    f"got k {k.shape} and v {v.shape}"
                )
        self._keys.append(k)
        self._values.append(v)

    @property
    def keys(self) -> np.ndarray:
        return np.concatenate(self._keys) if self._keys else np.zeros((0, 0))

    @property
    def values(self) -> np.ndarray:
        return np.concatenate(self._values) if self._values else np.zeros((0, 0))

    def __len__(self) -> int:
        return sum(k.shape[0] for k in self._keys)

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self._keys + self._values)

    def __repr__(self) -> str:
        if not self._keys:
            return "KVCache(empty)"
        return f"KVCache({len(self)} tokens, keys {self.keys.shape}, values {self.values.shape})"


def kv_cache_bytes(n_layers, n_kv_heads, d_head, seq_len, batch=1, bytes_per_value=2) -> int:
    """Bytes a KV cache needs: 2 (K and V) × layers × KV heads × d_head × tokens × batch × bytes."""
    sizes = {
        "n_layers": n_layers, "n_kv_heads": n_kv_heads, "d_head": d_head,
        "seq_len": seq_len, "batch": batch, "bytes_per_value": bytes_per_value,
    }
    sizes = {name: _positive_int(name, value) for name, value in sizes.items()}
    total = 2
    for value in sizes.values():
        total *= value
    return total


# --------------------------------------------------------------------------
# Position information
# --------------------------------------------------------------------------

def positional_encoding(n_tokens, d_model) -> np.ndarray:
    """The sinusoidal position code of "Attention Is All You Need", shape [n_tokens, d_model].

    Row p holds sin(p / 10000^(2i/d_model)) in even columns and cos(...) in odd ones.
    """
    n_tokens = _positive_int("n_tokens", n_tokens)
    d_model = _positive_int("d_model", d_model)
    pos = np.arange(n_tokens)[:, None]
    i = np.arange(d_model)[None, :]
    angle = pos / np.power(10000.0, (2 * (i // 2)) / d_model)
    return np.where(i % 2 == 0, np.sin(angle), np.cos(angle))


# --------------------------------------------------------------------------
# Advanced track: rotary position embedding (07) and tiled attention (09)
# --------------------------------------------------------------------------

def apply_rope(x, positions, base=10000.0) -> np.ndarray:
    """Rotate each pair of coordinates of each row by an angle that grows with its position.

    x is [..., n, d] with d even; positions holds n numbers, one per row. The
    pair (2i, 2i+1) of row t turns by the angle positions[t] · base^(−2i/d):

        out[2i]   = x[2i] · cos(angle) − x[2i+1] · sin(angle)
        out[2i+1] = x[2i] · sin(angle) + x[2i+1] · cos(angle)

    Apply it to queries and keys (never to values): the score of a query at
    position m and a key at position p then depends only on m − p.
    """
    x = _array("x", x, min_ndim=2)
    n, d = x.shape[-2:]
    if d % 2:
        raise ValueError(
            f"x has shape {x.shape}; its last dimension d={d} must be even, because RoPE "
            "rotates the coordinates in pairs (0, 1), (2, 3), …"
        )
    positions = _array("positions", positions)
    if positions.shape != (n,):
        raise ValueError(
            f"positions has shape {positions.shape}; x has shape {x.shape} with n={n} rows, "
            f"so positions must be {n} numbers, one per row: shape ({n},)"
        )
    if isinstance(base, (bool, str)) or not np.isscalar(base) or not np.isfinite(base) or base <= 1:
        raise ValueError(f"base must be a number greater than 1, got {base!r}")
    theta = float(base) ** (-np.arange(0, d, 2) / d)          # [d/2], one frequency per pair
    angle = positions[:, None] * theta[None, :]               # [n, d/2]
    return rotate_pairs(x, angle)


def tiled_attention(Q, K, V, block_size, mask=None) -> np.ndarray:
    """softmax(Q·Kᵀ/√d_k)·V computed tile by tile, never holding the n_q × n_k matrix.

    Queries and keys are taken block_size rows at a time. For each block of
    queries the key blocks are swept once with an online softmax: a running
    maximum m and running sum l per query row, and a running output acc. When
    a new key block raises the maximum, the old sum and output are rescaled
    by exp(m_old − m_new). At the end, output = acc / l: the same numbers as
    scaled_dot_product_attention (shapes and mask as there), returned alone.
    """
    Q, K, V = validate_qkv(Q, K, V)
    block_size = _positive_int("block_size", block_size)
    (n_q, d_k), n_k = Q.shape[-2:], K.shape[-2]
    lead = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    if mask is not None:
        m = validate_mask(mask, lead + (n_q, n_k))
        lead = np.broadcast_shapes(lead, m.shape[:-2])
        mask = np.broadcast_to(m, m.shape[:-2] + (n_q, n_k))
    d_v = V.shape[-1]
    out = np.empty(lead + (n_q, d_v))
    for q0 in range(0, n_q, block_size):
        q = Q[..., q0:q0 + block_size, :]
        rows = q.shape[-2]
        run_max = np.full(lead + (rows, 1), -np.inf)    # m: the largest score seen so far
        run_sum = np.zeros(lead + (rows, 1))            # l: sum of exp(score − m) so far
        acc = np.zeros(lead + (rows, d_v))              # sum of exp(score − m) · v so far
        for k0 in range(0, n_k, block_size):
            if mask is not None:
                allowed = mask[..., q0:q0 + block_size, k0:k0 + block_size]
                if not allowed.any():
                    continue  # a tile the mask hides entirely (above the causal diagonal): skip it
            s = q @ np.swapaxes(K[..., k0:k0 + block_size, :], -1, -2) / np.sqrt(d_k)
            if mask is not None:
                s = np.where(allowed, s, -np.inf)
            new_max = np.maximum(run_max, s.max(axis=-1, keepdims=True))
            safe = np.where(np.isneginf(new_max), 0.0, new_max)  # a row masked so far: nothing to shift
            p = np.exp(s - safe)                               # masked scores give exp(−inf) = 0
            rescale = np.exp(run_max - safe)                   # how much the old maximum shrinks
            run_sum = run_sum * rescale + p.sum(axis=-1, keepdims=True)
            acc = acc * rescale + p @ V[..., k0:k0 + block_size, :]
            run_max = new_max
        out[..., q0:q0 + block_size, :] = acc / run_sum
    return out
