def gqa(q: f32[B, N, 16, 128], k: f32[B, N, 8, 128], v: f32[B, N, 8, 128]) -> f32[B, N, 16, 128]:
    """GQA with QH=16 query heads and KH=8 key/value heads (each repeated twice), D=128, no mask.
    B and N are symbolic; the head counts and D are literals as in NKIBench."""
    qh = transpose(q, axes=(0, 2, 1, 3))
    kh = repeat(transpose(k, axes=(0, 2, 1, 3)), 2, axis=1)
    vh = repeat(transpose(v, axes=(0, 2, 1, 3)), 2, axis=1)
    s = matmul(qh, transpose(kh, axes=(0, 1, 3, 2))) / sqrt(128.0)
    e = exp(s - max(s, axis=3, keepdims=True))
    p = e / sum(e, axis=3, keepdims=True)
    return transpose(matmul(p, vh), axes=(0, 2, 1, 3))
