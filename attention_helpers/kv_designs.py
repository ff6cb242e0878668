"""KV-cache designs of current models, in plain NumPy (notebook 11).

- Sliding windows: `sliding_window_mask`, a ring-buffer cache `WindowKVCache`
  that keeps only the last `window` keys and values, and the bytes of a stack
  that mixes local and global layers, `window_stack_cache_bytes`.
- Attention sinks: `attention_with_sinks` (one learned sink logit per head
  joins each softmax row and is dropped), and StreamingLLM's cache that keeps
  the first tokens plus a window: `WindowKVCache(window, n_sink)`, whose mask
  is `streaming_mask`.
- Multi-head latent attention (MLA): `mla_weights`, `mla_cache`,
  `mla_attention` (plain, or with the up-projections absorbed), `mla_cache_bytes`.
- Paged cache: `PagedKVCache` (a pool of fixed-size blocks and a block table
  per sequence) and `paged_attention`.
- Quantised cache: `quantize`, `dequantize`, `quantized_bytes`.

Masks are boolean, True = may attend, as everywhere in the course.
"""

from __future__ import annotations

import numpy as np

from .core import _array, _positive_int, apply_rope, softmax, split_heads

__all__ = [
    "sliding_window_mask", "WindowKVCache", "window_stack_cache_bytes",
    "attention_with_sinks", "streaming_mask",
    "mla_weights", "mla_cache", "mla_attention", "mla_cache_bytes",
    "PagedKVCache", "paged_attention",
    "quantize", "dequantize", "quantized_bytes",
]


def _bool_mask(mask, shape) -> np.ndarray:
    """`mask` as a boolean array that broadcasts to `shape`; every query row keeps a key."""
    m = np.asarray(mask)
    if m.dtype != bool:
        raise TypeError(f"mask must be a boolean array (True = may attend), got dtype {m.dtype}")
    try:
        m = np.broadcast_to(m, shape)
    except ValueError:
        raise ValueError(f"mask has shape {np.shape(mask)}; it must broadcast to {shape} "
                         "(…, queries, keys)") from None
    if not m.any(axis=-1).all():
        row = tuple(int(i) for i in np.argwhere(~m.any(axis=-1))[0])
        raise ValueError(f"mask (shape {np.shape(mask)}) hides every key from query row {row}: "
                         "that row would have no weights at all, so keep at least one key per row")
    return m


# ---- sliding windows ----------------------------------------------------------------

def sliding_window_mask(n, window) -> np.ndarray:
    """Boolean [n, n]: True where query i may see key j, that is 0 ≤ i − j < window.

    window = 1: each token sees only itself; window ≥ n: the causal mask.
    """
    n, window = _positive_int("n", n), _positive_int("window", window)
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    return (i - j >= 0) & (i - j < window)


class WindowKVCache:
    """A KV cache that holds only the last `window` tokens, in a ring buffer, and
    optionally the first `n_sink` tokens for good (StreamingLLM's attention sinks).

    Slot t % window holds token t: a new token overwrites the oldest one, so
    the memory never grows past n_sink + window rows however long the text gets.
    `keys` and `values` come back sinks first, then oldest first; `positions`
    says whose they are.
    """

    def __init__(self, window, n_sink=0):
        self.window = _positive_int("window", window)
        if isinstance(n_sink, bool) or not isinstance(n_sink, (int, np.integer)) or n_sink < 0:
            raise ValueError(f"n_sink must be a whole number ≥ 0, got {n_sink!r}")
        self.n_sink = int(n_sink)
        self._k = self._v = None          # rows 0 … n_sink − 1: the sinks; then the ring of `window` rows
        self.seen = 0  # tokens appended so far

    def append(self, k, v) -> None:
        """Add one token's key k [d_k] and value v [d_v]."""
        k, v = _array("k", k, ndim=1), _array("v", v, ndim=1)
        if self._k is None:
            rows = self.n_sink + self.window
            self._k, self._v = np.zeros((rows, k.size)), np.zeros((rows, v.size))
        if k.size != self._k.shape[1] or v.size != self._v.shape[1]:
            raise ValueError(f"the cache holds keys of size {self._k.shape[1]} and values of size "
                             f"{self._v.shape[1]}; got k {k.shape} and v {v.shape}")
        t = self.seen
        slot = t if t < self.n_sink else self.n_sink + (t - self.n_sink) % self.window
        self._k[slot], self._v[slot] = k, v
        self.seen += 1

    def __len__(self) -> int:
        return len(self.positions)

    @property
    def positions(self) -> np.ndarray:
        """The positions of the cached tokens: the sinks, then the window, oldest first."""
        sinks = np.arange(min(self.seen, self.n_sink))
        recent = np.arange(max(self.n_sink, self.seen - self.window), self.seen)
        return np.concatenate([sinks, recent]).astype(int)

    def _in_order(self, buffer):
        if buffer is None:
            return np.zeros((0, 0))
        p = self.positions
        slots = np.where(p < self.n_sink, p, self.n_sink + (p - self.n_sink) % self.window)
        return buffer[slots]

    @property
    def keys(self) -> np.ndarray:
        return self._in_order(self._k)

    @property
    def values(self) -> np.ndarray:
        return self._in_order(self._v)

    @property
    def nbytes(self) -> int:
        """Bytes of the buffers (fixed once the first token arrived)."""
        return 0 if self._k is None else self._k.nbytes + self._v.nbytes

    def __repr__(self) -> str:
        return (f"WindowKVCache(window={self.window}, n_sink={self.n_sink}, "
                f"holding positions {self.positions.tolist()})")


def window_stack_cache_bytes(n_layers, n_kv_heads, d_head, seq_len, window, local_per_global=5,
                             batch=1, bytes_per_value=2) -> int:
    """KV-cache bytes of a stack whose layers go `local_per_global` local, then one global.

    A local (sliding-window) layer caches min(seq_len, window) tokens, a global
    one all seq_len; layer i (from 0) is global when (i + 1) is a multiple of
    local_per_global + 1. local_per_global = 0 makes every layer global.
    """
    sizes = {"n_layers": n_layers, "n_kv_heads": n_kv_heads, "d_head": d_head, "seq_len": seq_len,
             "window": window, "batch": batch, "bytes_per_value": bytes_per_value}
    s = {name: _positive_int(name, value) for name, value in sizes.items()}
    if isinstance(local_per_global, bool) or not isinstance(local_per_global, (int, np.integer)) \
            or local_per_global < 0:
        raise ValueError(f"local_per_global must be a whole number ≥ 0, got {local_per_global!r}")
    period = local_per_global + 1
    n_global = s["n_layers"] // period
    n_local = s["n_layers"] - n_global
    tokens = n_global * s["seq_len"] + n_local * min(s["seq_len"], s["window"])
    return 2 * s["n_kv_heads"] * s["d_head"] * tokens * s["batch"] * s["bytes_per_value"]


# ---- attention sinks ----------------------------------------------------------------

def attention_with_sinks(Q, K, V, sinks, mask=None):
    """Attention with one learned sink logit per head (as in gpt-oss), returning (output, weights).

    Q is [h, n_q, d], K [h, n_k, d], V [h, n_k, d_v], sinks [h]. Each row of
    scores Q·Kᵀ/√d gets one more entry, the head's sink logit, before the
    softmax; that entry is then dropped. So a row's weights sum to less than 1,
    and the rest of its attention goes nowhere (it adds no value).
    """
    Q, K, V = _array("Q", Q, ndim=3), _array("K", K, ndim=3), _array("V", V, ndim=3)
    h, n_q, d = Q.shape
    if K.shape[0] != h or K.shape[2] != d:
        raise ValueError(f"K has shape {K.shape}; Q has shape {Q.shape}, so K must be ({h}, n_k, {d})")
    n_k = K.shape[1]
    if V.shape[:2] != (h, n_k):
        raise ValueError(f"V has shape {V.shape}; K has shape {K.shape}, so V must be ({h}, {n_k}, d_v)")
    sinks = _array("sinks", sinks)
    if sinks.shape != (h,):
        raise ValueError(f"sinks has shape {sinks.shape}; Q has {h} heads, so sinks must be ({h},): "
                         "one sink logit per head")
    scores = Q @ np.swapaxes(K, 1, 2) / np.sqrt(d)
    if mask is not None:
        scores = np.where(_bool_mask(mask, scores.shape), scores, -np.inf)
    sink_column = np.broadcast_to(sinks[:, None, None], (h, n_q, 1))  # one per head, on every row
    weights = softmax(np.concatenate([scores, sink_column], axis=-1))[..., :n_k]  # drop the sink
    return weights @ V, weights


def streaming_mask(n, n_sink, window) -> np.ndarray:
    """Boolean [n, n] of StreamingLLM's cache: query i sees the first `n_sink` tokens
    (those up to i) and the last `window` tokens, 0 ≤ i − j < window. n_sink may be 0."""
    n, window = _positive_int("n", n), _positive_int("window", window)
    if isinstance(n_sink, bool) or not isinstance(n_sink, (int, np.integer)) or n_sink < 0:
        raise ValueError(f"n_sink must be a whole number ≥ 0, got {n_sink!r}")
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    return sliding_window_mask(n, window) | ((j < n_sink) & (j <= i))


# ---- multi-head latent attention ------------------------------------------------------

_MLA_SHAPES = {  # name: shape in terms of (d_model, n_heads, d_head, d_latent, d_rope)
    "W_Q": lambda m, h, d, c, r: (m, h * d),       # query, the part without position
    "W_QR": lambda m, h, d, c, r: (m, h * r),      # query, the rotated part
    "W_DKV": lambda m, h, d, c, r: (m, c),         # down-projection to the latent (cached)
    "W_KR": lambda m, h, d, c, r: (m, r),          # the rotated key, one for all heads (cached)
    "W_UK": lambda m, h, d, c, r: (c, h * d),      # latent -> keys
    "W_UV": lambda m, h, d, c, r: (c, h * d),      # latent -> values
    "W_O": lambda m, h, d, c, r: (h * d, m),       # heads -> output
}


def mla_weights(d_model, n_heads, d_head, d_latent, d_rope, seed=0) -> dict:
    """Random (seeded) MLA projections: a dict of the matrices `mla_attention` reads,
    plus the sizes n_heads, d_head, d_latent and d_rope."""
    sizes = [_positive_int(name, value) for name, value in (
        ("d_model", d_model), ("n_heads", n_heads), ("d_head", d_head), ("d_latent", d_latent),
        ("d_rope", d_rope))]
    if sizes[4] % 2:
        raise ValueError(f"d_rope must be even (RoPE turns pairs of coordinates), got {d_rope}")
    rng = np.random.default_rng(seed)
    W = {name: rng.normal(size=shape(*sizes)) / np.sqrt(shape(*sizes)[0])
         for name, shape in _MLA_SHAPES.items()}
    W.update(n_heads=sizes[1], d_head=sizes[2], d_latent=sizes[3], d_rope=sizes[4])
    return W


def _mla_check(X, W):
    X = _array("X", X, ndim=2)
    if not isinstance(W, dict):
        raise TypeError(f"W must be the dict of mla_weights(...), got {type(W).__name__}")
    missing = [k for k in (*_MLA_SHAPES, "n_heads", "d_head", "d_latent", "d_rope") if k not in W]
    if missing:
        raise ValueError(f"W lacks {', '.join(missing)}: build it with mla_weights(...)")
    sizes = (X.shape[1], W["n_heads"], W["d_head"], W["d_latent"], W["d_rope"])
    for name, shape in _MLA_SHAPES.items():
        if np.shape(W[name]) != shape(*sizes):
            raise ValueError(f"W[{name!r}] has shape {np.shape(W[name])}; with X of shape {X.shape} "
                             f"and these sizes it must be {shape(*sizes)}")
    return X


def mla_cache(X, W):
    """What MLA caches per token: the latent c = X·W_DKV [n, d_latent] and the rotated
    key k_rope = RoPE(X·W_KR) [n, d_rope], shared by every head."""
    X = _mla_check(X, W)
    positions = np.arange(X.shape[0])
    return X @ W["W_DKV"], apply_rope(X @ W["W_KR"], positions)


def mla_attention(X, W, mask=None, absorbed=False):
    """Multi-head latent attention over the tokens X [n, d_model], returning (output, weights).

    Each head's score is (q_C · k_C + q_R · k_R) / √(d_head + d_rope): k_C = c·W_UK
    comes from the cached latent c, k_R is the cached rotated key. Plain form:
    rebuild K and V from c, then attend. Absorbed form (absorbed=True): fold W_UK
    into the query (q_C·W_UKᵀ meets c directly) and W_UV into W_O, so K and V
    are never built. Both give the same numbers.
    """
    X = _mla_check(X, W)
    n, h, d, r = X.shape[0], W["n_heads"], W["d_head"], W["d_rope"]
    c, k_rope = mla_cache(X, W)
    q_c = split_heads(X @ W["W_Q"], h)                                # [h, n, d]
    q_r = apply_rope(split_heads(X @ W["W_QR"], h), np.arange(n))     # [h, n, r]
    rope_scores = q_r @ k_rope.T                                      # [h, n, n]
    W_UK, W_UV = split_heads(W["W_UK"], h), split_heads(W["W_UV"], h)  # [h, d_latent, d]
    W_O = W["W_O"].reshape(h, d, -1)                                  # [h, d, d_model]
    if absorbed:
        q_latent = q_c @ np.swapaxes(W_UK, 1, 2)                      # [h, n, d_latent]
        scores = q_latent @ c.T + rope_scores
    else:
        scores = q_c @ np.swapaxes(c @ W_UK, 1, 2) + rope_scores      # K_C = c·W_UK per head
    scores = scores / np.sqrt(d + r)
    if mask is not None:
        scores = np.where(_bool_mask(mask, scores.shape), scores, -np.inf)
    weights = softmax(scores)
    if absorbed:
        out = np.einsum("hnc,hcm->nm", weights @ c, W_UV @ W_O)       # (weights·c)·(W_UV·W_O)
    else:
        out = np.einsum("hnd,hdm->nm", weights @ (c @ W_UV), W_O)     # concat(heads)·W_O
    return out, weights


def mla_cache_bytes(n_layers, d_latent, d_rope, seq_len, batch=1, bytes_per_value=2) -> int:
    """Bytes of an MLA cache: layers × (d_latent + d_rope) × tokens × batch × bytes."""
    s = [_positive_int(name, value) for name, value in (
        ("n_layers", n_layers), ("d_latent", d_latent), ("d_rope", d_rope), ("seq_len", seq_len),
        ("batch", batch), ("bytes_per_value", bytes_per_value))]
    return s[0] * (s[1] + s[2]) * s[3] * s[4] * s[5]


# ---- paged cache --------------------------------------------------------------------

def _hashable(seq):
    """`seq`, if it can name a sequence (a dict key), or a TypeError naming it."""
    try:
        hash(seq)
    except TypeError:
        raise TypeError(f"seq must be a hashable name such as 'a' or 0, got {type(seq).__name__} "
                        f"{seq!r}") from None
    return seq


class PagedKVCache:
    """Keys and values of several sequences in one pool of fixed-size blocks.

    pool_k [n_blocks, block_size, d_k] and pool_v hold every block; a sequence
    owns a list of block numbers, its block table, and takes a free block
    whenever its last one is full. Token t of a sequence lives in block
    table[t // block_size], row t % block_size.
    """

    def __init__(self, block_size, n_blocks, d_k, d_v):
        self.block_size = _positive_int("block_size", block_size)
        n_blocks = _positive_int("n_blocks", n_blocks)
        self.pool_k = np.zeros((n_blocks, self.block_size, _positive_int("d_k", d_k)))
        self.pool_v = np.zeros((n_blocks, self.block_size, _positive_int("d_v", d_v)))
        self.free = list(range(n_blocks))
        self.tables: dict = {}
        self.lengths: dict = {}

    def append(self, seq, k, v) -> None:
        """Add one token's key k [d_k] and value v [d_v] to sequence `seq` (any hashable name)."""
        _hashable(seq)
        k, v = _array("k", k, ndim=1), _array("v", v, ndim=1)
        if k.shape != self.pool_k.shape[2:] or v.shape != self.pool_v.shape[2:]:
            raise ValueError(f"the pool holds keys of shape {self.pool_k.shape[2:]} and values of "
                             f"shape {self.pool_v.shape[2:]}; got k {k.shape} and v {v.shape}")
        table, t = self.tables.setdefault(seq, []), self.lengths.get(seq, 0)
        if t % self.block_size == 0:  # the last block is full (or there is none yet)
            if not self.free:
                raise ValueError(f"the pool's {len(self.pool_k)} blocks are all in use")
            table.append(self.free.pop(0))
        block, row = table[t // self.block_size], t % self.block_size
        self.pool_k[block, row], self.pool_v[block, row] = k, v
        self.lengths[seq] = t + 1

    def release(self, seq) -> None:
        """Give a finished sequence's blocks back to the pool."""
        self.free.extend(self._table(seq))
        del self.tables[seq], self.lengths[seq]

    def _table(self, seq):
        if _hashable(seq) not in self.tables:
            raise ValueError(f"no sequence {seq!r} in the cache; it holds {list(self.tables)}")
        return self.tables[seq]

    def keys(self, seq) -> np.ndarray:
        """The keys of `seq` in order, gathered through its block table [n, d_k]."""
        return self.pool_k[self._table(seq)].reshape(-1, self.pool_k.shape[2])[:self.lengths[seq]]

    def values(self, seq) -> np.ndarray:
        return self.pool_v[self._table(seq)].reshape(-1, self.pool_v.shape[2])[:self.lengths[seq]]

    def __repr__(self) -> str:
        return f"PagedKVCache(blocks of {self.block_size}, tables {self.tables}, free {self.free})"


def paged_attention(q, cache, seq) -> np.ndarray:
    """One query row q [d_k] attends over sequence `seq` of a PagedKVCache, reading the
    pool block by block through the block table (never a contiguous copy)."""
    if not isinstance(cache, PagedKVCache):
        raise TypeError(f"cache must be a PagedKVCache, got {type(cache).__name__}")
    q = _array("q", q, ndim=1)
    if q.shape != cache.pool_k.shape[2:]:
        raise ValueError(f"q has shape {q.shape}; the cached keys have shape {cache.pool_k.shape[2:]}")
    table, n = cache._table(seq), cache.lengths[seq]
    scores = []
    for b, block in enumerate(table):
        rows = min(cache.block_size, n - b * cache.block_size)   # the last block may be part full
        scores.append(cache.pool_k[block, :rows] @ q / np.sqrt(q.size))
    weights = softmax(np.concatenate(scores))
    out, start = np.zeros(cache.pool_v.shape[2]), 0
    for block, s in zip(table, scores):
        out += weights[start:start + len(s)] @ cache.pool_v[block, :len(s)]
        start += len(s)
    return out


# ---- quantised cache ----------------------------------------------------------------

_PER = {"token": -1, "channel": -2, "tensor": None}  # the axis a scale is shared along


def _bits(bits) -> int:
    bits = _positive_int("bits", bits)
    if not 2 <= bits <= 8:
        raise ValueError(f"bits must be between 2 and 8 (int2 … int8), got {bits}")
    return bits


def _per(per) -> str:
    if not isinstance(per, str) or per not in _PER:
        raise ValueError(f"per must be one of {list(_PER)}, got {per!r}")
    return per


def quantize(x, bits, per="token"):
    """Symmetric integer quantisation of x [..., n_tokens, d], returning (q, scale).

    q holds whole numbers in −q_max … q_max, q_max = 2^(bits−1) − 1 (127 for
    int8, 7 for int4); x ≈ q · scale. per="token": one scale per row (its
    largest |x| / q_max); "channel": one per column; "tensor": one for all.
    Rounding moves each entry by at most scale / 2.
    """
    x = _array("x", x, min_ndim=2)
    bits, per = _bits(bits), _per(per)
    q_max = 2 ** (bits - 1) - 1
    axis = _PER[per]
    largest = np.abs(x).max(axis=axis, keepdims=True) if axis is not None else np.abs(x).max()
    scale = np.where(largest > 0, largest / q_max, 1.0)  # an all-zero row: any scale gives q = 0
    q = np.clip(np.round(x / scale), -q_max, q_max).astype(np.int8)
    return q, scale


def dequantize(q, scale) -> np.ndarray:
    """The values q · scale stand for (scale as `quantize` returns it: it broadcasts to q)."""
    q, scale = _array("q", q), _array("scale", scale)
    try:
        return q * scale
    except ValueError:
        raise ValueError(f"scale has shape {scale.shape}, which does not broadcast to q's shape {q.shape}; "
                         "pass the scale that quantize returned with q") from None


def quantized_bytes(n_tokens, d, bits, per="token", scale_bytes=2) -> int:
    """Bytes of one quantised [n_tokens, d] matrix: bits/8 per entry (rounded up) plus its scales."""
    n_tokens, d, bits = _positive_int("n_tokens", n_tokens), _positive_int("d", d), _bits(bits)
    n_scales = {"token": n_tokens, "channel": d, "tensor": 1}[_per(per)]
    return -(-n_tokens * d * bits // 8) + n_scales * _positive_int("scale_bytes", scale_bytes)
