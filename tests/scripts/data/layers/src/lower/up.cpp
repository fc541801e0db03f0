#include "tilesweep/base/error.h"
#include "tilesweep/lower/program.h"
#include "tilesweep/sweep/plan.h"
