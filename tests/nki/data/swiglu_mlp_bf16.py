def swish_beta(t, beta):
    return t * sigmoid(beta * t)

def swiglu_mlp(x: bf16[M, K], w1: bf16[K, N], w3: bf16[K, N], w2: bf16[N, K], beta: bf16) -> bf16[M, K]:
    """jobs/kernels/axon/swiglu_mlp.py with bf16 tensors."""
    return matmul(swish_beta(x @ w1, beta) * (x @ w3), w2)
