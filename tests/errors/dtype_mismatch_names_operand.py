# expect: :2:57: error: 'f' returns f32 values but its annotation declares bf16: parameter 'g' is f32 and meets bf16 values of 'xn' (line 4) in 'mul' at line 5, which promotes them to f32; cast it with g.astype(bf16), or declare the result f32
def f(x: bf16[M, N], g: f32[N], eps: f32 = 1e-6) -> bf16[M, N]:
    ms = mean(square(x), axis=1, keepdims=True)
    xn = x * rsqrt(ms + eps)
    return xn * g
