# expect: :3:12: error: unknown op 'sigmod'; did you mean 'sigmoid'?
def f(x: f32[N]):
    return sigmod(x)
