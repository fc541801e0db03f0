def swiglu(x: f32[M, K], w_gate: f32[K, N], w_up: f32[K, N], w_down: f32[N, K]) -> f32[M, K]:
    return (silu(x @ w_gate) * (x @ w_up)) @ w_down
