# expect: :4:7: error: unexpected indent
def f(x: f32[N]):
    y = x
      return y
