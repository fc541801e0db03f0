# expect: :4:17: error: '.astype(...)' needs a tensor before the dot, not a number
def f(x: f32[N]):
    n = 2
    return x * n.astype(bf16)
