def qkv_projection(x: f32[M, K], wq: f32[K, N], wk: f32[K, N], wv: f32[K, N]) -> (f32[M, N], f32[M, N], f32[M, N]):
    return x @ wq, x @ wk, x @ wv
