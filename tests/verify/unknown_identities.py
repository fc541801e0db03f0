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
