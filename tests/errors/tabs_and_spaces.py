# expect: :3:6: error: indentation mixes tabs and spaces; use spaces only
def f(x: f32[N]):
	    return x
