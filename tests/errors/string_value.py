# expect: :3:16: error: strings are not values in the kernel language
def f(x: f32[N]):
    return x * "two"
