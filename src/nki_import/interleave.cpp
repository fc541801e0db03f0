// The compiler's scheduling of a short parallel loop: its iterations' instructions interleaved.
// See README.md ("Where the compiler chooses"): an innermost affine_range loop of at most
// kInterleaveTrips trips, inside another loop, whose body is straight-line code (assignments and
// calls, no accumulation) is unrolled, and each statement runs for every iteration before the
// next statement runs: the program holds the iterations' instructions alternately, so an engine's
// in-order queue finds the other iteration's work while one iteration waits on another engine.
#include "translator.h"

namespace ts::nki {

bool Translator::interleavable(const Stmt& s, const Value& r) const {
  if (r.s != "affine_range" || r.trips < 2 || r.trips > kInterleaveTrips || block_ == 0)
    return false;
  if (s.body.size() < 2) return false;
  for (const Stmt& b : s.body)
    if (b.kind != StmtKind::Assign && b.kind != StmtKind::Expr) return false;
  return true;
}

// Each iteration keeps its own bindings of the names the body assigns (its own frame); every
// tile the body allocates is a buffer of its own per iteration. After the loop the names hold the
// last iteration's values, as in Python.
void Translator::interleave(const Stmt& s, const Value& r) {
  std::vector<std::map<std::string, Value>> frames(static_cast<std::size_t>(r.trips),
                                                   scopes_.back());
  for (const Stmt& b : s.body) {
    for (std::int64_t k = 0; k < r.trips && !returned_; ++k) {
      scopes_.back() = std::move(frames[static_cast<std::size_t>(k)]);
      bind(s.targets[0], Value::integer(r.a + Affine{k * r.step, {}}));
      exec(b);
      frames[static_cast<std::size_t>(k)] = std::move(scopes_.back());
    }
  }
  scopes_.back() = std::move(frames.back());
}

}  // namespace ts::nki
