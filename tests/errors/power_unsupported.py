# expect: :3:14: error: '**' on tensors supports only the exponents 2 and 0.5; use square, sqrt, exp or log
def f(x: f32[N]):
    return x ** 3
