def swiglu(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:
    return silu(a) * b
