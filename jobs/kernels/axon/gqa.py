def gqa(q: f32[8, M, 128], k: f32[2, N, 128], v: f32[2, N, 128]) -> f32[8, M, 128]:
    """Grouped-query attention: 8 query heads share 2 key/value heads (query head h uses h // 4)."""
    kr = repeat(k, 4, axis=0)
    vr = repeat(v, 4, axis=0)
    s = matmul(q, transpose(kr, axes=(0, 2, 1))) / sqrt(128.0)
    e = exp(s - max(s, axis=2, keepdims=True))
    p = e / sum(e, axis=2, keepdims=True)
    return matmul(p, vr)
