# expect: :2:43: error: 'f' returns f32 values but its annotation declares bf16: parameter 'w' is f32 and meets bf16 values of parameter 'x' in 'matmul' at line 3, which promotes them to f32; cast it with w.astype(bf16), or declare the result f32
def f(x: bf16[M, N], w: f32[N, K]) -> bf16[M, K]:
    h = x @ w
    return relu(h)
