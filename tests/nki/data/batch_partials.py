def batch_partials(x: f32[S, M, N], b: f32[1, 1, N]) -> f32[M, N]:
    """A sum over S of x * b (mamba's sum over states alike): with psum-partials each trip's
    product is written to PSUM and folded into the running sum in SBUF."""
    return sum(x * b, axis=0)
