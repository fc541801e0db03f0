# A transformer MLP block with GELU (tanh approximation) and biases.
def gelu_mlp(x: f32[T, D], w_in: f32[D, 4 * D], b_in: f32[4 * D], w_out: f32[4 * D, D], b_out: f32[D]) -> f32[T, D]:
    h = gelu(x @ w_in + b_in)
    return h @ w_out + b_out
