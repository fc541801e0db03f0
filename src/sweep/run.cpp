#include "tilesweep/sweep/run.h"

#include <fmt/format.h>
#include <tbb/global_control.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>
#include <thread>

#include "tilesweep/base/durable_file.h"
#include "tilesweep/store/archive.h"
#include "tilesweep/store/journal.h"
#include "tilesweep/sweep/check.h"
#include "tilesweep/sweep/collective.h"
#include "tilesweep/sweep/dry_run.h"
#include "tilesweep/sweep/interrupt.h"
#include "tilesweep/sweep/mpi_comm.h"
#include "tilesweep/sweep/plan.h"
#include "tilesweep/sweep/progress.h"
#include "tilesweep/sweep/rank_pids.h"
#include "tilesweep/sweep/results.h"
#include "tilesweep/sweep/run_identity.h"
#include "tilesweep/sweep/scheduler.h"
#include "tilesweep/sweep/synthesis_file.h"
#include "tilesweep/target/target.h"

namespace ts::sweep {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string now_iso() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Setup {
  Job job;
  std::string archive;
};

// Rank 0: may this run write `archive`? Throws UserError when not. An empty journal is the
// trace of a run that could not write its header (a full disk): it holds nothing to resume.
void check_archive(const RunOptions& o, const std::string& archive, const Job& job) {
  const std::string journal = store::journal_path(archive);
  std::error_code ec;
  bool has_archive = fs::exists(archive),
       has_journal = fs::exists(journal) && fs::file_size(journal, ec) > 0;
  if (!o.resume && has_archive)
    throw UserError(fmt::format(
        "error: archive '{}' already exists; use --resume to continue or redo its run, or "
        "--archive PATH to write a new one",
        archive));
  if (!o.resume && has_journal)
    throw UserError(fmt::format(
        "error: '{}' holds the journal of an unfinished run; use --resume to continue it, "
        "or delete it to start over",
        journal));
  if (o.resume && has_journal)
    check_journal_job(journal, job.hash());  // refuses another job's journal
  if (o.resume && has_archive && !has_journal)
    throw UserError(
        fmt::format("error: cannot resume '{}': its journal '{}' is missing; use --archive PATH to "
                    "write a new archive",
                    archive, journal));
}

// Rank 0: "<job path>\n<archive>\n<job text>", after checking the job and the archive path.
std::string setup_message(const RunOptions& o) {
  // The job's own [output] is probed only when the run writes there: with --archive the path
  // actually used is probed below, and a dry run writes nothing.
  bool writes_output = o.archive.empty() && !o.dry_run;
  Job job = load_job(o.job_path, writes_output ? OutputCheck::Probe : OutputCheck::Skip);
  std::string archive = o.archive.empty() ? job.archive : o.archive;
  if (o.dry_run) return fmt::format("{}\n{}\n{}", o.job_path, archive, job.text);
  fs::path parent = fs::path(archive).parent_path();
  std::error_code ec;
  if (!parent.empty()) fs::create_directories(parent, ec);
  if (ec)
    throw UserError(fmt::format("error: --archive: cannot create folder '{}': {}", parent.string(),
                                ec.message()));
  if (!o.archive.empty()) check_writable(archive, "--archive");  // the job checked its [output]
  check_archive(o, archive, job);
  return fmt::format("{}\n{}\n{}", o.job_path, archive, job.text);
}

// Every rank: whether a dry run takes the quick form (dry_run.h): not with --exact, nor when an
// earlier run's synthesis records are at hand (the exact plan is then quick too). Rank 0 decides.
bool quick_dry_run(const Comm& comm, const RunOptions& o, const Setup& s) {
  std::string quick =
      comm.rank() == 0 && !o.exact && !fs::exists(synthesis_path(s.archive)) ? "1" : "0";
  return comm.broadcast(quick) == "1";
}

// Every rank: the job as rank 0 read it. Rank 0 reads and checks it, every rank parses its
// text; a failure anywhere stops every rank (agree).
Setup setup_job(const Comm& comm, const RunOptions& o) {
  std::string msg;
  agree(comm, [&] {
    if (comm.rank() == 0) msg = setup_message(o);
  });
  msg = comm.broadcast(msg);
  auto a = msg.find('\n'), b = msg.find('\n', a + 1);
  std::string path = msg.substr(0, a), archive = msg.substr(a + 1, b - a - 1);
  std::optional<Setup> s;
  agree(comm, [&] {
    s = Setup{parse_job(msg.substr(b + 1), path, OutputCheck::Skip), archive};
  });  // rank 0 probed
  return std::move(*s);
}

// The ranks share the proofs: each proves its share of the (kernel, target) pairs, once per job,
// and they exchange verdicts (ProofShare); rank 0's proof cache file is read by rank 0 and
// handed to all first. A failure inside cannot be agreed on (the ranks meet in the exchanges):
// it aborts the job. Every rank's plan must then have rank 0's digest.
std::unique_ptr<Plan> build_plan(const Comm& comm, const Setup& s, const RunOptions& o,
                                 std::ostream& err) {
  const std::string cache_file = s.archive + ".proofs";
  std::string cached, records;
  if (comm.rank() == 0) {
    cached = read_text(cache_file);
    records = read_synthesis_records(synthesis_path(s.archive), o.tool_version);
  }
  cached = comm.broadcast(cached);
  PlanInputs in;
  in.synthesis_records = comm.broadcast(records);
  in.share = {comm.rank(), comm.size(),
              [&](const std::string& mine) { return comm.allgather(mine); }};
  auto t0 = Clock::now();
  if (comm.rank() == 0 && !o.quiet)  // rank 0 says what the prepare is doing
    in.stage = [&](const std::string& what) {
      err << fmt::format("prepare {:6.1f} s: {}", seconds_since(t0), what) << std::endl;
    };
  if (comm.rank() == 0)
    in.verdict_file = cache_file;  // read here again, and saved at the end
  else
    in.shared_verdicts = cached;
  std::unique_ptr<Plan> plan;
  try {
    plan = std::make_unique<Plan>(s.job, in);
  } catch (const std::exception& e) {
    if (comm.size() == 1) throw;
    abort_job(comm, err, e.what());
  }
  return plan;
}

// Every rank: the plan's digest, checked to be rank 0's.
std::string agree_on_plan(const Comm& comm, const Plan& plan) {
  std::string digest = plan_digest(plan), zero = comm.broadcast(digest);
  agree(comm, [&] {
    if (digest != zero)
      throw UserError(fmt::format(
          "its plan (digest {}) differs from rank 0's ({}): a proof or synthesis came out "
          "differently on this rank; report it with the job",
          digest, zero));
  });
  return digest;
}

struct OpenJournal {
  store::Journal journal;
  store::JournalContents recovered;
};

// Rank 0, once the plan is built: the journal, locked for this process, and what it recovered.
// Another run on the same archive is refused here: its lock, or (once this run holds the lock)
// the archive or units it wrote since the setup looked.
OpenJournal open_journal(const RunOptions& o, const Setup& s, const std::string& digest) {
  const std::string path = store::journal_path(s.archive);
  if (o.resume) check_journal_plan(path, s.job.hash(), digest);
  store::Journal journal = store::Journal::open(path, run_identity(s.job.hash(), digest));
  store::JournalContents recovered = journal.take_recovered();
  if (!o.resume && (fs::exists(s.archive) || !recovered.units.empty()))
    throw UserError(fmt::format(
        "error: another run wrote '{}' while this one prepared; use --resume to continue "
        "it, or --archive PATH to write a new archive",
        recovered.units.empty() ? s.archive : path));
  return {std::move(journal), std::move(recovered)};
}

store::Meta make_meta(const Comm& comm, const Plan& plan, const RunOptions& o, int threads) {
  const Job& job = plan.job();
  store::Meta m;
  m.tool_version = o.tool_version, m.git_commit = o.git_commit;
  m.job_name = job.name, m.job_toml = job.text, m.job_hash = job.hash();
  for (const auto& t : job.targets) {
    const target::Target& d = target::builtin_target(t);
    m.targets[t] = d.target_text + "\n# ---- isa ----\n" + d.isa_text;
  }
  for (const auto& k : job.kernels) m.kernel_sources[k.file] = k.source;
  m.ranks = comm.size(), m.threads = threads;
  return m;
}

// Names the /best rows whose scored candidates were all infeasible (on-chip capacity, or the
// simulator's work budget: sim::SimOptions::max_simulated), so no key is left empty silently.
void warn_infeasible(const std::vector<store::BestRecord>& best, std::ostream& err) {
  std::vector<std::string> keys;
  for (const auto& b : best)
    if (b.candidates > 0 && b.infeasible == b.candidates)
      keys.push_back(fmt::format("{} {} {} mesh {}", b.kernel, b.target, b.shape, b.mesh));
  if (keys.empty()) return;
  err << fmt::format(
      "warning: {} (kernel, target, shape, mesh) have no feasible candidate (each over the on-chip "
      "capacity or the simulator's work budget; `tilesweep score` says which): {}\n",
      keys.size(), fmt::join(keys, "; "));
}

struct Rank0Run {
  const Comm& comm;
  const Plan& plan;
  const Setup& setup;
  const RunOptions& o;
  int threads;
  std::string start_time;

  int operator()(OpenJournal& opened, std::ostream& out, std::ostream& err) const;
};

int Rank0Run::operator()(OpenJournal& opened, std::ostream& out, std::ostream& err) const {
  auto t0 = Clock::now();
  store::Journal& journal = opened.journal;
  if (std::string note = store::recovery_note(journal.path(), opened.recovered); !note.empty())
    err << note << std::endl;
  std::vector<store::UnitResult> units = std::move(opened.recovered.units);
  std::set<std::int64_t> done;
  for (const auto& u : units) done.insert(u.progress.unit);
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < plan.units().size(); ++i)
    if (!done.count(plan.units()[i].id)) todo.push_back(i);
  Progress progress(o.quiet ? nullptr : &err, static_cast<std::int64_t>(plan.units().size()),
                    static_cast<std::int64_t>(plan.units().size() - todo.size()));
  MasterHooks hooks{[&](store::UnitResult&& r) {
                      journal.stage(r);
                      progress.unit_done(r.progress.candidates);
                      units.push_back(std::move(r));
                    },
                    [] { return interrupt_signal() != 0; }, [&] { journal.commit(); }};
  run_master(comm, plan, todo, hooks, err);
  progress.finish();
  double search_s = seconds_since(t0);
  auto t1 = Clock::now();
  SweepRows rows = assemble(plan, units);
  CheckCounts checked =
      check_candidates(plan, rows.candidates, setup.job.search.check_samples, setup.job.seed);
  store::Meta meta = make_meta(comm, plan, o, threads);
  meta.start_time = start_time, meta.end_time = now_iso();
  meta.status = rows.progress.size() == plan.units().size() ? "complete" : "partial";
  meta.phase_seconds = {
      {"prepare", plan.prepare_seconds()}, {"search", search_s}, {"write", seconds_since(t1)}};
  store::write_archive(setup.archive, meta, rows.candidates, rows.best, plan.proofs(),
                       rows.progress);
  plan.save_verdicts();
  out << fmt::format(
      "wrote {} ({}): {} of {} units, {} best rows, {} candidate rows; prepare {:.1f} s, search "
      "{:.1f} s\n",
      setup.archive, meta.status, rows.progress.size(), plan.units().size(), rows.best.size(),
      rows.candidates.size(), plan.prepare_seconds(), search_s);
  out << fmt::format(
      "{} candidates: {} feasible, {} pruned (provably slower than the rows kept), "
      "{} infeasible\n",
      rows.candidates_scored, rows.candidates_scored - rows.pruned - rows.infeasible, rows.pruned,
      rows.infeasible);
  if (checked.passed + checked.failed > 0)
    out << fmt::format(
        "checked {} candidates against the reference interpreter: {} pass, {} mismatch\n",
        checked.passed + checked.failed, checked.passed, checked.failed);
  warn_infeasible(rows.best, err);
  if (checked.failed > 0)
    err << fmt::format(
        "warning: {} candidate(s) disagree with the reference interpreter (check = 0 in "
        "/candidates)\n",
        checked.failed);
  if (interrupt_signal() == 0 || meta.status == "complete")
    return 0;  // a signal after the last unit lost nothing
  err << fmt::format("interrupted by signal {}: the archive is partial; continue with --resume\n",
                     interrupt_signal());
  return 128 + interrupt_signal();
}

// `<archive>.pids` for as long as the run lasts (rank 0), so a user can signal exactly this
// run's ranks; every rank's handlers are installed before it is written. Collective.
class PidsFile {
 public:
  PidsFile(const Comm& comm, const RunOptions& o, const std::string& archive, std::ostream& err) {
    std::string all = comm.allgather(rank_pid_line(comm.rank()));
    if (comm.rank() != 0) return;
    try {
      write_file_durably(pids_path(archive), all, "pids file");
      path_ = pids_path(archive);
    } catch (const std::exception& e) {  // the run does not depend on it
      err << fmt::format("warning: {}", e.what()) << std::endl;
    }
    if (!o.quiet)
      err << fmt::format(
                 "{} rank(s); to interrupt this run (a partial archive, continue with --resume): "
                 "{}",
                 comm.size(), interrupt_command(parse_rank_pids(all), host_name()))
          << std::endl;
  }
  ~PidsFile() {
    std::error_code ec;
    if (!path_.empty()) fs::remove(path_, ec);
  }
  PidsFile(const PidsFile&) = delete;
  PidsFile& operator=(const PidsFile&) = delete;

 private:
  std::string path_;
};

// Every rank, after the Comm exists; a JobError leaves it on every rank at the same point.
int run_ranks(const Comm& comm, const RunOptions& o, std::ostream& out, std::ostream& err) {
  std::string start_time = now_iso();
  Setup setup = setup_job(comm, o);
  if (o.dry_run && quick_dry_run(comm, o, setup)) {
    std::string text;
    agree(comm, [&] {
      std::ostringstream table;
      if (comm.rank() == 0) print_quick_dry_run(setup.job, setup.archive, table);
      text = table.str();
    });
    out << text;
    return 0;
  }
  int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int threads = o.threads > 0 ? o.threads : std::max(1, hw / comm.local_size());
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                            static_cast<std::size_t>(threads));
  std::unique_ptr<Plan> plan = build_plan(comm, setup, o, err);
  // The handlers before the collective that precedes the journal: a signal that arrives once the
  // journal is on disk (while the synthesis records are written durably, say) must end in a
  // partial archive on every rank, not kill one (scripts.slurm_sbatch cuts a run right then).
  install_interrupt_handlers();
  std::string digest = agree_on_plan(comm, *plan);
  if (o.dry_run) {
    if (comm.rank() == 0) print_dry_run(*plan, setup.archive, out);
    return 0;
  }
  std::optional<OpenJournal> journal;
  agree(comm, [&] {
    if (comm.rank() != 0) return;
    journal.emplace(open_journal(o, setup, digest));
    write_synthesis_records(synthesis_path(setup.archive), o.tool_version,
                            plan->synthesis_records());
  });
  PidsFile pids(comm, o, setup.archive, err);
  if (comm.rank() != 0) {
    run_worker(comm, *plan, err);
    return 0;
  }
  // The workers are done: what fails now fails on rank 0 alone.
  try {
    return Rank0Run{comm, *plan, setup, o, threads, start_time}(*journal, out, err);
  } catch (const std::exception& e) {
    if (comm.size() == 1) throw;
    err << rank_error(0, e.what()) << std::endl;
    return 2;
  }
}

}  // namespace

int run_sweep(const RunOptions& o, std::ostream& out, std::ostream& err) {
  Comm comm;
  try {
    return run_ranks(comm, o, out, err);
  } catch (const JobError& e) {
    if (comm.rank() == 0) err << rank_error(e.rank(), e.what()) << std::endl;
    return 2;
  }
}

}  // namespace ts::sweep
