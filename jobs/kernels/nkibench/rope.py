# L stands for B * H * N (all positions of all heads); D (128 in NKIBench, even) is symbolic.
def rope(x: f32[D, L], cos: f32[D // 2, L], sin: f32[D // 2, L]) -> f32[D, L]:
    """Rotary embedding over the two halves of D."""
    x0 = x[: D // 2, :]
    x1 = x[D // 2 :, :]
    return concat((x0 * cos - x1 * sin, x0 * sin + x1 * cos), axis=0)
