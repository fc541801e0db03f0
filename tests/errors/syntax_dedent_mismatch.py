# expect: :4:3: error: unindent does not match any outer indentation level
def f(x: f32[N]):
    y = x
  return y
