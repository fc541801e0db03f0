#include "tilesweep/sweep/run_identity.h"

#include <fmt/format.h>

#include <filesystem>
#include <set>

#include "tilesweep/base/hash.h"
#include "tilesweep/store/journal.h"

namespace ts::sweep {

namespace {

class Digest {
 public:
  void add(std::string_view text) { h_ = hash_combine(h_, hash_bytes(text)); }
  void add(const lower::SynthesisResult* r) {
    add(r ? fmt::format("{} lowerings", r->lowerings.size()) : std::string("none"));
    if (r)
      for (const auto& l : r->lowerings) add(l.text);
  }
  std::string text() const { return fmt::format("{:016x}", h_); }

 private:
  std::uint64_t h_ = hash_bytes("tilesweep plan digest 1");
};

void add_prepared(Digest& d, const PreparedKernel& pk) {
  for (const auto& v : pk.variants.variants) d.add(fmt::format("variant {:016x}", v.hash));
  for (const auto& kc : pk.choices) {
    for (const auto& op : kc.ops) d.add(op.label + " " + op.tile), d.add(op.synthesis);
    for (const auto& p : kc.pairs) d.add(p.label), d.add(p.synthesis);
    for (const auto& s : kc.swaps) {
      d.add(s.label), d.add(s.use);
      for (const auto& f : s.fusions) d.add(f);
    }
  }
}

// The job hash and the plan digest of a journal's header; digest "" for a journal of an older
// tilesweep (its header holds the job hash alone); both "" when the journal has no header yet.
std::pair<std::string, std::string> journal_identity(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec) || std::filesystem::file_size(path, ec) == 0) return {};
  std::string id = store::read_journal(path).job_hash;
  auto dot = id.find('.');
  if (dot == std::string::npos) return {id, ""};
  return {id.substr(0, dot), id.substr(dot + 1)};
}

}  // namespace

std::string plan_digest(const Plan& plan) {
  Digest d;
  std::set<const PreparedKernel*> seen;
  for (const auto& e : plan.spaces())
    if (seen.insert(e.prepared).second) add_prepared(d, *e.prepared);
  for (const auto& e : plan.spaces()) {
    d.add(fmt::format("space {} {} {} {} {} {} size {} sample {}", e.key, e.label, e.target_name,
                      e.shape_name, e.setting.mesh, e.setting.sharding, e.space->size(),
                      e.sample.size()));
    for (const auto& s : e.space->sections())
      d.add(fmt::format("section {} {} {} {} {}", s.variant, s.fused, s.swapped, s.first, s.size));
  }
  for (const auto& u : plan.units())
    d.add(fmt::format("unit {} {} {} {}", u.id, u.space, u.first, u.count));
  return d.text();
}

std::string run_identity(const std::string& job_hash, const std::string& plan_digest) {
  return job_hash + "." + plan_digest;
}

void check_journal_job(const std::string& path, const std::string& job_hash) {
  auto [job, digest] = journal_identity(path);
  if (job.empty()) return;
  if (job != job_hash)
    throw UserError(fmt::format(
        "error: journal '{}' belongs to a different job (job hash {}, this job's {}); use a "
        "new archive path or delete it",
        path, job, job_hash));
  if (digest.empty())
    throw UserError(fmt::format(
        "error: journal '{}' was written by an older tilesweep that did not record its plan, "
        "so its units cannot be matched to this run's; use --archive PATH to start a new "
        "archive",
        path));
}

void check_journal_plan(const std::string& path, const std::string& job_hash,
                        const std::string& plan_digest) {
  check_journal_job(path, job_hash);
  auto [job, digest] = journal_identity(path);
  if (!digest.empty() && digest != plan_digest)
    throw UserError(fmt::format(
        "error: cannot resume with journal '{}': it was recorded against another plan of this job "
        "(plan digest {}, "
        "this run's {}): the prepare found other variants or lowerings (another tilesweep version "
        "or budget); its "
        "unit ids would name other candidates; use --archive PATH to start a new archive",
        path, digest, plan_digest));
}

}  // namespace ts::sweep
