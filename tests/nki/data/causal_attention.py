# Causal attention, one head (jobs/kernels/examples/causal_gqa.py's form): its online candidates
# stream key tiles with a running max, and the key tiles above the diagonal are skipped by a
# guard on the key tile loop, emitted as a Python `if` on the loop variables in the current
# dialect (nki.numpy.guard; the legacy dialect refuses a guarded loop).
def causal_attention(q: f32[S, D], k: f32[S, D], v: f32[S, D]) -> f32[S, D]:
    s = matmul(q, transpose(k, axes=(1, 0))) * 0.125
    masked = where(iota(S, axis=1) <= iota(S, axis=0), s, -inf)
    e = exp(masked - max(masked, axis=1, keepdims=True))
    return matmul(e, v) / sum(e, axis=1, keepdims=True)
