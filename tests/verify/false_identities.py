# False but plausible identities: no pair `<rule>_lhs`, `<rule>_rhs` may ever be proved
# equivalent (tests/verify/rules_test.cpp). Both sides of a pair have identical parameter
# lists and the same output shape, so each pair is well-typed and differs only in value.
# Where a wrong rewrite needs equal dims to be shape-valid, the tensors are square.
# scripts/check_identities.py checks numerically that every pair disagrees on some input.

# ---------------------------------------------------------------- matmul

# Wrong Axon swap: silu does not move past a multiply.
def silu_past_mul_lhs(x: f32[M, N], y: f32[M, N]) -> f32[M, N]:
    return silu(x * y)
def silu_past_mul_rhs(x: f32[M, N], y: f32[M, N]) -> f32[M, N]:
    return silu(x) * y

# Wrong Axon swap: a column scale of the LEFT operand (on the contracted axis) is not a column scale of the product.
def col_scale_wrong_side_lhs(a: f32[M, N], b: f32[N, N], c: f32[1, N]) -> f32[M, N]:
    return matmul(a * c, b)
def col_scale_wrong_side_rhs(a: f32[M, N], b: f32[N, N], c: f32[1, N]) -> f32[M, N]:
    return matmul(a, b) * c

# Wrong Axon swap: a row scale of the RIGHT operand is not a row scale of the product.
def row_scale_wrong_side_lhs(a: f32[N, N], b: f32[N, P], d: f32[N, 1]) -> f32[N, P]:
    return a @ (d * b)
def row_scale_wrong_side_rhs(a: f32[N, N], b: f32[N, P], d: f32[N, 1]) -> f32[N, P]:
    return d * (a @ b)

# Wrong Axon swap (Softmax+MatMul): division by a row sum of the RIGHT operand does not move past the matmul.
def div_past_matmul_wrong_side_lhs(w: f32[M, M], e: f32[M, N]) -> f32[M, N]:
    s = sum(e, axis=1, keepdims=True)
    return matmul(w, e / s)
def div_past_matmul_wrong_side_rhs(w: f32[M, M], e: f32[M, N]) -> f32[M, N]:
    s = sum(e, axis=1, keepdims=True)
    return matmul(w, e) / s

# Wrong Axon swap (RMSNorm+MatMul): a norm over the wrong axis (per column) does not move past the matmul.
def rmsnorm_wrong_axis_past_matmul_lhs(x: f32[M, K], w: f32[K, K]) -> f32[M, K]:
    rms = rsqrt(mean(square(x), axis=0, keepdims=True))
    return matmul(x * rms, w)
def rmsnorm_wrong_axis_past_matmul_rhs(x: f32[M, K], w: f32[K, K]) -> f32[M, K]:
    rms = rsqrt(mean(square(x), axis=0, keepdims=True))
    return matmul(x, w) * rms

# Linear algebra: transpose of a product without swapping the order (square, so shapes agree).
def transpose_product_no_swap_lhs(a: f32[N, N], b: f32[N, N]) -> f32[N, N]:
    return (a @ b).T
def transpose_product_no_swap_rhs(a: f32[N, N], b: f32[N, N]) -> f32[N, N]:
    return a.T @ b.T

# Linear algebra: matmul is not commutative (square).
def matmul_commute_lhs(a: f32[N, N], b: f32[N, N]) -> f32[N, N]:
    return a @ b
def matmul_commute_rhs(a: f32[N, N], b: f32[N, N]) -> f32[N, N]:
    return b @ a

# Wrong Axon slice swap: the second half of the rows of a product is not the product of the first half.
def slice_rows_wrong_half_lhs(x: f32[2 * M, K], w: f32[K, N]) -> f32[M, N]:
    return matmul(x, w)[:M, :]
def slice_rows_wrong_half_rhs(x: f32[2 * M, K], w: f32[K, N]) -> f32[M, N]:
    return matmul(x[M:, :], w)

# Wrong split-K: the cross terms of the halves of the contracted axis are not the product.
def split_k_cross_terms_lhs(a: f32[M, 2 * K], b: f32[2 * K, N]) -> f32[M, N]:
    return a @ b
def split_k_cross_terms_rhs(a: f32[M, 2 * K], b: f32[2 * K, N]) -> f32[M, N]:
    return a[:, :K] @ b[K:, :] + a[:, K:] @ b[:K, :]

# ---------------------------------------------------------------- reductions

# Reduction over the wrong axis (square).
def sum_wrong_axis_lhs(x: f32[N, N]) -> f32[N]:
    return sum(x, axis=0)
def sum_wrong_axis_rhs(x: f32[N, N]) -> f32[N]:
    return sum(x, axis=1)

# A mean does not fold like a sum: the mean of a prefix's mean and the next tile's mean is not
# the mean of the row (unequal parts), so mean is never streamed (split_reduction.h).
def mean_running_fold_lhs(x: f32[M, A + B]) -> f32[M, 1]:
    return mean(x, axis=1, keepdims=True)
def mean_running_fold_rhs(x: f32[M, A + B]) -> f32[M, 1]:
    return mean(concat((mean(x[:, :A], axis=1, keepdims=True), mean(x[:, A:], axis=1, keepdims=True)), axis=1), axis=1, keepdims=True)

# mean is not sum.
def mean_vs_sum_lhs(x: f32[M, N]) -> f32[M]:
    return mean(x, axis=1)
def mean_vs_sum_rhs(x: f32[M, N]) -> f32[M]:
    return sum(x, axis=1)

# mean divides by the reduced dim, not the kept one.
def mean_wrong_divisor_lhs(x: f32[M, N]) -> f32[M]:
    return mean(x, axis=1)
def mean_wrong_divisor_rhs(x: f32[M, N]) -> f32[M]:
    return sum(x, axis=1) / M

# The max of a sum is not the sum of the maxes.
def max_of_sum_lhs(a: f32[M, N], b: f32[M, N]) -> f32[M]:
    return max(a + b, axis=1)
def max_of_sum_rhs(a: f32[M, N], b: f32[M, N]) -> f32[M]:
    return max(a, axis=1) + max(b, axis=1)

# A scale moves out of a max only when it is non-negative.
def max_scalar_scale_lhs(x: f32[M, N], s: f32) -> f32[M]:
    return max(s * x, axis=1)
def max_scalar_scale_rhs(x: f32[M, N], s: f32) -> f32[M]:
    return s * max(x, axis=1)

# The mean of a product is not the product of the means.
def mean_of_product_lhs(a: f32[M, N], b: f32[M, N]) -> f32[M]:
    return mean(a * b, axis=1)
def mean_of_product_rhs(a: f32[M, N], b: f32[M, N]) -> f32[M]:
    return mean(a, axis=1) * mean(b, axis=1)

# The sum of squares is not the square of the sum.
def sum_of_squares_lhs(x: f32[M, N]) -> f32[M, 1]:
    return sum(square(x), axis=1, keepdims=True)
def sum_of_squares_rhs(x: f32[M, N]) -> f32[M, 1]:
    return square(sum(x, axis=1, keepdims=True))

# RMSNorm: rsqrt of a mean is not the mean of the rsqrt.
def rsqrt_mean_swap_lhs(x: f32[M, N]) -> f32[M, 1]:
    return rsqrt(mean(square(x), axis=1, keepdims=True))
def rsqrt_mean_swap_rhs(x: f32[M, N]) -> f32[M, 1]:
    return mean(rsqrt(square(x)), axis=1, keepdims=True)

# cumsum over the wrong axis (square).
def cumsum_wrong_axis_lhs(x: f32[N, N]) -> f32[N, N]:
    return cumsum(x, axis=0)
def cumsum_wrong_axis_rhs(x: f32[N, N]) -> f32[N, N]:
    return cumsum(x, axis=1)

# A cumsum is not the broadcast total.
def cumsum_vs_total_lhs(x: f32[M, N]) -> f32[M, N]:
    return cumsum(x, axis=1)
def cumsum_vs_total_rhs(x: f32[M, N]) -> f32[M, N]:
    return broadcast_to(sum(x, axis=1, keepdims=True), (M, N))

# A scan with a constant multiplier other than one is not a cumsum.
def scan_of_twos_vs_cumsum_lhs(x: f32[M, N]) -> f32[M, N]:
    return scan(broadcast_to(2.0, shape=(M, N)), x, axis=1)
def scan_of_twos_vs_cumsum_rhs(x: f32[M, N]) -> f32[M, N]:
    return cumsum(x, axis=1)

# A scan's operands do not commute.
def scan_swapped_operands_lhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return scan(a, b, axis=1)
def scan_swapped_operands_rhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return scan(b, a, axis=1)

# Softmax over the wrong axis (square).
def softmax_wrong_axis_lhs(x: f32[N, N]) -> f32[N, N]:
    e = exp(x - max(x, axis=1, keepdims=True))
    return e / sum(e, axis=1, keepdims=True)
def softmax_wrong_axis_rhs(x: f32[N, N]) -> f32[N, N]:
    e = exp(x - max(x, axis=0, keepdims=True))
    return e / sum(e, axis=0, keepdims=True)

# ---------------------------------------------------------------- element-wise

# exp does not turn a sum into a sum.
def exp_of_sum_lhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return exp(a + b)
def exp_of_sum_rhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return exp(a) + exp(b)

# sqrt is not additive.
def sqrt_of_sum_lhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return sqrt(a + b)
def sqrt_of_sum_rhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return sqrt(a) + sqrt(b)

# relu is not additive.
def relu_of_sum_lhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return relu(a + b)
def relu_of_sum_rhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return relu(a) + relu(b)

# abs is not additive.
def abs_of_sum_lhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return abs(a + b)
def abs_of_sum_rhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return abs(a) + abs(b)

# The square of a sum is missing its cross term.
def square_of_sum_lhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return square(a + b)
def square_of_sum_rhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return square(a) + square(b)

# reciprocal is not additive.
def reciprocal_of_sum_lhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return reciprocal(a + b)
def reciprocal_of_sum_rhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return reciprocal(a) + reciprocal(b)

# A scale moves out of a maximum only when it is non-negative.
def maximum_times_scale_lhs(a: f32[M, N], b: f32[M, N], c: f32[M, N]) -> f32[M, N]:
    return maximum(a, b) * c
def maximum_times_scale_rhs(a: f32[M, N], b: f32[M, N], c: f32[M, N]) -> f32[M, N]:
    return maximum(a * c, b * c)

# Negation turns maximum into minimum, not maximum.
def maximum_neg_duality_wrong_lhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return maximum(a, b)
def maximum_neg_duality_wrong_rhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return -maximum(-a, -b)

# Division is not associative.
def div_assoc_lhs(a: f32[M, N], b: f32[M, N], c: f32[M, N]) -> f32[M, N]:
    return (a / b) / c
def div_assoc_rhs(a: f32[M, N], b: f32[M, N], c: f32[M, N]) -> f32[M, N]:
    return a / (b / c)

# Subtraction is not commutative.
def sub_comm_lhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return a - b
def sub_comm_rhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return b - a

# Wrong factoring: x - x*y is not x*(y - 1).
def factor_sign_wrong_lhs(x: f32[M, N], y: f32[M, N]) -> f32[M, N]:
    return x - x * y
def factor_sign_wrong_rhs(x: f32[M, N], y: f32[M, N]) -> f32[M, N]:
    return x * (y - 1.0)

# sigmoid is not homogeneous.
def sigmoid_past_scale_lhs(x: f32[M, N]) -> f32[M, N]:
    return sigmoid(2.0 * x)
def sigmoid_past_scale_rhs(x: f32[M, N]) -> f32[M, N]:
    return 2.0 * sigmoid(x)

# ---------------------------------------------------------------- layout

# Off-by-one slices of the same length.
def off_by_one_slice_lhs(x: f32[M, N + 1]) -> f32[M, N]:
    return x[:, 1:]
def off_by_one_slice_rhs(x: f32[M, N + 1]) -> f32[M, N]:
    return x[:, :N]

# concat is not commutative.
def concat_swapped_lhs(a: f32[M, N], b: f32[M, N]) -> f32[M, 2 * N]:
    return concat((a, b), axis=1)
def concat_swapped_rhs(a: f32[M, N], b: f32[M, N]) -> f32[M, 2 * N]:
    return concat((b, a), axis=1)

# repeat (each element repeated) is not tiling (the whole tensor repeated).
def repeat_vs_tile_lhs(x: f32[M, N]) -> f32[M, 2 * N]:
    return repeat(x, 2, axis=1)
def repeat_vs_tile_rhs(x: f32[M, N]) -> f32[M, 2 * N]:
    return concat((x, x), axis=1)

# Two different cyclic 3-D transposes (cube, so shapes agree).
def transpose_3d_wrong_cycle_lhs(x: f32[N, N, N]) -> f32[N, N, N]:
    return transpose(x, axes=(1, 2, 0))
def transpose_3d_wrong_cycle_rhs(x: f32[N, N, N]) -> f32[N, N, N]:
    return transpose(x, axes=(2, 0, 1))

# A reshape to the swapped dims is not a transpose.
def reshape_vs_transpose_lhs(x: f32[M, N]) -> f32[N, M]:
    return reshape(x, (N, M))
def reshape_vs_transpose_rhs(x: f32[M, N]) -> f32[N, M]:
    return x.T

# ---------------------------------------------------------------- exp, log and split reductions

# exp turns sums into products, not products into products.
def exp_of_product_lhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return exp(a * b)
def exp_of_product_rhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return exp(a) * exp(b)

# exp of a sum is not the sum of the exps.
def exp_of_sum_as_sum_lhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return exp(a + b)
def exp_of_sum_as_sum_rhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return exp(a) + exp(b)

# exp(2 x) is not 2 exp(x).
def exp_double_as_scale_lhs(x: f32[M, N]) -> f32[M, N]:
    return exp(2.0 * x)
def exp_double_as_scale_rhs(x: f32[M, N]) -> f32[M, N]:
    return 2.0 * exp(x)

# log(a b) = log a + log b only for positive a, b: with both negative the right side is undefined.
def log_of_product_any_sign_lhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return log(a * b)
def log_of_product_any_sign_rhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return log(a) + log(b)

# log of a sum of exps is not the sum of the exponents.
def log_of_sum_of_exps_lhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return log(exp(a) + exp(b))
def log_of_sum_of_exps_rhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return a + b

# A max over a split range combines with maximum, not with +.
def max_split_with_plus_lhs(x: f32[M, 2 * N]) -> f32[M]:
    return max(x, axis=1)
def max_split_with_plus_rhs(x: f32[M, 2 * N]) -> f32[M]:
    return max(x[:, :N], axis=1) + max(x[:, N:], axis=1)

# A sum over a split range combines with +, not with maximum.
def sum_split_with_max_lhs(x: f32[M, 2 * N]) -> f32[M]:
    return sum(x, axis=1)
def sum_split_with_max_rhs(x: f32[M, 2 * N]) -> f32[M]:
    return maximum(sum(x[:, :N], axis=1), sum(x[:, N:], axis=1))

# The second part of a split range starts at N: counting the first part twice is wrong.
def sum_split_same_half_twice_lhs(x: f32[M, 2 * N]) -> f32[M]:
    return sum(x, axis=1)
def sum_split_same_half_twice_rhs(x: f32[M, 2 * N]) -> f32[M]:
    return sum(x[:, :N], axis=1) + sum(x[:, :N], axis=1)

# A sum over a concat counts each part once.
def sum_past_concat_wrong_part_lhs(a: f32[M, N], b: f32[M, N]) -> f32[M, 1]:
    return sum(concat((a, b), axis=1), axis=1, keepdims=True)
def sum_past_concat_wrong_part_rhs(a: f32[M, N], b: f32[M, N]) -> f32[M, 1]:
    return sum(a, axis=1, keepdims=True) + sum(a, axis=1, keepdims=True)

# The online softmax step without rescaling the partial sums to the running max.
def online_sum_without_rescale_lhs(x: f32[M, 2 * T]) -> f32[M, 1]:
    m = max(x, axis=1, keepdims=True)
    return sum(exp(x - m), axis=1, keepdims=True)
def online_sum_without_rescale_rhs(x: f32[M, 2 * T]) -> f32[M, 1]:
    m1 = max(x[:, :T], axis=1, keepdims=True)
    m2 = max(x[:, T:], axis=1, keepdims=True)
    return sum(exp(x[:, :T] - m1), axis=1, keepdims=True) + sum(exp(x[:, T:] - m2), axis=1, keepdims=True)

# Online softmax normalised by the last tile's sum only.
def online_softmax_last_tile_only_lhs(x: f32[M, 2 * T]) -> f32[M, 2 * T]:
    e = exp(x - max(x, axis=1, keepdims=True))
    return e / sum(e, axis=1, keepdims=True)
def online_softmax_last_tile_only_rhs(x: f32[M, 2 * T]) -> f32[M, 2 * T]:
    m1 = max(x[:, :T], axis=1, keepdims=True)
    m2 = maximum(m1, max(x[:, T:], axis=1, keepdims=True))
    s2 = sum(exp(x[:, T:] - m2), axis=1, keepdims=True)
    return exp(x - m2) / s2

# Softmax is not invariant under scaling.
def softmax_scale_invariance_lhs(x: f32[M, N]) -> f32[M, N]:
    e = exp(2.0 * x)
    return e / sum(e, axis=1, keepdims=True)
def softmax_scale_invariance_rhs(x: f32[M, N]) -> f32[M, N]:
    e = exp(x)
    return e / sum(e, axis=1, keepdims=True)

# where(a < b, a, b) is the minimum, not the maximum.
def where_less_not_maximum_lhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return where(a < b, a, b)
def where_less_not_maximum_rhs(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return maximum(a, b)

# A strict comparison is not a non-strict one (they differ where the operands are equal).
def less_not_less_equal_lhs(a: f32[M, N]) -> f32[M, N]:
    return a < a * 1.0
def less_not_less_equal_rhs(a: f32[M, N]) -> f32[M, N]:
    return a <= a * 1.0

# A causal mask that drops the diagonal is another mask (off by one).
def causal_mask_off_by_one_lhs(s: f32[M, N]) -> f32[M, N]:
    return where(iota(N, axis=1) <= iota(M, axis=0), s, 0.0)
def causal_mask_off_by_one_rhs(s: f32[M, N]) -> f32[M, N]:
    return where(iota(N, axis=1) < iota(M, axis=0), s, 0.0)

# The mask selects by position along the key axis, not the query axis (transposed mask).
def causal_mask_transposed_lhs(s: f32[M, N]) -> f32[M, N]:
    return where(iota(N, axis=1) <= iota(M, axis=0), s, 0.0)
def causal_mask_transposed_rhs(s: f32[M, N]) -> f32[M, N]:
    return where(iota(M, axis=0) <= iota(N, axis=1), s, 0.0)
