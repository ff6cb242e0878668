"""ah.attention_backward against finite differences: plain, masked, with batch and head
dimensions (broadcast ones summed), and its errors on bad input."""

import numpy as np
import pytest

import attention_helpers as ah


def numeric_grads(Q, K, V, dO, mask=None, eps=1e-6):
    """Central differences of sum(output · dO) for every entry of Q, K and V."""
    def loss(Q, K, V):
        return float((ah.scaled_dot_product_attention(Q, K, V, mask=mask)[0] * dO).sum())

    grads = []
    for which, A in enumerate((Q, K, V)):
        g = np.zeros_like(A)
        for idx in np.ndindex(A.shape):
            args = [Q.copy(), K.copy(), V.copy()]
            args[which][idx] += eps
            up = loss(*args)
            args[which][idx] -= 2 * eps
            g[idx] = (up - loss(*args)) / (2 * eps)
        grads.append(g)
    return grads


def random_case(rng, q_shape, k_shape, v_shape):
    Q, K, V = (rng.normal(size=s) for s in (q_shape, k_shape, v_shape))
    out = ah.scaled_dot_product_attention(Q, K, V)[0]
    return Q, K, V, rng.normal(size=out.shape)


def assert_matches_finite_differences(Q, K, V, dO, mask=None):
    analytic = ah.attention_backward(Q, K, V, dO, mask=mask)
    for name, a, n in zip("QKV", analytic, numeric_grads(Q, K, V, dO, mask)):
        assert a.shape == n.shape, name
        # central differences of a smooth function: error ~ eps² · third derivative, far below 1e-6
        np.testing.assert_allclose(a, n, atol=1e-6, err_msg=f"d{name}")


@pytest.mark.parametrize("n_q, n_k, d_k, d_v", [(1, 1, 1, 1), (3, 4, 2, 3), (5, 5, 4, 2)])
def test_plain_matches_finite_differences(n_q, n_k, d_k, d_v):
    rng = np.random.default_rng(n_q * 100 + n_k * 10 + d_k)
    assert_matches_finite_differences(*random_case(rng, (n_q, d_k), (n_k, d_k), (n_k, d_v)))


def test_causal_mask_matches_finite_differences_and_blocks_hidden_keys():
    rng = np.random.default_rng(1)
    Q, K, V, dO = random_case(rng, (4, 3), (4, 3), (4, 2))
    mask = ah.causal_mask(4)
    assert_matches_finite_differences(Q, K, V, dO, mask)
    # The last key is seen by the last query only: its gradient depends on that query alone.
    dQ, dK, dV = ah.attention_backward(Q, K, V, dO, mask=mask)
    dO_first = dO.copy()
    dO_first[-1] = 0.0
    _, dK0, dV0 = ah.attention_backward(Q, K, V, dO_first, mask=mask)
    assert np.allclose(dK0[-1], 0.0) and np.allclose(dV0[-1], 0.0)
    assert not np.allclose(dV[-1], 0.0)


def test_batch_and_heads_match_finite_differences():
    rng = np.random.default_rng(2)
    Q, K, V, dO = random_case(rng, (2, 3, 4, 2), (2, 3, 4, 2), (2, 3, 4, 3))
    mask = ah.padding_mask([4, 2], 4)[:, None] & ah.causal_mask(4)   # [2, 1, 4, 4]
    assert_matches_finite_differences(Q, K, V, dO, mask)


def test_one_mask_row_for_every_query_matches_finite_differences():
    """A padding-style mask of shape (1, n_k) applies to every query row, as in the forward pass."""
    rng = np.random.default_rng(6)
    Q, K, V, dO = random_case(rng, (3, 2), (4, 2), (4, 2))
    mask = np.array([[True, True, False, True]])
    assert_matches_finite_differences(Q, K, V, dO, mask)
    _, dK, dV = ah.attention_backward(Q, K, V, dO, mask=mask)
    assert np.allclose(dK[2], 0.0) and np.allclose(dV[2], 0.0)     # the hidden key gets nothing
    everything = np.ones((3, 4), dtype=bool)
    for a, b in zip(ah.attention_backward(Q, K, V, dO, mask=everything), ah.attention_backward(Q, K, V, dO)):
        assert np.allclose(a, b)


def test_broadcast_inputs_get_summed_gradients():
    """K and V shared by every head (no head dimension, or a dimension of 1): their gradient is the
    sum over the heads that read them, as finite differences on the shared array say."""
    rng = np.random.default_rng(3)
    Q, K, V, dO = random_case(rng, (3, 4, 2), (4, 2), (1, 4, 3))
    dQ, dK, dV = ah.attention_backward(Q, K, V, dO)
    assert dQ.shape == Q.shape and dK.shape == K.shape and dV.shape == V.shape
    assert_matches_finite_differences(Q, K, V, dO)


def test_each_head_equals_its_own_call():
    rng = np.random.default_rng(4)
    Q, K, V, dO = random_case(rng, (3, 5, 2), (3, 5, 2), (3, 5, 2))
    together = ah.attention_backward(Q, K, V, dO, mask=ah.causal_mask(5))
    for h in range(3):
        alone = ah.attention_backward(Q[h], K[h], V[h], dO[h], mask=ah.causal_mask(5))
        for a, b in zip(together, alone):
            assert np.allclose(a[h], b)


def test_one_key_gives_no_gradient_to_queries_and_keys():
    """With one visible key its weight is 1 whatever the scores: dQ and dK are exactly 0, dV = dO."""
    rng = np.random.default_rng(5)
    Q, K, V, dO = random_case(rng, (3, 2), (1, 2), (1, 2))
    dQ, dK, dV = ah.attention_backward(Q, K, V, dO)
    assert np.allclose(dQ, 0) and np.allclose(dK, 0) and np.allclose(dV, dO.sum(axis=0, keepdims=True))


@pytest.mark.parametrize("args, kind, words", [
    (((3, 2), (4, 2), (4, 2), (3, 5)), ValueError, ["dO", "(3, 2)", "(3, 5)"]),
    (((3, 2), (4, 3), (4, 2), (3, 2)), ValueError, ["K", "d_k=2"]),
    (((3, 2), (4, 2), (5, 2), (3, 2)), ValueError, ["V", "n_k=4"]),
    (((2,), (4, 2), (4, 2), (3, 2)), ValueError, ["Q", "at least 2"]),
    (((3, 2), (4, 2), (4, 2), (2,)), ValueError, ["dO", "at least 2"]),
])
def test_bad_shapes_raise_naming_the_argument(args, kind, words):
    arrays = [np.ones(s) for s in args]
    with pytest.raises(kind) as err:
        ah.attention_backward(*arrays)
    for w in words:
        assert w in str(err.value)


def test_bad_values_and_masks_raise():
    Q = K = V = dO = np.ones((3, 2))
    with pytest.raises(ValueError, match="dO"):
        ah.attention_backward(Q, K, V, np.full((3, 2), np.nan))
    with pytest.raises(TypeError, match="dO"):
        ah.attention_backward(Q, K, V, "gradient")
    with pytest.raises(TypeError, match="boolean"):
        ah.attention_backward(Q, K, V, dO, mask=np.ones((3, 3)))
    with pytest.raises(ValueError, match="mask"):
        ah.attention_backward(Q, K, V, dO, mask=np.ones((3, 4), dtype=bool))


def test_a_query_with_every_key_masked_raises():
    mask = ah.causal_mask(3).copy()
    mask[1] = False
    with pytest.raises(ValueError, match="every key"):
        ah.attention_backward(np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 2)), mask=mask)
