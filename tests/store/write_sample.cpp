// Writes a small sample archive (store_write_sample PATH [CANDIDATES]) for the read_archive.py
// test: 6 /best rows, 5 proofs, 4 progress rows.
#include <cstdlib>
#include <iostream>
#include <string>

#include "sample.h"
#include "tilesweep/base/error.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: store_write_sample PATH [CANDIDATES]\n";
    return 2;
  }
  try {
    auto archive = ts::store::test::sample_archive(argc > 2 ? std::atoll(argv[2]) : 1000);
    // One long reason makes that column variable-length (see archive.h): readers meet both kinds.
    if (archive.candidates.size() > 5) archive.candidates[5].reason = std::string(3000, 'x');
    ts::store::write_archive(argv[1], archive);
  } catch (const ts::UserError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  return 0;
}
