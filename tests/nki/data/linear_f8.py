def linear_f8(x: f8[M, K], w: f8[K, N], scale: f32 = 0.25) -> bf16[M, N]:
    """An fp8 linear layer: float8_e4m3 operands in SBUF, the contraction accumulated in fp32
    PSUM; the product is an f8 value (the language promotes f8 @ f8 to f8), cast to bf16 and
    dequantized by the Python number `scale`."""
    return astype(x @ w, bf16) * scale
