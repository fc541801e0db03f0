// `tilesweep lookup`: the library entry for a (kernel, target, shape, mesh).
//
// Rule: an entry with the same kernel, target, mesh and exactly these dim sizes is an exact
// match. Otherwise the nearest entry of the same kernel, target and mesh with the same dim
// names: the smallest distance sum over dims of |log2(entry size / asked size)|; ties go to the
// larger shape (larger product of dim sizes), then to the first entry in library order.
#pragma once

#include <string>

#include "tilesweep/semantics/dim.h"
#include "tilesweep/store/library.h"

namespace ts::report {

struct LookupAnswer {
  const store::LibraryEntry* entry = nullptr;
  bool exact = false;
  double distance = 0;  // sum of |log2(dim ratio)|; 0 when exact
  std::string rule;     // how it was chosen, in words
};

// Throws UserError (naming `library_path`) for a kernel or target without entries (with a
// did-you-mean), or when no entry of the kernel has the asked dim names.
LookupAnswer lookup(const store::Library& library, const std::string& library_path,
                    const std::string& kernel, const std::string& target, const sem::DimEnv& dims,
                    const std::string& mesh = "1");

// "M=4096,N=2048" as written in records -> dims. Throws UserError when malformed.
sem::DimEnv parse_record_shape(const std::string& shape);

}  // namespace ts::report
