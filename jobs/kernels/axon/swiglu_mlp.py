def swish_beta(t, beta):
    return t * sigmoid(beta * t)

def swiglu_mlp(x: f32[M, K], w1: f32[K, N], w3: f32[K, N], w2: f32[N, K], beta: f32) -> f32[M, K]:
    return matmul(swish_beta(x @ w1, beta) * (x @ w3), w2)
