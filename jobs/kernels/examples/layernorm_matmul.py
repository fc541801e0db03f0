# A kernel in neither suite, written as a new user would: LayerNorm with a learned scale and
# shift, followed by a projection.
def layernorm(x, gamma, beta, eps):
    mu = mean(x, axis=-1, keepdims=True)
    centered = x - mu
    var = mean(centered * centered, axis=-1, keepdims=True)
    return centered / sqrt(var + eps) * gamma + beta

def layernorm_matmul(x: f32[T, D], gamma: f32[D], beta: f32[D], w: f32[D, H], eps: f32 = 1e-5) -> f32[T, H]:
    return layernorm(x, gamma, beta, eps) @ w
