# expect: :3:12: error: 'sum' has no argument 'axes' (arguments: x, axis, keepdims); did you mean 'axis'?
def f(x: f32[M, N]):
    return sum(x, axes=1)
