# A transformer MLP block as a new user would write it: up-projection to 4 * D with a bias,
# GELU (tanh approximation), down-projection with a bias.
def gelu_mlp(x: f32[T, D], w_in: f32[D, 4 * D], b_in: f32[4 * D], w_out: f32[4 * D, D], b_out: f32[D]) -> f32[T, D]:
    h = gelu(matmul(x, w_in) + b_in)
    return matmul(h, w_out) + b_out
