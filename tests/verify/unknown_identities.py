# True identities that tilesweep's encoding cannot settle today: `prove` must answer `unknown`
# for each (never `not equivalent`). Two need exp(a + b) = exp(a) * exp(b) (exp is an
# uninterpreted function); two need a sum's range split at an interior point (concat, slices),
# which the reduction normal form does not do. Moving one to true_identities.py is progress.

# Tiling (split-K): a product is the sum of the products of the two halves of the contracted axis.
# prover today: unknown (needs splitting a sum's range at K)
def split_k_matmul_lhs(a: f32[M, 2 * K], b: f32[2 * K, N]) -> f32[M, N]:
    return a @ b
def split_k_matmul_rhs(a: f32[M, 2 * K], b: f32[2 * K, N]) -> f32[M, N]:
    return a[:, :K] @ b[:K, :] + a[:, K:] @ b[K:, :]

# Axon §4.2: a row sum over a concat is the sum of the row sums of the parts.
# prover today: unknown (needs splitting a sum's range at N)
def sum_past_concat_lhs(a: f32[M, N], b: f32[M, P]) -> f32[M, 1]:
    return sum(concat((a, b), axis=1), axis=1, keepdims=True)
def sum_past_concat_rhs(a: f32[M, N], b: f32[M, P]) -> f32[M, 1]:
    return sum(a, axis=1, keepdims=True) + sum(b, axis=1, keepdims=True)

# Exponential law: exp(a + b) = exp(a) * exp(b).
# needs: exp-add
def exp_add_lhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return exp(a + b)
def exp_add_rhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return exp(a) * exp(b)

# Softmax: shift invariance, the stabilising row max does not change the result.
# needs: exp-add
def softmax_shift_invariance_lhs(x: f32[M, N]) -> f32[M, N]:
    e = exp(x - max(x, axis=1, keepdims=True))
    return e / sum(e, axis=1, keepdims=True)
def softmax_shift_invariance_rhs(x: f32[M, N]) -> f32[M, N]:
    e = exp(x)
    return e / sum(e, axis=1, keepdims=True)
