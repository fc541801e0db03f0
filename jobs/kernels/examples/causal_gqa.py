def causal_gqa(q: f32[8, S, D], k: f32[2, S, D], v: f32[2, S, D]) -> f32[8, S, D]:
    """Causal grouped-query attention: 8 query heads share 2 key/value heads (query head h uses
    h // 4), and query position i attends to key positions j <= i. The mask is built from
    indices (iota), not read from HBM."""
    kr = repeat(k, 4, axis=0)
    vr = repeat(v, 4, axis=0)
    s = matmul(q, transpose(kr, axes=(0, 2, 1))) / sqrt(D)
    masked = where(iota(S, axis=1) <= iota(S, axis=0), s, -inf)
    e = exp(masked - max(masked, axis=2, keepdims=True))
    p = e / sum(e, axis=2, keepdims=True)
    return matmul(p, vr)


def causal_gqa_bf16(q: bf16[8, S, D], k: bf16[2, S, D], v: bf16[2, S, D]) -> bf16[8, S, D]:
    """The same attention on bf16 tensors with the softmax in f32: scores cast up with
    astype(f32), probabilities cast back to bf16 for the second matmul."""
    kr = repeat(k, 4, axis=0)
    vr = repeat(v, 4, axis=0)
    s = (matmul(q, transpose(kr, axes=(0, 2, 1))) / sqrt(D)).astype(f32)
    masked = where(iota(S, axis=1) <= iota(S, axis=0), s, -inf)
    e = exp(masked - max(masked, axis=2, keepdims=True))
    p = (e / sum(e, axis=2, keepdims=True)).astype(bf16)
    return matmul(p, vr)
