def maxpool(x: f32[M, N]) -> f32[M // 2, N // 2]:
    """2x2 max pooling with stride 2."""
    top = maximum(x[0::2, 0::2], x[0::2, 1::2])
    bottom = maximum(x[1::2, 0::2], x[1::2, 1::2])
    return maximum(top, bottom)
