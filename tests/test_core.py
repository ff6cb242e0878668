"""Unit and property tests for attention_helpers.core (the math)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import attention_helpers as ah

finite = st.floats(-50, 50, allow_nan=False, allow_infinity=False)


def matrices(rows, cols):
    return arrays(np.float64, (rows, cols), elements=finite)


def loop_attention(Q, K, V, mask=None):
    """Attention written out one query and one key at a time: the definition."""
    n_q, d_k = Q.shape
    out = np.zeros((n_q, V.shape[1]))
    weights = np.zeros((n_q, K.shape[0]))
    for i in range(n_q):
        allowed = [j for j in range(K.shape[0]) if mask is None or mask[i, j]]
        scores = [sum(Q[i, t] * K[j, t] for t in range(d_k)) / d_k ** 0.5 for j in allowed]
        top = max(scores)
        exps = [np.exp(s - top) for s in scores]
        for j, e in zip(allowed, exps):
            weights[i, j] = e / sum(exps)
            out[i] += weights[i, j] * V[j]
    return out, weights


# ---------------------------------------------------------------- softmax

@given(arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 6)), elements=finite))
def test_softmax_rows_are_probability_distributions(x):
    p = ah.softmax(x)
    assert np.all(p >= 0)
    assert np.allclose(p.sum(axis=-1), 1.0)


@given(arrays(np.float64, (3, 5), elements=finite), st.floats(-1e3, 1e3))
def test_softmax_ignores_a_constant_shift(x, c):
    assert np.allclose(ah.softmax(x), ah.softmax(x + c), atol=1e-9)


def test_softmax_matches_the_textbook_formula_on_small_scores():
    x = np.array([3.2, 4.0, 1.0, 6.2, 8.0])
    assert np.allclose(ah.softmax(x), np.exp(x) / np.exp(x).sum())


@pytest.mark.parametrize("x, expected", [
    ([800.0, 800.0], [0.5, 0.5]),
    ([1e308, -1e308], [1.0, 0.0]),
    ([800.0, 799.0, 790.0], np.exp([0.0, -1.0, -10.0]) / np.exp([0.0, -1.0, -10.0]).sum()),
])
def test_softmax_is_finite_for_huge_inputs(x, expected):
    p = ah.softmax(x)  # pyproject turns RuntimeWarnings into errors
    assert np.all(np.isfinite(p))
    assert np.allclose(p, expected)


def test_softmax_axis_0_normalises_columns():
    x = np.array([[1.0, 2.0], [3.0, 5.0]])
    assert np.allclose(ah.softmax(x, axis=0).sum(axis=0), 1.0)
    assert not np.allclose(ah.softmax(x, axis=0), ah.softmax(x))


def test_softmax_gives_minus_infinity_zero_weight():
    assert np.allclose(ah.softmax([0.0, -np.inf, 0.0]), [0.5, 0.0, 0.5])


@pytest.mark.parametrize("x, error, fragment", [
    ([1.0, np.nan], ValueError, "x (shape (2,)) must hold finite numbers; found nan at index (1,)"),
    ([1.0, np.inf], ValueError, "must hold finite numbers; found inf"),
    ([-np.inf, -np.inf], ValueError, "-inf everywhere"),
    ("abc", TypeError, "x must be a numeric array, got str"),
    ([[1, 2], [3]], TypeError, "x must be a numeric array"),
    (5.0, ValueError, "x must have at least 1 dimensions"),
])
def test_softmax_rejects_bad_input_with_a_message(x, error, fragment):
    with pytest.raises(error) as info:
        ah.softmax(x)
    assert fragment in str(info.value)


def test_softmax_rejects_an_axis_out_of_range():
    with pytest.raises(ValueError, match=r"axis=2 is out of range for x with shape \(2, 3\)"):
        ah.softmax(np.zeros((2, 3)), axis=2)


# ---------------------------------------------------------------- projections

def test_project_qkv_is_three_matrix_products():
    rng = np.random.default_rng(0)
    X, W_Q, W_K, W_V = rng.normal(size=(3, 4)), rng.normal(size=(4, 2)), rng.normal(size=(4, 2)), \
        rng.normal(size=(4, 5))
    Q, K, V = ah.project_qkv(X, W_Q, W_K, W_V)
    for i in range(3):  # row i of Q is token i's embedding times each column of W_Q
        assert np.allclose(Q[i], [X[i] @ W_Q[:, j] for j in range(2)])
    assert np.allclose(K, X @ W_K) and np.allclose(V, X @ W_V)
    assert (Q.shape, K.shape, V.shape) == ((3, 2), (3, 2), (3, 5))


@pytest.mark.parametrize("args, error, message", [
    ((np.ones((3, 4)), np.ones((3, 2)), np.ones((4, 2)), np.ones((4, 2))), ValueError,
     "W_Q has shape (3, 2); X has d_model=4 columns, so W_Q must be (4, d_k)"),
    ((np.ones((3, 4)), np.ones((4, 2)), np.ones((4, 2)), np.ones((2, 2))), ValueError,
     "W_V has shape (2, 2); X has d_model=4 columns, so W_V must be (4, d_v)"),
    ((np.ones((3, 4)), np.ones((4, 2)), np.ones((4, 3)), np.ones((4, 2))), ValueError,
     "W_Q has shape (4, 2) and W_K has shape (4, 3)"),
    ((np.ones(4), np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 2))), ValueError,
     "X must be 2-D, got shape (4,) (1-D)"),
    ((np.ones((3, 4)), np.ones((4, 2, 1)), np.ones((4, 2)), np.ones((4, 2))), ValueError,
     "W_Q must be 2-D, got shape (4, 2, 1)"),
    ((np.full((3, 4), np.nan), np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 2))), ValueError,
     "X (shape (3, 4)) must hold finite numbers"),
    ((None, np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 2))), TypeError,
     "X must be a numeric array, got NoneType"),
])
def test_project_qkv_rejects_bad_input(args, error, message):
    with pytest.raises(error) as info:
        ah.project_qkv(*args)
    assert message in str(info.value)


# ---------------------------------------------------------------- attention

@settings(max_examples=50, deadline=None)
@given(matrices(3, 2), matrices(4, 2), matrices(4, 3))
def test_attention_equals_the_loop_definition(Q, K, V):
    out, weights = ah.scaled_dot_product_attention(Q, K, V)
    ref_out, ref_weights = loop_attention(Q, K, V)
    assert np.allclose(weights, ref_weights, atol=1e-9)
    assert np.allclose(out, ref_out, atol=1e-7)


@settings(max_examples=30, deadline=None)
@given(matrices(4, 3), matrices(4, 3), matrices(4, 2))
def test_masked_attention_equals_the_loop_over_allowed_keys(Q, K, V):
    mask = ah.causal_mask(4)
    out, weights = ah.scaled_dot_product_attention(Q, K, V, mask=mask)
    ref_out, ref_weights = loop_attention(Q, K, V, mask)
    assert np.allclose(weights, ref_weights, atol=1e-9)
    assert np.allclose(out, ref_out, atol=1e-7)
    assert np.all(weights[~mask] == 0)


def test_cat_eats_fish_by_hand():
    tokens, X, W_Q, W_K, W_V = ah.examples.cat_eats_fish()
    out, weights = ah.self_attention(X, W_Q, W_K, W_V)
    # fish's raw scores are 2*1+4*2 = 10, 2*3+4*1 = 10, 2*2+4*4 = 20; divided by sqrt(2)
    s = np.array([10, 10, 20]) / np.sqrt(2)
    w = np.exp(s) / np.exp(s).sum()
    assert np.allclose(weights[2], w)
    assert np.allclose(out[2], w @ (X @ W_V))
    assert np.allclose(weights.sum(axis=1), 1)


def test_leading_dimensions_broadcast_like_separate_calls():
    rng = np.random.default_rng(1)
    Q, K, V = rng.normal(size=(2, 3, 4, 5)), rng.normal(size=(2, 3, 6, 5)), rng.normal(size=(1, 3, 6, 2))
    out, weights = ah.scaled_dot_product_attention(Q, K, V)
    assert out.shape == (2, 3, 4, 2) and weights.shape == (2, 3, 4, 6)
    for b in range(2):
        for h in range(3):
            o, w = ah.scaled_dot_product_attention(Q[b, h], K[b, h], V[0, h])
            assert np.allclose(out[b, h], o) and np.allclose(weights[b, h], w)


def test_causal_mask_is_lower_triangular_and_true_means_may_attend():
    m = ah.causal_mask(3)
    assert m.dtype == bool
    assert m.tolist() == [[True, False, False], [True, True, False], [True, True, True]]


@pytest.mark.parametrize("n, error", [(0, ValueError), (-2, ValueError), (2.5, TypeError), (True, TypeError)])
def test_causal_mask_rejects_bad_sizes(n, error):
    with pytest.raises(error, match="n must be"):
        ah.causal_mask(n)


@pytest.mark.parametrize("Q, K, V, mask, error, message", [
    (np.ones((3, 2)), np.ones((3, 3)), np.ones((3, 2)), None, ValueError,
     "K has shape (3, 3); Q has d_k=2 columns, so K must be (..., n_k, 2)"),
    (np.ones((3, 2)), np.ones((4, 2)), np.ones((3, 2)), None, ValueError,
     "V has shape (3, 2); K has n_k=4 rows, so V must be (..., 4, d_v)"),
    (np.ones(2), np.ones((3, 2)), np.ones((3, 2)), None, ValueError,
     "Q must have at least 2 dimensions"),
    (np.ones((2, 3, 2)), np.ones((3, 3, 2)), np.ones((3, 3, 2)), None, ValueError,
     "do not broadcast together"),
    (np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 2)), np.zeros((3, 3), bool), ValueError,
     "hides every key from query row (0,)"),
    (np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 2)), np.ones((2, 3), bool), ValueError,
     "mask has shape (2, 3); with 3 queries and 3 keys it must end in (3, 3)"),
    (np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 3)), TypeError,
     "mask must be a boolean array (True = may attend), got dtype float64"),
    (np.ones((3, 2)), np.array([[1, np.inf]] * 3), np.ones((3, 2)), None, ValueError,
     "K (shape (3, 2)) must hold finite numbers; found inf at index (0, 1)"),
])
def test_attention_rejects_bad_input(Q, K, V, mask, error, message):
    with pytest.raises(error) as info:
        ah.scaled_dot_product_attention(Q, K, V, mask=mask)
    assert message in str(info.value)


def test_self_attention_validates_through_projection():
    with pytest.raises(ValueError, match=r"W_K has shape \(2, 2\); X has d_model=3 columns"):
        ah.self_attention(np.ones((2, 3)), np.ones((3, 2)), np.ones((2, 2)), np.ones((3, 2)))


def test_self_attention_is_projection_then_attention():
    rng = np.random.default_rng(3)
    X, W_Q, W_K, W_V = rng.normal(size=(4, 3)), rng.normal(size=(3, 2)), rng.normal(size=(3, 2)), \
        rng.normal(size=(3, 3))
    out, weights = ah.self_attention(X, W_Q, W_K, W_V, mask=ah.causal_mask(4))
    ref_out, ref_weights = loop_attention(X @ W_Q, X @ W_K, X @ W_V, ah.causal_mask(4))
    assert np.allclose(out, ref_out) and np.allclose(weights, ref_weights)
    assert weights[0, 0] == 1.0  # the first token can only see itself


# ---------------------------------------------------------------- positions

def test_positional_encoding_follows_the_sin_cos_formula():
    P = ah.positional_encoding(5, 4)
    assert P.shape == (5, 4)
    for p in range(5):
        for i in range(4):
            angle = p / 10000 ** (2 * (i // 2) / 4)
            assert np.isclose(P[p, i], np.sin(angle) if i % 2 == 0 else np.cos(angle))
    assert len({tuple(row) for row in P.round(6)}) == 5  # every position gets its own code


@pytest.mark.parametrize("args", [(0, 4), (3, 0), (3.0, 4)])
def test_positional_encoding_rejects_bad_sizes(args):
    with pytest.raises((ValueError, TypeError), match="n_tokens|d_model"):
        ah.positional_encoding(*args)


# ---- the shared validators other modules call (core.validate_qkv, core.validate_mask) ----

def _ones(*shapes):
    return [np.ones(shape) for shape in shapes]


@pytest.mark.parametrize("call, error, names", [
    (lambda: ah.core.validate_qkv(*_ones((3, 2), (4, 3), (4, 2))), ValueError, ["K", "(4, 3)"]),
    (lambda: ah.core.validate_qkv(*_ones((3, 2), (4, 2), (5, 2))), ValueError, ["V", "(5, 2)"]),
    (lambda: ah.core.validate_qkv("Q", *_ones((4, 2), (4, 2))), TypeError, ["Q"]),
    (lambda: ah.core.validate_mask(np.ones((3, 4)), (3, 4)), TypeError, ["mask", "boolean"]),
    (lambda: ah.core.validate_mask(np.ones((3, 3), bool), (3, 4)), ValueError, ["mask", "(3, 3)", "(3, 4)"]),
    (lambda: ah.core.validate_mask(np.ones((3, 1, 4), bool), (2, 1, 4)), ValueError,
     ["mask", "(3,)", "(2,)"]),
])
def test_the_shared_validators_name_the_argument_and_both_shapes(call, error, names):
    with pytest.raises(error) as info:
        call()
    for name in names:
        assert name in str(info.value)


def test_validate_mask_accepts_one_row_for_every_query_and_broadcasting_batches():
    m = ah.padding_mask([2, 3], 3)                       # [batch, 1, n]
    assert ah.core.validate_mask(m, (3, 3)) is not None     # unbatched scores: the batch comes from the mask
    assert ah.core.validate_mask(m, (2, 3, 3)).shape == (2, 1, 3)


def test_rotate_pairs_is_the_rotation_matrix_on_each_pair():
    x, angle = np.array([[1.0, 2.0, -0.5, 0.3]]), np.array([[0.4, -1.1]])
    out = ah.core.rotate_pairs(x, angle)
    for i, a in enumerate(angle[0]):
        R = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
        assert np.allclose(out[0, 2 * i:2 * i + 2], R @ x[0, 2 * i:2 * i + 2])
    assert np.allclose(ah.core.rotate_pairs([1.0, 0.0], np.pi / 2), [0.0, 1.0])  # one pair, one angle
