// `<archive>.synthesis`: the ISA-synthesis records of a run's plan, kept next to the archive so
// that `--resume` (or any later run on the same archive path) rebuilds its lowerings instead of
// searching again, as `<archive>.proofs` does for proofs. Records are keyed by the tile op, the
// ISA's digest and the budgets (lower::SynthesisCache), so a record never reaches another target
// or budget. The file names the tool version that wrote it and carries a checksum of its body;
// a file of another version, or a damaged one, is ignored (the prepare then searches again).
#pragma once

#include <string>

namespace ts::sweep {

std::string synthesis_path(const std::string& archive);

// The records of the file at `path`, or "" when it is missing, of another tool version, or
// damaged.
std::string read_synthesis_records(const std::string& path, const std::string& tool_version);

// Writes the file durably (temporary, sync, rename). Throws UserError when it cannot.
void write_synthesis_records(const std::string& path, const std::string& tool_version,
                             const std::string& records);

}  // namespace ts::sweep
