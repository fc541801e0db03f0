# A Llama-style decoder layer (Llama-3-8B: hidden C = 4096, F = 14336, 32 query and 8 key/value
# heads of 128), written as the pieces a layer runs.


def swiglu_mlp(x: bf16[T, C], w_gate_up: bf16[C, N], w_down: bf16[F, C]) -> bf16[T, C]:
    """The SwiGLU MLP with the gate and up projections fused in one weight [C, 2 * F] (gate
    columns first), as checkpoints store them: the halves are slices, so the kernel requires
    N == 2 * F (`check` states it; binding the dims checks it)."""
    h = x @ w_gate_up
    return (silu(h[:, :F]) * h[:, F:]) @ w_down
