#pragma once
#include "tilesweep/ir/graph.h"
