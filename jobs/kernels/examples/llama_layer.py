# A Llama-style decoder layer (Llama-3-8B: hidden C = 4096 = H * D, F = 14336, H = 32 query and
# KV = 8 key/value heads of D = 128), in bf16 with the softmax in f32. `decoder_layer` is the
# whole layer in one kernel (checked and evaluated against NumPy); the other kernels are the
# pieces a layer runs as separate kernels, which lower one by one (`tilesweep why` says which
# have no program, and why). The helpers (untyped) are shared by both and inlined.


def rms(x, g, eps):
    return x * rsqrt(mean(square(x), axis=1, keepdims=True) + eps) * g


def rotate_halves(x1, x2, cos, sin):
    return concat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), axis=2)


def attend(q, k, v, groups, n, d):
    qh = transpose(q, axes=(1, 0, 2))
    kh = repeat(transpose(k, axes=(1, 0, 2)), groups, axis=0)
    vh = repeat(transpose(v, axes=(1, 0, 2)), groups, axis=0)
    s = (matmul(qh, transpose(kh, axes=(0, 2, 1))) / sqrt(d)).astype(f32)
    masked = where(iota(n, axis=1) <= iota(n, axis=0), s, -inf)
    e = exp(masked - max(masked, axis=2, keepdims=True))
    p = (e / sum(e, axis=2, keepdims=True)).astype(bf16)
    return matmul(p, vh)


def decoder_layer(x: bf16[T, C], g_attn: bf16[C], w_qkv: bf16[C, (H + 2 * KV) * D], cos: bf16[T, 1, E], sin: bf16[T, 1, E], w_o: bf16[C, C], g_mlp: bf16[C], w_gate_up: bf16[C, N], w_down: bf16[F, C], eps: f32 = 1e-5) -> bf16[T, C]:
    """x + attention(rmsnorm(x)), then h + mlp(rmsnorm(h)). Requires C == D * H (the heads
    viewed back as rows), D == 2 * E (rope's halves), N == 2 * F (the fused gate|up weight),
    and KV * (H // KV) == H (query heads share key/value heads evenly)."""
    qkv = rms(x, g_attn, eps) @ w_qkv
    q = reshape(qkv[:, : H * D], (T, H, D))
    k = reshape(qkv[:, H * D : (H + KV) * D], (T, KV, D))
    v = reshape(qkv[:, (H + KV) * D :], (T, KV, D))
    qr = rotate_halves(q[:, :, :E], q[:, :, E:], cos, sin)
    kr = rotate_halves(k[:, :, :E], k[:, :, E:], cos, sin)
    a = attend(qr, kr, v, H // KV, T, D)
    h = x + reshape(transpose(a, axes=(1, 0, 2)), (T, C)) @ w_o
    u = rms(h, g_mlp, eps) @ w_gate_up
    return h + (silu(u[:, :F]) * u[:, F:]) @ w_down


def rmsnorm_qkv(x: bf16[T, C], g: bf16[C], w_qkv: bf16[C, (H + 2 * KV) * D], eps: f32 = 1e-5):
    """RMSNorm, then the query, key and value projections with one fused weight (query columns,
    then key, then value), split by slices and viewed as heads [T, heads, D]."""
    qkv = rms(x, g, eps) @ w_qkv
    q = reshape(qkv[:, : H * D], (T, H, D))
    k = reshape(qkv[:, H * D : (H + KV) * D], (T, KV, D))
    v = reshape(qkv[:, (H + KV) * D :], (T, KV, D))
    return q, k, v


def qkv_projection(x: bf16[T, C], g: bf16[C], w_qkv: bf16[C, (H + 2 * KV) * D], eps: f32 = 1e-5) -> bf16[T, (H + 2 * KV) * D]:
    """rmsnorm_qkv with the fused output [T, (H + 2 * KV) * D] as it is: its row-major bytes are
    q, k and v side by side, which the next kernels read as heads (one output instead of
    rmsnorm_qkv's three head views)."""
    return rms(x, g, eps) @ w_qkv


def rope(x: bf16[T, H, D], cos: bf16[T, 1, E], sin: bf16[T, 1, E]) -> bf16[T, H, D]:
    """Rotary position embedding of each head's two halves (Llama's rotate_half), the angles of
    each position broadcast over the heads. Requires D == 2 * E."""
    return rotate_halves(x[:, :, :E], x[:, :, E:], cos, sin)


def causal_attention(q: bf16[T, H, D], k: bf16[T, KV, D], v: bf16[T, KV, D]) -> bf16[H, T, D]:
    """Causal grouped-query attention: query head h reads key/value head h // (H // KV), query
    position i attends to key positions j <= i (an iota mask); scores and softmax in f32."""
    return attend(q, k, v, H // KV, T, D)


def attention_out(a: bf16[T, C], w_o: bf16[C, C], x: bf16[T, C]) -> bf16[T, C]:
    """The output projection of the heads (viewed as rows [T, H * D]) and the residual."""
    return x + a @ w_o


def rmsnorm_swiglu(h: bf16[T, C], g: bf16[C], w_gate_up: bf16[C, N], w_down: bf16[F, C], eps: f32 = 1e-5) -> bf16[T, C]:
    """RMSNorm, the SwiGLU MLP with the gate and up projections in one weight [C, 2 * F] (gate
    columns first), and the residual. Requires N == 2 * F."""
    u = rms(h, g, eps) @ w_gate_up
    return h + (silu(u[:, :F]) * u[:, F:]) @ w_down


def swiglu_mlp(x: bf16[T, C], w_gate_up: bf16[C, N], w_down: bf16[F, C]) -> bf16[T, C]:
    """The SwiGLU MLP alone with the gate and up projections fused in one weight [C, 2 * F]
    (gate columns first), as checkpoints store them: the halves are slices, so the kernel
    requires N == 2 * F (`check` states it; binding the dims checks it)."""
    h = x @ w_gate_up
    return (silu(h[:, :F]) * h[:, F:]) @ w_down
