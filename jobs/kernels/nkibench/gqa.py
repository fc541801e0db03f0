# B (batch, 1 in NKIBench) and N (sequence) are symbolic; QH = 16 query heads, KH = 8 key/value
# heads and D = 128 are literals. Each key/value head serves QH / KH = 2 consecutive query heads.
def gqa(q: f32[B, N, 16, 128], k: f32[B, N, 8, 128], v: f32[B, N, 8, 128]) -> f32[B, N, 16, 128]:
    """softmax(q k^T / sqrt(128)) v per query head, no mask."""
    qh = transpose(q, axes=(0, 2, 1, 3))
    kh = repeat(transpose(k, axes=(0, 2, 1, 3)), 2, axis=1)
    vh = repeat(transpose(v, axes=(0, 2, 1, 3)), 2, axis=1)
    s = matmul(qh, transpose(kh, axes=(0, 1, 3, 2))) * 0.08838834764831845
    e = exp(s - max(s, axis=3, keepdims=True))
    p = e / sum(e, axis=3, keepdims=True)
    return transpose(matmul(p, vh), axes=(0, 2, 1, 3))
