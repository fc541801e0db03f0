# expect: :2:46: error: 'f' returns f32 values but its annotation declares bf16: parameter 'eps' is f32 and meets bf16 values of 'ms' (line 3) in 'add' at line 4, which promotes them to f32; cast it with eps.astype(bf16), or declare the result f32
def f(x: bf16[M, N], eps: f32 = 1e-6) -> bf16[M, N]:
    ms = mean(square(x), axis=1, keepdims=True)
    return x * rsqrt(ms + eps)
