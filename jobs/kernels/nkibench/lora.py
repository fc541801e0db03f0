def lora(x: f32[M, K], w: f32[K, N], a: f32[K, R], b: f32[R, N]) -> f32[M, N]:
    return x @ w + (x @ a) @ b
