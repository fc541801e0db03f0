# True identities over the reals, for all dim values: every pair `<rule>_lhs`, `<rule>_rhs`
# must be proved equivalent (tests/verify/rules_test.cpp). Both sides of a pair have identical
# parameter lists and the same output shape. Pairs under "exp, log and split reductions" need
# the laws of exponents and reductions over split ranges (issue 18); the online softmax pairs
# are timed in bench/RESULTS.md.
# scripts/check_identities.py checks every pair numerically with NumPy.

# ---------------------------------------------------------------- matmul algebra

# Linear algebra: matmul is associative.
def matmul_assoc_lhs(a: f32[M, K], b: f32[K, N], c: f32[N, P]) -> f32[M, P]:
    return matmul(matmul(a, b), c)
def matmul_assoc_rhs(a: f32[M, K], b: f32[K, N], c: f32[N, P]) -> f32[M, P]:
    return matmul(a, matmul(b, c))

# Linear algebra: transpose of a product swaps the order, (A B)^T = B^T A^T.
def transpose_of_product_lhs(a: f32[M, K], b: f32[K, N]) -> f32[N, M]:
    return (a @ b).T
def transpose_of_product_rhs(a: f32[M, K], b: f32[K, N]) -> f32[N, M]:
    return b.T @ a.T

# Linear algebra: batched transpose of a product (last two axes), as in attention's K^T.
def batched_transpose_of_product_lhs(a: f32[G, M, K], b: f32[G, K, N]) -> f32[G, N, M]:
    return transpose(matmul(a, b), axes=(0, 2, 1))
def batched_transpose_of_product_rhs(a: f32[G, M, K], b: f32[G, K, N]) -> f32[G, N, M]:
    return matmul(transpose(b, axes=(0, 2, 1)), transpose(a, axes=(0, 2, 1)))

# Axon Table 2: multiply (per-row scale of the left operand) past matmul.
def row_scale_past_matmul_lhs(a: f32[M, K], b: f32[K, N], d: f32[M, 1]) -> f32[M, N]:
    return matmul(d * a, b)
def row_scale_past_matmul_rhs(a: f32[M, K], b: f32[K, N], d: f32[M, 1]) -> f32[M, N]:
    return d * matmul(a, b)

# Linear algebra: a scalar scale of the left operand moves out of the product.
def scalar_scale_left_matmul_lhs(a: f32[M, K], b: f32[K, N], s: f32) -> f32[M, N]:
    return (s * a) @ b
def scalar_scale_left_matmul_rhs(a: f32[M, K], b: f32[K, N], s: f32) -> f32[M, N]:
    return s * (a @ b)

# Linear algebra: a scalar scale of the right operand moves out of the product.
def scalar_scale_right_matmul_lhs(a: f32[M, K], b: f32[K, N], s: f32) -> f32[M, N]:
    return a @ (b * s)
def scalar_scale_right_matmul_rhs(a: f32[M, K], b: f32[K, N], s: f32) -> f32[M, N]:
    return (a @ b) * s

# Axon Table 2: multiply (per-column scale of the right operand, [1, N]) past matmul.
def col_scale_past_matmul_lhs(a: f32[M, K], b: f32[K, N], c: f32[1, N]) -> f32[M, N]:
    return matmul(a, b * c)
def col_scale_past_matmul_rhs(a: f32[M, K], b: f32[K, N], c: f32[1, N]) -> f32[M, N]:
    return matmul(a, b) * c

# Axon Table 2: multiply (per-column scale as a vector [N], broadcast) past matmul.
def col_vec_scale_past_matmul_lhs(a: f32[M, K], b: f32[K, N], c: f32[N]) -> f32[M, N]:
    return matmul(a, b * c)
def col_vec_scale_past_matmul_rhs(a: f32[M, K], b: f32[K, N], c: f32[N]) -> f32[M, N]:
    return matmul(a, b) * c

# Linear algebra: a scale on the contracted axis moves between the operands, (A diag(c)) B = A (diag(c) B).
def contracted_scale_moves_lhs(a: f32[M, K], b: f32[K, N], c: f32[1, K]) -> f32[M, N]:
    return (a * c) @ b
def contracted_scale_moves_rhs(a: f32[M, K], b: f32[K, N], c: f32[1, K]) -> f32[M, N]:
    return a @ (c.T * b)

# Linear algebra: left distributivity of matmul over +.
def matmul_distrib_right_lhs(a: f32[M, K], b: f32[K, N], c: f32[K, N]) -> f32[M, N]:
    return a @ (b + c)
def matmul_distrib_right_rhs(a: f32[M, K], b: f32[K, N], c: f32[K, N]) -> f32[M, N]:
    return a @ b + a @ c

# Linear algebra: right distributivity of matmul over +.
def matmul_distrib_left_lhs(a: f32[M, K], b: f32[M, K], c: f32[K, N]) -> f32[M, N]:
    return (a + b) @ c
def matmul_distrib_left_rhs(a: f32[M, K], b: f32[M, K], c: f32[K, N]) -> f32[M, N]:
    return a @ c + b @ c

# Linear algebra: matmul distributes over -.
def matmul_distrib_sub_lhs(a: f32[M, K], b: f32[K, N], c: f32[K, N]) -> f32[M, N]:
    return matmul(a, b - c)
def matmul_distrib_sub_rhs(a: f32[M, K], b: f32[K, N], c: f32[K, N]) -> f32[M, N]:
    return matmul(a, b) - matmul(a, c)

# Linear algebra: negation moves out of a product.
def matmul_neg_lhs(a: f32[M, K], b: f32[K, N]) -> f32[M, N]:
    return (-a) @ b
def matmul_neg_rhs(a: f32[M, K], b: f32[K, N]) -> f32[M, N]:
    return -(a @ b)

# Linear algebra: a matrix-vector product is a broadcast multiply and a row sum.
def matvec_as_sum_lhs(a: f32[M, K], v: f32[K, 1]) -> f32[M, 1]:
    return matmul(a, v)
def matvec_as_sum_rhs(a: f32[M, K], v: f32[K, 1]) -> f32[M, 1]:
    return sum(a * v.T, axis=1, keepdims=True)

# Linear algebra: an outer product (contracted dim 1) is a broadcast multiply.
def outer_product_as_broadcast_lhs(u: f32[M, 1], v: f32[1, N]) -> f32[M, N]:
    return u @ v
def outer_product_as_broadcast_rhs(u: f32[M, 1], v: f32[1, N]) -> f32[M, N]:
    return u * v

# Linear algebra: a row sum of a product is the product with the row sums of the right operand.
def row_sum_of_matmul_lhs(a: f32[M, K], b: f32[K, N]) -> f32[M, 1]:
    return sum(matmul(a, b), axis=1, keepdims=True)
def row_sum_of_matmul_rhs(a: f32[M, K], b: f32[K, N]) -> f32[M, 1]:
    return matmul(a, sum(b, axis=1, keepdims=True))

# Linear algebra: a column sum of a product is the column sums of the left operand times it.
def col_sum_of_matmul_lhs(a: f32[M, K], b: f32[K, N]) -> f32[1, N]:
    return sum(a @ b, axis=0, keepdims=True)
def col_sum_of_matmul_rhs(a: f32[M, K], b: f32[K, N]) -> f32[1, N]:
    return sum(a, axis=0, keepdims=True) @ b

# ---------------------------------------------------------------- Axon swaps (Table 2, §4.2)

# Axon Table 2 / §4.2: RMSNorm+MatMul, the multiply by rms moves past the matmul.
def rmsnorm_mul_past_matmul_lhs(x: f32[M, K], w: f32[K, N], eps: f32 = 1e-6) -> f32[M, N]:
    rms = rsqrt(mean(square(x), axis=1, keepdims=True) + eps)
    return matmul(x * rms, w)
def rmsnorm_mul_past_matmul_rhs(x: f32[M, K], w: f32[K, N], eps: f32 = 1e-6) -> f32[M, N]:
    rms = rsqrt(mean(square(x), axis=1, keepdims=True) + eps)
    return matmul(x, w) * rms

# Axon Table 2 / §4.2: Softmax+MatMul, the division by the row sum moves past the matmul.
def softmax_div_past_matmul_lhs(x: f32[M, K], w: f32[K, N]) -> f32[M, N]:
    e = exp(x - max(x, axis=1, keepdims=True))
    s = sum(e, axis=1, keepdims=True)
    return matmul(e / s, w)
def softmax_div_past_matmul_rhs(x: f32[M, K], w: f32[K, N]) -> f32[M, N]:
    e = exp(x - max(x, axis=1, keepdims=True))
    s = sum(e, axis=1, keepdims=True)
    return matmul(e, w) / s

# Axon Table 2: element-wise unary (exp) past transpose.
def exp_past_transpose_lhs(x: f32[M, N]) -> f32[N, M]:
    return exp(x).T
def exp_past_transpose_rhs(x: f32[M, N]) -> f32[N, M]:
    return exp(x.T)

# Axon Table 2: element-wise unary (silu) past a 3-D transpose.
def silu_past_transpose_3d_lhs(x: f32[A, B, C]) -> f32[C, A, B]:
    return silu(transpose(x, axes=(2, 0, 1)))
def silu_past_transpose_3d_rhs(x: f32[A, B, C]) -> f32[C, A, B]:
    return transpose(silu(x), axes=(2, 0, 1))

# Axon Table 2: add past transpose.
def add_past_transpose_lhs(a: f32[M, N], b: f32[M, N]) -> f32[N, M]:
    return (a + b).T
def add_past_transpose_rhs(a: f32[M, N], b: f32[M, N]) -> f32[N, M]:
    return a.T + b.T

# Axon Table 2: multiply with a broadcast row scale past transpose.
def mul_past_transpose_lhs(x: f32[M, N], r: f32[M, 1]) -> f32[N, M]:
    return (x * r).T
def mul_past_transpose_rhs(x: f32[M, N], r: f32[M, 1]) -> f32[N, M]:
    return x.T * r.T

# Axon Table 2: transpose past concat (rows become columns).
def transpose_past_concat_lhs(a: f32[M, N], b: f32[P, N]) -> f32[N, M + P]:
    return concat((a, b), axis=0).T
def transpose_past_concat_rhs(a: f32[M, N], b: f32[P, N]) -> f32[N, M + P]:
    return concat((a.T, b.T), axis=1)

# Axon Table 2: a slice of the rows of a matmul is the matmul of the sliced rows.
def slice_rows_of_matmul_lhs(x: f32[2 * M, K], w: f32[K, N]) -> f32[M, N]:
    return matmul(x, w)[M:, :]
def slice_rows_of_matmul_rhs(x: f32[2 * M, K], w: f32[K, N]) -> f32[M, N]:
    return matmul(x[M:, :], w)

# Axon Table 2: a slice of the columns of a matmul is the matmul with the sliced columns.
def slice_cols_of_matmul_lhs(x: f32[M, K], w: f32[K, 2 * N]) -> f32[M, N]:
    return (x @ w)[:, :N]
def slice_cols_of_matmul_rhs(x: f32[M, K], w: f32[K, 2 * N]) -> f32[M, N]:
    return x @ w[:, :N]

# Axon Table 2: concat along rows then matmul is the concat of the matmuls.
def concat_rows_matmul_lhs(a: f32[M, K], b: f32[P, K], w: f32[K, N]) -> f32[M + P, N]:
    return matmul(concat((a, b), axis=0), w)
def concat_rows_matmul_rhs(a: f32[M, K], b: f32[P, K], w: f32[K, N]) -> f32[M + P, N]:
    return concat((matmul(a, w), matmul(b, w)), axis=0)

# Axon Table 2: concat along columns of the right operand then matmul is the concat of the matmuls.
def concat_cols_matmul_lhs(x: f32[M, K], a: f32[K, N], b: f32[K, P]) -> f32[M, N + P]:
    return x @ concat((a, b), axis=1)
def concat_cols_matmul_rhs(x: f32[M, K], a: f32[K, N], b: f32[K, P]) -> f32[M, N + P]:
    return concat((x @ a, x @ b), axis=1)

# Axon Table 2: repeat commutes with an element-wise unary (exp).
def repeat_past_exp_lhs(x: f32[M, N]) -> f32[2 * M, N]:
    return exp(repeat(x, 2, axis=0))
def repeat_past_exp_rhs(x: f32[M, N]) -> f32[2 * M, N]:
    return repeat(exp(x), 2, axis=0)

# Axon Table 2: repeat commutes with an element-wise binary (add).
def repeat_past_add_lhs(a: f32[M, N], b: f32[M, N]) -> f32[M, 3 * N]:
    return repeat(a, 3, axis=1) + repeat(b, 3, axis=1)
def repeat_past_add_rhs(a: f32[M, N], b: f32[M, N]) -> f32[M, 3 * N]:
    return repeat(a + b, 3, axis=1)

# Axon Table 2: element-wise unary (sigmoid) past slice.
def sigmoid_past_slice_lhs(x: f32[M, 2 * H]) -> f32[M, H]:
    return sigmoid(x)[:, H:]
def sigmoid_past_slice_rhs(x: f32[M, 2 * H]) -> f32[M, H]:
    return sigmoid(x[:, H:])

# Axon Table 2: multiply by a row scale past concat.
def mul_past_concat_lhs(a: f32[M, N], b: f32[M, P], r: f32[M, 1]) -> f32[M, N + P]:
    return concat((a * r, b * r), axis=1)
def mul_past_concat_rhs(a: f32[M, N], b: f32[M, P], r: f32[M, 1]) -> f32[M, N + P]:
    return concat((a, b), axis=1) * r

# ---------------------------------------------------------------- reductions

# Linearity: a sum of a sum is the sum of the sums.
def sum_add_linear_lhs(a: f32[M, N], b: f32[M, N]) -> f32[M]:
    return sum(a + b, axis=1)
def sum_add_linear_rhs(a: f32[M, N], b: f32[M, N]) -> f32[M]:
    return sum(a, axis=1) + sum(b, axis=1)

# Linearity: a factor constant along the reduced axis moves out of the sum.
def sum_row_scale_lhs(x: f32[M, N], c: f32[M, 1]) -> f32[M, 1]:
    return sum(c * x, axis=1, keepdims=True)
def sum_row_scale_rhs(x: f32[M, N], c: f32[M, 1]) -> f32[M, 1]:
    return c * sum(x, axis=1, keepdims=True)

# Linearity: a scalar factor moves out of a column sum.
def sum_scalar_scale_lhs(x: f32[M, N], s: f32) -> f32[N]:
    return sum(s * x, axis=0)
def sum_scalar_scale_rhs(x: f32[M, N], s: f32) -> f32[N]:
    return s * sum(x, axis=0)

# Definition: mean is the sum divided by the size of the reduced axis.
def mean_is_sum_over_n_lhs(x: f32[M, N]) -> f32[M]:
    return mean(x, axis=1)
def mean_is_sum_over_n_rhs(x: f32[M, N]) -> f32[M]:
    return sum(x, axis=1) / N

# Linearity: mean of a scaled tensor (RMSNorm's mean(square(x)) scaled by a constant).
def mean_scalar_scale_lhs(x: f32[M, N], s: f32) -> f32[M, 1]:
    return mean(square(x) * s, axis=1, keepdims=True)
def mean_scalar_scale_rhs(x: f32[M, N], s: f32) -> f32[M, 1]:
    return mean(square(x), axis=1, keepdims=True) * s

# Layout: summing the transposed axis 0 is summing axis 1.
def sum_of_transpose_lhs(x: f32[M, N]) -> f32[M]:
    return sum(x.T, axis=0)
def sum_of_transpose_rhs(x: f32[M, N]) -> f32[M]:
    return sum(x, axis=1)

# Fubini: the order of two finite sums can be exchanged.
def sum_exchange_lhs(x: f32[M, N]) -> f32[1, 1]:
    return sum(sum(x, axis=1, keepdims=True), axis=0, keepdims=True)
def sum_exchange_rhs(x: f32[M, N]) -> f32[1, 1]:
    return sum(sum(x, axis=0, keepdims=True), axis=1, keepdims=True)

# Softmax stabilisation: a shift constant along the reduced axis moves out of a max.
def max_shift_lhs(x: f32[M, N], c: f32[M, 1]) -> f32[M, 1]:
    return max(x + c, axis=1, keepdims=True)
def max_shift_rhs(x: f32[M, N], c: f32[M, 1]) -> f32[M, 1]:
    return max(x, axis=1, keepdims=True) + c

# Order duality: a min is a negated max of the negation.
def min_via_max_lhs(x: f32[M, N]) -> f32[M]:
    return min(x, axis=1)
def min_via_max_rhs(x: f32[M, N]) -> f32[M]:
    return -max(-x, axis=1)

# Linearity: cumsum of a sum is the sum of the cumsums.
def cumsum_add_linear_lhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return cumsum(a + b, axis=1)
def cumsum_add_linear_rhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return cumsum(a, axis=1) + cumsum(b, axis=1)

# Linearity: a factor constant along the scanned axis moves out of a cumsum.
def cumsum_row_scale_lhs(x: f32[M, N], c: f32[M, 1]) -> f32[M, N]:
    return cumsum(c * x, axis=1)
def cumsum_row_scale_rhs(x: f32[M, N], c: f32[M, 1]) -> f32[M, N]:
    return c * cumsum(x, axis=1)

# Layout: cumsum over axis 0 of the transpose is the transpose of cumsum over axis 1.
def cumsum_of_transpose_lhs(x: f32[M, N]) -> f32[N, M]:
    return cumsum(x.T, axis=0)
def cumsum_of_transpose_rhs(x: f32[M, N]) -> f32[N, M]:
    return cumsum(x, axis=1).T

# Recurrence: a scan whose multiplier is all ones is a cumulative sum (tensor_tensor_scan lowers cumsum).
def cumsum_as_scan_of_ones_lhs(x: f32[M, N]) -> f32[M, N]:
    return cumsum(x, axis=1)
def cumsum_as_scan_of_ones_rhs(x: f32[M, N]) -> f32[M, N]:
    return scan(broadcast_to(1.0, shape=(M, N)), x, axis=1)

# Linearity: a scan is linear in its additive operand (the same decay on both sides).
def scan_add_linear_lhs(a: f32[M, N], b: f32[M, N], c: f32[M, N]) -> f32[M, N]:
    return scan(a, b + c, axis=1)
def scan_add_linear_rhs(a: f32[M, N], b: f32[M, N], c: f32[M, N]) -> f32[M, N]:
    return scan(a, b, axis=1) + scan(a, c, axis=1)

# Linearity: a factor constant along the scanned axis moves out of a scan's additive operand.
def scan_row_scale_lhs(a: f32[M, N], b: f32[M, N], d: f32[M, 1]) -> f32[M, N]:
    return scan(a, d * b, axis=1)
def scan_row_scale_rhs(a: f32[M, N], b: f32[M, N], d: f32[M, 1]) -> f32[M, N]:
    return d * scan(a, b, axis=1)

# ---------------------------------------------------------------- element-wise (Trinity-style)

# Trinity: + is commutative.
def add_comm_lhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return a + b
def add_comm_rhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return b + a

# Trinity: * is commutative (with broadcasting).
def mul_comm_lhs(a: f32[M, N], b: f32[N]) -> f32[M, N]:
    return a * b
def mul_comm_rhs(a: f32[M, N], b: f32[N]) -> f32[M, N]:
    return b * a

# Trinity: + is associative.
def add_assoc_lhs(a: f32[M, N], b: f32[M, N], c: f32[M, N]) -> f32[M, N]:
    return (a + b) + c
def add_assoc_rhs(a: f32[M, N], b: f32[M, N], c: f32[M, N]) -> f32[M, N]:
    return a + (b + c)

# Trinity: * is associative (with broadcasting).
def mul_assoc_lhs(a: f32[M, N], b: f32[M, 1], c: f32[1, N]) -> f32[M, N]:
    return (a * b) * c
def mul_assoc_rhs(a: f32[M, N], b: f32[M, 1], c: f32[1, N]) -> f32[M, N]:
    return a * (b * c)

# Trinity: * distributes over +.
def mul_distrib_lhs(a: f32[M, N], b: f32[M, N], c: f32[M, N]) -> f32[M, N]:
    return a * (b + c)
def mul_distrib_rhs(a: f32[M, N], b: f32[M, N], c: f32[M, N]) -> f32[M, N]:
    return a * b + a * c

# Trinity: factoring, x - x*y = x*(1 - y).
def factor_one_minus_lhs(x: f32[M, N], y: f32[M, N]) -> f32[M, N]:
    return x - x * y
def factor_one_minus_rhs(x: f32[M, N], y: f32[M, N]) -> f32[M, N]:
    return x * (1.0 - y)

# Trinity: x / y * z = x * z / y (the same denominator on both sides).
def div_mul_swap_lhs(x: f32[M, N], y: f32[M, N], z: f32[M, N]) -> f32[M, N]:
    return x / y * z
def div_mul_swap_rhs(x: f32[M, N], y: f32[M, N], z: f32[M, N]) -> f32[M, N]:
    return x * z / y

# Trinity: fractions over the same denominator add numerators.
def div_add_same_denominator_lhs(a: f32[M, N], b: f32[M, N], c: f32[M, 1]) -> f32[M, N]:
    return a / c + b / c
def div_add_same_denominator_rhs(a: f32[M, N], b: f32[M, N], c: f32[M, 1]) -> f32[M, N]:
    return (a + b) / c

# Definition: multiplying by a reciprocal is dividing.
def mul_reciprocal_is_div_lhs(x: f32[M, N], y: f32[M, N]) -> f32[M, N]:
    return x * reciprocal(y)
def mul_reciprocal_is_div_rhs(x: f32[M, N], y: f32[M, N]) -> f32[M, N]:
    return x / y

# Definition: rsqrt is the reciprocal of sqrt.
def rsqrt_is_reciprocal_sqrt_lhs(x: f32[M, N]) -> f32[M, N]:
    return rsqrt(x)
def rsqrt_is_reciprocal_sqrt_rhs(x: f32[M, N]) -> f32[M, N]:
    return reciprocal(sqrt(x))

# Definition: square is x * x (and ** 2).
def square_is_mul_lhs(x: f32[M, N]) -> f32[M, N]:
    return square(x)
def square_is_mul_rhs(x: f32[M, N]) -> f32[M, N]:
    return x * x

# Algebra: square of a negation.
def square_of_neg_lhs(x: f32[M, N]) -> f32[M, N]:
    return square(-x)
def square_of_neg_rhs(x: f32[M, N]) -> f32[M, N]:
    return x ** 2

# Algebra: binomial expansion (nonlinear real arithmetic).
def binomial_square_lhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return square(a + b)
def binomial_square_rhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return a * a + 2.0 * a * b + b * b

# Definition: relu is maximum with 0.
def relu_is_maximum_lhs(x: f32[M, N]) -> f32[M, N]:
    return relu(x)
def relu_is_maximum_rhs(x: f32[M, N]) -> f32[M, N]:
    return maximum(x, 0.0)

# Algebra: relu(x) - relu(-x) = x.
def relu_difference_lhs(x: f32[M, N]) -> f32[M, N]:
    return relu(x) - relu(-x)
def relu_difference_rhs(x: f32[M, N]) -> f32[M, N]:
    return x

# Definition: silu is x * sigmoid(x).
def silu_is_x_sigmoid_lhs(x: f32[M, N]) -> f32[M, N]:
    return silu(x)
def silu_is_x_sigmoid_rhs(x: f32[M, N]) -> f32[M, N]:
    return x * sigmoid(x)

# Order duality: maximum(a, b) = -minimum(-a, -b).
def maximum_via_minimum_lhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return maximum(a, b)
def maximum_via_minimum_rhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return -minimum(-a, -b)

# Algebra: maximum(a, b) + minimum(a, b) = a + b.
def maximum_plus_minimum_lhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return maximum(a, b) + minimum(a, b)
def maximum_plus_minimum_rhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return a + b

# Algebra: abs(x) = maximum(x, -x).
def abs_via_maximum_lhs(x: f32[M, N]) -> f32[M, N]:
    return abs(x)
def abs_via_maximum_rhs(x: f32[M, N]) -> f32[M, N]:
    return maximum(x, -x)

# Algebra: a shift moves out of a maximum, maximum(a + c, b + c) = maximum(a, b) + c.
def maximum_shift_lhs(a: f32[M, N], b: f32[M, N], c: f32[M, 1]) -> f32[M, N]:
    return maximum(a + c, b + c)
def maximum_shift_rhs(a: f32[M, N], b: f32[M, N], c: f32[M, 1]) -> f32[M, N]:
    return maximum(a, b) + c

# ---------------------------------------------------------------- layout

# Layout: transpose is an involution.
def double_transpose_lhs(x: f32[M, N]) -> f32[M, N]:
    return x.T.T
def double_transpose_rhs(x: f32[M, N]) -> f32[M, N]:
    return x

# Layout: two 3-D transposes compose to the identity.
def transpose_3d_inverse_lhs(x: f32[A, B, C]) -> f32[A, B, C]:
    return transpose(transpose(x, axes=(1, 2, 0)), axes=(2, 0, 1))
def transpose_3d_inverse_rhs(x: f32[A, B, C]) -> f32[A, B, C]:
    return x

# Layout: a reshape round trip is the identity.
def reshape_round_trip_lhs(x: f32[M, N]) -> f32[M, N]:
    return reshape(reshape(x, (N, M)), (M, N))
def reshape_round_trip_rhs(x: f32[M, N]) -> f32[M, N]:
    return x

# Layout: transpose of a broadcast is the broadcast of the transpose (x only names the dim N).
def transpose_of_broadcast_lhs(r: f32[M, 1], x: f32[M, N]) -> f32[N, M]:
    return broadcast_to(r, (M, N)).T
def transpose_of_broadcast_rhs(r: f32[M, 1], x: f32[M, N]) -> f32[N, M]:
    return broadcast_to(r.T, (N, M))

# Layout: concat of the two halves of x is x.
def concat_of_halves_lhs(x: f32[M, 2 * H]) -> f32[M, 2 * H]:
    return concat((x[:, :H], x[:, H:]), axis=1)
def concat_of_halves_rhs(x: f32[M, 2 * H]) -> f32[M, 2 * H]:
    return x

# Layout: a slice of a slice is one slice.
def slice_of_slice_lhs(x: f32[M, 3 * H]) -> f32[M, H]:
    return x[:, H:][:, :H]
def slice_of_slice_rhs(x: f32[M, 3 * H]) -> f32[M, H]:
    return x[:, H : 2 * H]

# Layout: concat is associative.
def concat_assoc_lhs(a: f32[M, N], b: f32[M, P], c: f32[M, Q]) -> f32[M, N + P + Q]:
    return concat((concat((a, b), axis=1), c), axis=1)
def concat_assoc_rhs(a: f32[M, N], b: f32[M, P], c: f32[M, Q]) -> f32[M, N + P + Q]:
    return concat((a, concat((b, c), axis=1)), axis=1)

# ---------------------------------------------------------------- exp, log and split reductions

# Exponential law: exp(a + b) = exp(a) * exp(b).
def exp_add_lhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return exp(a + b)
def exp_add_rhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return exp(a) * exp(b)

# Exponential law: exp(a - b) = exp(a) / exp(b).
def exp_sub_lhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return exp(a - b)
def exp_sub_rhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return exp(a) / exp(b)

# Exponential law: exp(2 a) = exp(a) ** 2, written as a product.
def exp_double_lhs(a: f32[M, N]) -> f32[M, N]:
    return exp(a + a)
def exp_double_rhs(a: f32[M, N]) -> f32[M, N]:
    return exp(a) * exp(a)

# exp is positive: a ReLU of exp is exp.
def exp_positive_lhs(x: f32[M, N]) -> f32[M, N]:
    return relu(exp(x))
def exp_positive_rhs(x: f32[M, N]) -> f32[M, N]:
    return exp(x)

# exp(-x) is the reciprocal of exp(x).
def exp_neg_reciprocal_lhs(x: f32[M, N]) -> f32[M, N]:
    return exp(-x) * exp(x)
def exp_neg_reciprocal_rhs(x: f32[M, N]) -> f32[M, N]:
    return x * 0.0 + 1.0

# log inverts exp.
def log_of_exp_lhs(x: f32[M, N]) -> f32[M, N]:
    return log(exp(x))
def log_of_exp_rhs(x: f32[M, N]) -> f32[M, N]:
    return x

# log of a product of positive numbers (exps) is the sum of the logs.
def log_of_product_of_exps_lhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return log(exp(a) * exp(b))
def log_of_product_of_exps_rhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return log(exp(a)) + log(exp(b))

# Softmax: shift invariance, the stabilising row max does not change the result.
def softmax_shift_invariance_lhs(x: f32[M, N]) -> f32[M, N]:
    e = exp(x - max(x, axis=1, keepdims=True))
    return e / sum(e, axis=1, keepdims=True)
def softmax_shift_invariance_rhs(x: f32[M, N]) -> f32[M, N]:
    e = exp(x)
    return e / sum(e, axis=1, keepdims=True)

# Softmax is invariant under any per-row shift, not only the max.
def softmax_any_shift_lhs(x: f32[M, N], c: f32[M, 1]) -> f32[M, N]:
    e = exp(x - c)
    return e / sum(e, axis=1, keepdims=True)
def softmax_any_shift_rhs(x: f32[M, N], c: f32[M, 1]) -> f32[M, N]:
    e = exp(x)
    return e / sum(e, axis=1, keepdims=True)

# Log-sum-exp: the stabilised form equals the plain one.
def logsumexp_stabilised_lhs(x: f32[M, N]) -> f32[M, 1]:
    m = max(x, axis=1, keepdims=True)
    return m + log(sum(exp(x - m), axis=1, keepdims=True))
def logsumexp_stabilised_rhs(x: f32[M, N]) -> f32[M, 1]:
    return log(sum(exp(x), axis=1, keepdims=True))

# Tiling (split-K): a product is the sum of the products of the two halves of the contracted axis.
def split_k_matmul_lhs(a: f32[M, 2 * K], b: f32[2 * K, N]) -> f32[M, N]:
    return a @ b
def split_k_matmul_rhs(a: f32[M, 2 * K], b: f32[2 * K, N]) -> f32[M, N]:
    return a[:, :K] @ b[:K, :] + a[:, K:] @ b[K:, :]

# A sum over [0, 2N) is the sum over [0, N) plus the sum over [N, 2N).
def sum_split_range_lhs(x: f32[M, 2 * N]) -> f32[M]:
    return sum(x, axis=1)
def sum_split_range_rhs(x: f32[M, 2 * N]) -> f32[M]:
    return sum(x[:, :N], axis=1) + sum(x[:, N:], axis=1)

# A max over [0, 2N) is the larger of the maxima over [0, N) and [N, 2N).
def max_split_range_lhs(x: f32[M, 2 * N]) -> f32[M]:
    return max(x, axis=1)
def max_split_range_rhs(x: f32[M, 2 * N]) -> f32[M]:
    return maximum(max(x[:, :N], axis=1), max(x[:, N:], axis=1))

# A min over split ranges, three parts.
def min_split_range_three_lhs(x: f32[M, 3 * N]) -> f32[M]:
    return min(x, axis=1)
def min_split_range_three_rhs(x: f32[M, 3 * N]) -> f32[M]:
    return minimum(minimum(min(x[:, :N], axis=1), min(x[:, N : 2 * N], axis=1)), min(x[:, 2 * N :], axis=1))

# Axon §4.2: a row sum over a concat is the sum of the row sums of the parts.
def sum_past_concat_lhs(a: f32[M, N], b: f32[M, P]) -> f32[M, 1]:
    return sum(concat((a, b), axis=1), axis=1, keepdims=True)
def sum_past_concat_rhs(a: f32[M, N], b: f32[M, P]) -> f32[M, 1]:
    return sum(a, axis=1, keepdims=True) + sum(b, axis=1, keepdims=True)

# A row max over a concat is the larger of the parts' row maxima.
def max_past_concat_lhs(a: f32[M, N], b: f32[M, P]) -> f32[M, 1]:
    return max(concat((a, b), axis=1), axis=1, keepdims=True)
def max_past_concat_rhs(a: f32[M, N], b: f32[M, P]) -> f32[M, 1]:
    return maximum(max(a, axis=1, keepdims=True), max(b, axis=1, keepdims=True))

# A streamed reduction's fold (split_reduction.h): the reduction over a prefix of A columns and
# the next tile of B, folded by the reduction itself over the two per-row values.
def sum_running_fold_lhs(x: f32[M, A + B]) -> f32[M, 1]:
    return sum(x, axis=1, keepdims=True)
def sum_running_fold_rhs(x: f32[M, A + B]) -> f32[M, 1]:
    return sum(concat((sum(x[:, :A], axis=1, keepdims=True), sum(x[:, A:], axis=1, keepdims=True)), axis=1), axis=1, keepdims=True)
# The same fold for a row max.
def max_running_fold_lhs(x: f32[M, A + B]) -> f32[M, 1]:
    return max(x, axis=1, keepdims=True)
def max_running_fold_rhs(x: f32[M, A + B]) -> f32[M, 1]:
    return max(concat((max(x[:, :A], axis=1, keepdims=True), max(x[:, A:], axis=1, keepdims=True)), axis=1), axis=1, keepdims=True)
# The same fold for a row min.
def min_running_fold_lhs(x: f32[M, A + B]) -> f32[M, 1]:
    return min(x, axis=1, keepdims=True)
def min_running_fold_rhs(x: f32[M, A + B]) -> f32[M, 1]:
    return min(concat((min(x[:, :A], axis=1, keepdims=True), min(x[:, A:], axis=1, keepdims=True)), axis=1), axis=1, keepdims=True)

# A reduction over a literal range of a few elements is the reducer over them.
def sum_of_three_columns_lhs(x: f32[M, 3]) -> f32[M, 1]:
    return sum(x, axis=1, keepdims=True)
def sum_of_three_columns_rhs(x: f32[M, 3]) -> f32[M, 1]:
    return x[:, :1] + x[:, 1:2] + x[:, 2:]

# The online softmax step: partial sums of exps rescaled to the running max add up.
def rescaled_sum_of_exps_lhs(x: f32[M, 2 * T]) -> f32[M, 1]:
    m = max(x, axis=1, keepdims=True)
    return sum(exp(x - m), axis=1, keepdims=True)
def rescaled_sum_of_exps_rhs(x: f32[M, 2 * T]) -> f32[M, 1]:
    m1 = max(x[:, :T], axis=1, keepdims=True)
    m2 = max(x[:, T:], axis=1, keepdims=True)
    m = maximum(m1, m2)
    s1 = sum(exp(x[:, :T] - m1), axis=1, keepdims=True)
    s2 = sum(exp(x[:, T:] - m2), axis=1, keepdims=True)
    return s1 * exp(m1 - m) + s2 * exp(m2 - m)

# FlashAttention's online softmax over two tiles equals the safe softmax.
def online_softmax_two_tiles_lhs(x: f32[M, 2 * T]) -> f32[M, 2 * T]:
    e = exp(x - max(x, axis=1, keepdims=True))
    return e / sum(e, axis=1, keepdims=True)
def online_softmax_two_tiles_rhs(x: f32[M, 2 * T]) -> f32[M, 2 * T]:
    m1 = max(x[:, :T], axis=1, keepdims=True)
    s1 = sum(exp(x[:, :T] - m1), axis=1, keepdims=True)
    m2 = maximum(m1, max(x[:, T:], axis=1, keepdims=True))
    s2 = s1 * exp(m1 - m2) + sum(exp(x[:, T:] - m2), axis=1, keepdims=True)
    return exp(x - m2) / s2

# Online softmax over four tiles (the running max and rescaled sum carried tile by tile).
def online_softmax_four_tiles_lhs(x: f32[M, 4 * T]) -> f32[M, 4 * T]:
    e = exp(x - max(x, axis=1, keepdims=True))
    return e / sum(e, axis=1, keepdims=True)
def online_softmax_four_tiles_rhs(x: f32[M, 4 * T]) -> f32[M, 4 * T]:
    m1 = max(x[:, :T], axis=1, keepdims=True)
    s1 = sum(exp(x[:, :T] - m1), axis=1, keepdims=True)
    m2 = maximum(m1, max(x[:, T : 2 * T], axis=1, keepdims=True))
    s2 = s1 * exp(m1 - m2) + sum(exp(x[:, T : 2 * T] - m2), axis=1, keepdims=True)
    m3 = maximum(m2, max(x[:, 2 * T : 3 * T], axis=1, keepdims=True))
    s3 = s2 * exp(m2 - m3) + sum(exp(x[:, 2 * T : 3 * T] - m3), axis=1, keepdims=True)
    m4 = maximum(m3, max(x[:, 3 * T :], axis=1, keepdims=True))
    s4 = s3 * exp(m3 - m4) + sum(exp(x[:, 3 * T :] - m4), axis=1, keepdims=True)
    return exp(x - m4) / s4

# ---------------------------------------------------------------- masks, where, iota, casts

# Selection: where(a < b, a, b) is the smaller of the two.
def where_less_is_minimum_lhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return where(a < b, a, b)
def where_less_is_minimum_rhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return minimum(a, b)

# Selection: where(a < b, b, a) is the larger of the two.
def where_less_is_maximum_lhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return where(a < b, b, a)
def where_less_is_maximum_rhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return maximum(a, b)

# Comparisons: a < b is b > a (the mask is the same values).
def less_is_flipped_greater_lhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return a < b
def less_is_flipped_greater_rhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return b > a

# Selection: negating the condition swaps the branches.
def where_negated_condition_lhs(a: f32[M, N], b: f32[M, N], x: f32[M, N], y: f32[M, N]) -> f32[M, N]:
    return where(a < b, x, y)
def where_negated_condition_rhs(a: f32[M, N], b: f32[M, N], x: f32[M, N], y: f32[M, N]) -> f32[M, N]:
    return where(a >= b, y, x)

# Masks are 0/1 values: multiplying by a mask is selecting against zero.
def multiply_by_mask_lhs(s: f32[M, N], a: f32[M, N]) -> f32[M, N]:
    return s * (a != 0.0)
def multiply_by_mask_rhs(s: f32[M, N], a: f32[M, N]) -> f32[M, N]:
    return where(a != 0.0, s, 0.0)

# Causal mask: the same mask written from either side (key index <= query index).
def causal_mask_either_side_lhs(s: f32[M, N]) -> f32[M, N]:
    return where(iota(N, axis=1) <= iota(M, axis=0), s, -inf)
def causal_mask_either_side_rhs(s: f32[M, N]) -> f32[M, N]:
    return where(iota(M, axis=0) >= iota(N, axis=1), s, -inf)

# Causal attention: the softmax scale moves across the mask (a finite fill, as NKI kernels use).
def scale_past_causal_mask_lhs(s: f32[M, N], c: f32) -> f32[M, N]:
    return where(iota(N, axis=1) <= iota(M, axis=0), s, -30000.0) * c
def scale_past_causal_mask_rhs(s: f32[M, N], c: f32) -> f32[M, N]:
    return where(iota(N, axis=1) <= iota(M, axis=0), s * c, -30000.0 * c)

# Causal attention: a masked softmax's division becomes a multiply by the reciprocal.
def masked_softmax_reciprocal_lhs(s: f32[M, N]) -> f32[M, N]:
    m = where(iota(N, axis=1) <= iota(M, axis=0), s, -inf)
    e = exp(m - max(m, axis=1, keepdims=True))
    return e / sum(e, axis=1, keepdims=True)
def masked_softmax_reciprocal_rhs(s: f32[M, N]) -> f32[M, N]:
    m = where(iota(N, axis=1) <= iota(M, axis=0), s, -inf)
    e = exp(m - max(m, axis=1, keepdims=True))
    return e * (1.0 / sum(e, axis=1, keepdims=True))

# Casts: a cast of f32 values to f32 changes nothing.
def astype_same_dtype_lhs(x: f32[M, N]) -> f32[M, N]:
    return exp(x).astype(f32)
def astype_same_dtype_rhs(x: f32[M, N]) -> f32[M, N]:
    return exp(x)
