# Outputs that are views no in-place store writes (issue 22): a slice of a matmul result that an
# element-wise op also reads, and a fused projection's slice viewed as heads. Both are copied
# after the loop nests, tile by tile through SBUF (output_copy.cpp); the emitted NKI on NumPy's
# (nki.numpy.copied_outputs).
def copied_outputs(x: f32[T, C], w: f32[C, N]):
    y = x @ w
    return y[:, :C], exp(y), reshape(y[:, C:], (T, 2, C))
