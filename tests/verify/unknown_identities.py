# True identities that tilesweep's encoding cannot settle today: `prove` must answer `unknown`
# for each (never `not equivalent`). tanh, sin, cos are uninterpreted functions, and sqrt knows
# only that it is non-negative. Moving one to true_identities.py is progress.

# tanh is odd.
# prover today: unknown (tanh is uninterpreted)
def tanh_odd_lhs(x: f32[M, N]) -> f32[M, N]:
    return tanh(-x)
def tanh_odd_rhs(x: f32[M, N]) -> f32[M, N]:
    return -tanh(x)

# sqrt of a square is the absolute value.
# prover today: unknown (sqrt is uninterpreted beyond sqrt(x) >= 0)
def sqrt_of_square_lhs(x: f32[M, N]) -> f32[M, N]:
    return sqrt(x * x)
def sqrt_of_square_rhs(x: f32[M, N]) -> f32[M, N]:
    return abs(x)

# exp of a -inf fill is 0 in IEEE arithmetic: the mask moves past exp.
# prover today: unknown (-inf is one opaque real, so exp(-inf) = 0 is not known)
def exp_past_causal_mask_lhs(s: f32[M, N]) -> f32[M, N]:
    return exp(where(iota(N, axis=1) <= iota(M, axis=0), s, -inf))
def exp_past_causal_mask_rhs(s: f32[M, N]) -> f32[M, N]:
    return where(iota(N, axis=1) <= iota(M, axis=0), exp(s), 0.0)

# A prefix sum is a matmul with a lower-triangular mask of ones (how a tensor engine scans).
# prover today: unknown (a sum under an index condition is not matched with a sum over a range)
def prefix_sum_as_masked_matmul_lhs(x: f32[N, P]) -> f32[N, P]:
    return matmul(where(iota(N, axis=1) <= iota(N, axis=0), 1.0, 0.0), x)
def prefix_sum_as_masked_matmul_rhs(x: f32[N, P]) -> f32[N, P]:
    return cumsum(x, axis=0)
