# expect: :2:1: error: only function definitions (`def name(...):`) are allowed at the top level
y = 3
