// The analysis verbs' logic on synthetic archives: merge rules and provenance, diff order,
// lookup's exact and nearest rule, the library round trip (and the header-only reader), reports.
#include "tilesweep/report/report.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "../../src/report/config_delta.h"
#include "tilesweep/base/error.h"
#include "tilesweep/report/job_view.h"
#include "tilesweep/report/lookup.h"
#include "tilesweep/report/merge.h"
#include "tilesweep/report/why.h"
#include "tilesweep/store/library.h"
#include "tilesweep/store/library_reader.h"

namespace ts::report {
namespace {

store::BestRecord best(std::string kernel, std::string shape, double latency,
                       std::int64_t index = 0) {
  store::BestRecord b;
  b.kernel = std::move(kernel), b.target = "trn1", b.shape = std::move(shape);
  b.latency_ns = latency, b.roofline_ns = latency / 2, b.heuristic_ns = latency * 3,
  b.index = index;
  b.no_algebra_ns = latency * 2, b.no_fusion_ns = latency * 1.5, b.candidates = 10,
  b.infeasible = 2;
  b.config = "cfg" + std::to_string(index);
  return b;
}

LoadedArchive loaded(const std::string& path, const std::string& job,
                     std::vector<store::BestRecord> rows, const std::string& target_text = "T") {
  store::Archive a;
  a.meta.job_name = job, a.meta.job_hash = job, a.meta.status = "complete";
  a.meta.job_toml = "name = \"" + job + "\"\n[[kernel]]\nfile = \"k/axon/mm.py\"\nlabel = \"mm\"\n";
  a.meta.targets["trn1"] = target_text;
  a.best = std::move(rows);
  a.candidates.resize(3);
  a.proofs.push_back({"swap", "mm", "a past b", "equivalent", 2.5});
  LoadedArchive l{path, a, {}};
  // One file per process: ctest runs the tests of this binary in parallel processes.
  std::string tmp = (std::filesystem::temp_directory_path() /
                     ("report_test_" + job + "_" + std::to_string(::getpid()) + ".h5"))
                        .string();
  store::write_archive(tmp, a);
  l.provenance = store::read_provenance(tmp, l.archive);  // a plain archive: itself as its source
  l.provenance.sources[0].path = path;
  std::remove(tmp.c_str());
  return l;
}

TEST(Merge, KeepsLowerLatencyTiesToFirstAndProvenance) {
  auto a = loaded("a.h5", "ja", {best("mm", "M=1", 100, 1), best("mm", "M=2", 200, 2)});
  auto b = loaded("b.h5", "jb",
                  {best("mm", "M=1", 90, 7), best("mm", "M=2", 200, 8), best("mm", "M=4", 5, 9)});
  Merged m = merge_archives({a, b}, "0.1");
  ASSERT_EQ(m.archive.best.size(), 3u);
  EXPECT_EQ(m.archive.best[0].index, 7);  // lower latency from b
  EXPECT_EQ(m.archive.best[1].index, 2);  // tie: first archive
  EXPECT_EQ(m.provenance.best_origin[0].source, 1);
  EXPECT_EQ(m.provenance.best_origin[1].source, 0);
  ASSERT_EQ(m.provenance.sources.size(), 2u);
  EXPECT_EQ(m.provenance.sources[1].path, "b.h5");
  EXPECT_EQ(m.provenance.sources[1].candidates_first, 3);
  EXPECT_EQ(m.archive.candidates.size(), 6u);
}

TEST(Merge, RefusesDifferentTargetText) {
  auto a = loaded("a.h5", "ja", {best("mm", "M=1", 100)});
  auto b = loaded("b.h5", "jb", {best("mm", "M=1", 100)}, "other text");
  try {
    merge_archives({a, b}, "0.1");
    FAIL() << "merged";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(
                  "error: cannot merge 'a.h5' and 'b.h5': target 'trn1' has a different "
                  "description text",
                  0),
              0u)
        << e.what();
  }
}

TEST(Merge, MergedArchiveRoundTripsItsProvenance) {
  auto a = loaded("a.h5", "ja", {best("mm", "M=1", 100)});
  auto b = loaded("b.h5", "jb", {best("mm", "M=2", 50)});
  Merged m = merge_archives({a, b}, "0.1");
  std::string path = (std::filesystem::temp_directory_path() / "report_test_merged.h5").string();
  store::write_archive(path, m.archive, m.provenance);
  LoadedArchive back = load_archive(path);
  std::remove(path.c_str());
  ASSERT_EQ(back.provenance.sources.size(), 2u);
  EXPECT_EQ(back.provenance.sources[0].job_name, "ja");
  EXPECT_EQ(back.provenance.best_origin[1].source, 1);
}

TEST(Diff, SelfIsEmptyAndRegressionsComeFirst) {
  auto a = loaded("a.h5", "ja",
                  {best("mm", "M=1", 100), best("mm", "M=2", 100), best("mm", "M=4", 100)});
  EXPECT_TRUE(diff_best(a.archive, a.archive).empty());
  auto b =
      loaded("b.h5", "jb", {best("mm", "M=1", 50), best("mm", "M=2", 120), best("mm", "M=8", 1)});
  auto d = diff_best(a.archive, b.archive);
  ASSERT_EQ(d.size(), 4u);
  EXPECT_EQ(d[0].kind, BestChange::Kind::Regression);
  EXPECT_EQ(d[0].shape, "M=2");
  EXPECT_EQ(d[1].kind, BestChange::Kind::Removed);
  EXPECT_EQ(d[2].kind, BestChange::Kind::Improvement);
  EXPECT_EQ(d[3].kind, BestChange::Kind::Added);
  EXPECT_EQ(describe(d[0]), "regression   mm trn1 M=2 mesh 1: 100.0 ns -> 120.0 ns (+20.0%)");
}

// A latency change within the threshold is no regression: listed as a candidate change when the
// candidate differs, dropped when only the latency moved. A lost program is always a regression.
TEST(Diff, ThresholdSeparatesNoiseFromRegressions) {
  auto a = loaded("a.h5", "ja",
                  {best("mm", "M=1", 1000), best("mm", "M=2", 1000, 1), best("mm", "M=4", 1000),
                   best("mm", "M=8", 1000)});
  auto rows = std::vector{best("mm", "M=1", 1000.5), best("mm", "M=2", 1000.4, 2),
                          best("mm", "M=4", 1020), best("mm", "M=8", 1000)};
  rows[3].latency_ns = store::kNotComputed;
  auto b = loaded("b.h5", "jb", rows);
  struct Case {
    double threshold;
    std::vector<std::pair<std::string, BestChange::Kind>> want;
  };
  using K = BestChange::Kind;
  for (const Case& c :
       {Case{0,
             {{"M=8", K::Regression},
              {"M=4", K::Regression},
              {"M=1", K::Regression},
              {"M=2", K::Regression}}},
        Case{0.1, {{"M=8", K::Regression}, {"M=4", K::Regression}, {"M=2", K::Changed}}},
        Case{5, {{"M=8", K::Regression}, {"M=2", K::Changed}}}}) {
    auto d = diff_best(a.archive, b.archive, c.threshold);
    std::vector<std::pair<std::string, BestChange::Kind>> got;
    for (const auto& x : d) got.emplace_back(x.shape, x.kind);
    EXPECT_EQ(got, c.want) << "threshold " << c.threshold;
  }
}

// Only the knobs that differ, in the order they appear.
TEST(Diff, ShowsOnlyTheChangedKnobs) {
  struct Case {
    std::string before, after, want;
  };
  for (const Case& c : std::vector<Case>{
           {"v0 fused bufs=2 | g0: pt=128 block=1", "v0 fused bufs=2 | g0: pt=128 block=1", ""},
           {"v0 fused bufs=2 | g0: pt=128 block=1", "v0 fused bufs=3 | g0: pt=64 block=1",
            "bufs: 2 -> 3; g0.pt: 128 -> 64"},
           {"v0 fused | mul@2: tensor_tensor(x, y, op='mul')",
            "v0 fused instruction-fusion | mul@2: tensor_scalar(x, y)",
            "mul@2: tensor_tensor(x, y, op='mul') -> tensor_scalar(x, y); +instruction-fusion"},
           {"v1 unfused | g0: pt=128 | g1: pt=64", "v1 unfused | g0: pt=128", "-g1.pt=64"},
       })
    EXPECT_EQ(detail::config_delta(c.before, c.after), c.want) << c.before << " vs " << c.after;
  auto b = best("mm", "M=1", 100, 1), a = best("mm", "M=1", 200, 2);
  b.config = "v0 bufs=2", a.config = "v0 bufs=3";
  auto d = diff_best(loaded("a.h5", "ja", {b}).archive, loaded("b.h5", "jb", {a}).archive);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(describe(d[0]),
            "regression   mm trn1 M=1 mesh 1: 100.0 ns -> 200.0 ns (+100.0%); candidate 1 -> 2: "
            "bufs: 2 -> 3");
}

store::Library library() {
  store::Library lib;
  for (auto [shape, lat] :
       {std::pair{"M=256,N=256", 10.0}, {"M=1024,N=256", 20.0}, {"M=256,N=1024", 30.0}}) {
    store::LibraryEntry e;
    e.kernel = "softmax", e.target = "trn1", e.shape = shape, e.latency_ns = lat, e.nki = "# nki\n";
    lib.entries.push_back(e);
  }
  return lib;
}

TEST(Lookup, ExactThenNearestTiesToLarger) {
  store::Library lib = library();
  auto exact = lookup(lib, "lib.h5", "softmax", "trn1", {{"M", 256}, {"N", 256}});
  EXPECT_TRUE(exact.exact);
  EXPECT_EQ(exact.rule, "exact match");
  auto near = lookup(lib, "lib.h5", "softmax", "trn1", {{"M", 300}, {"N", 250}});
  EXPECT_FALSE(near.exact);
  EXPECT_EQ(near.entry->shape, "M=256,N=256");
  // M=512,N=512 is one doubling from each entry: ties go to the larger shape (same volume: first).
  auto tie = lookup(lib, "lib.h5", "softmax", "trn1", {{"M", 512}, {"N", 256}});
  EXPECT_EQ(tie.entry->shape, "M=1024,N=256");
}

TEST(Lookup, UnknownKernelSuggests) {
  try {
    lookup(library(), "lib.h5", "sofmax", "trn1", {{"M", 1}});
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              "error: --kernel: library 'lib.h5' has no entry for kernel 'sofmax'; did you mean "
              "'softmax'?");
  }
}

TEST(Library, RoundTripsAndHeaderOnlyReaderAgrees) {
  std::string path = (std::filesystem::temp_directory_path() / "report_test_lib.h5").string();
  store::Library lib = library();
  lib.entries[1].nki = std::string(3000, 'x');  // a variable-length column
  store::write_library(path, lib);
  store::Library back = store::read_library(path);
  ASSERT_EQ(back.entries.size(), 3u);
  EXPECT_EQ(back.entries[1].nki.size(), 3000u);
  library_reader::Library r(path);
  std::remove(path.c_str());
  ASSERT_EQ(r.entries().size(), 3u);
  bool exact = true;
  const auto* e = r.find("softmax", "trn1", {{"M", 512}, {"N", 256}}, "1", &exact);
  ASSERT_NE(e, nullptr);
  EXPECT_FALSE(exact);
  EXPECT_EQ(e->shape, "M=1024,N=256");
  EXPECT_EQ(e->nki.size(), 3000u);
}

// library_reader::Library::lookup gives `tilesweep lookup`'s answer: the same entry and rule, the
// NKI only for the swept shape, and for any other shape a note naming the re-instantiating
// command instead of the entry's code (issue 20).
TEST(Library, HeaderOnlyReaderAnswersAsLookup) {
  std::string path =
      (std::filesystem::temp_directory_path() / "report_test_lib_lookup.h5").string();
  store::Library lib = library();
  lib.entries[0].nki = "# the kernel for M=256,N=256\n";
  store::write_library(path, lib);
  library_reader::Library r(path);
  std::remove(path.c_str());
  const sem::DimEnv asked[] = {{{"M", 256}, {"N", 256}},
                               {{"M", 300}, {"N", 250}},
                               {{"M", 512}, {"N", 256}},
                               {{"M", 3000}, {"N", 256}},
                               {{"M", 1}, {"N", 256}}};
  for (const auto& dims : asked) {
    LookupAnswer want = lookup(lib, path, "softmax", "trn1", dims);
    std::map<std::string, std::int64_t> d(dims.begin(), dims.end());
    library_reader::Answer got = r.lookup("softmax", "trn1", d);
    std::string shape = fmt::format("M={},N={}", dims.at("M"), dims.at("N"));
    ASSERT_NE(got.entry, nullptr) << shape;
    EXPECT_EQ(got.entry->shape, want.entry->shape) << shape;
    EXPECT_EQ(got.exact, want.exact) << shape;
    EXPECT_EQ(got.rule, want.rule) << shape;
    if (want.exact) {
      EXPECT_EQ(got.nki, want.entry->nki) << shape;
      EXPECT_TRUE(got.note.empty()) << shape;
    } else {
      EXPECT_TRUE(got.nki.empty()) << shape << ": another shape's kernel handed out";
      std::string cmd = "tilesweep lookup " + path + " --kernel softmax --target trn1 --shape " +
                        shape + " --nki";
      EXPECT_NE(got.note.find(cmd), std::string::npos) << got.note;
      EXPECT_NE(got.note.find("built for " + want.entry->shape + " only"), std::string::npos)
          << got.note;
    }
  }
  library_reader::Answer none = r.lookup("softmax", "trn1", {{"T", 1}});
  EXPECT_EQ(none.entry, nullptr);
  EXPECT_TRUE(none.nki.empty());
}

TEST(Library, RefusesAnArchive) {
  auto a = loaded("a.h5", "ja", {best("mm", "M=1", 100)});
  std::string path = (std::filesystem::temp_directory_path() / "report_test_notlib.h5").string();
  store::write_archive(path, a.archive);
  EXPECT_THROW(store::read_library(path), UserError);
  std::remove(path.c_str());
}

TEST(Report, TablesAndGeomeans) {
  auto a = loaded("a.h5", "ja", {best("mm", "M=1", 100), best("mm", "M=2", 100)});
  Report r = build_report(a);
  ASSERT_FALSE(r.tables.empty());
  EXPECT_EQ(r.tables[0].id, "speedup");
  EXPECT_EQ(r.tables[0].columns, (std::vector<std::string>{"kernel", "1", "2", "geomean"}));
  EXPECT_NE(r.tables[0].title.find(" M;"), std::string::npos);
  EXPECT_DOUBLE_EQ(r.tables[0].rows[0][1].number, 3.0);
  EXPECT_DOUBLE_EQ(r.tables[0].rows[0][3].number, 3.0);
  EXPECT_NE(format_text(r).find("simulated"), std::string::npos);
  EXPECT_NE(format_text(r).find("axon"),
            std::string::npos);  // the suite from the job's kernel path
  EXPECT_DOUBLE_EQ(geomean({2, 8}), 4.0);
}

// Axon's column labels (1K = 1024) when every shape names the same dims; full labels otherwise.
TEST(Report, SpeedupColumnsAreCompactShapes) {
  auto grid = build_report(
      loaded("a.h5", "ja", {best("mm", "M=1024,N=2048", 100), best("mm", "M=16384,N=100", 50)}));
  EXPECT_EQ(grid.tables[0].columns,
            (std::vector<std::string>{"kernel", "1Kx2K", "16Kx100", "geomean"}));
  EXPECT_NE(grid.tables[0].title.find(" M x N;"), std::string::npos);
  auto mixed = build_report(
      loaded("a.h5", "ja", {best("mm", "M=1024,N=2048", 100), best("mm", "M=1024", 50)}));
  EXPECT_EQ(mixed.tables[0].columns,
            (std::vector<std::string>{"kernel", "M=1024,N=2048", "M=1024", "geomean"}));
}

// Axon Table 6: best / ablation latency, min, max, geomean over shapes.
TEST(Report, AblationRelativeToTheFullSearch) {
  auto rows = std::vector{best("mm", "M=1", 100), best("mm", "M=2", 100)};
  rows[1].no_algebra_ns = 400;  // 0.25x at M=2, 0.5x at M=1
  Report r = build_report(loaded("a.h5", "ja", rows));
  auto t = std::find_if(r.tables.begin(), r.tables.end(),
                        [](const Table& x) { return x.id == "ablation_relative"; });
  ASSERT_NE(t, r.tables.end());
  ASSERT_EQ(t->rows.size(), 1u);
  EXPECT_DOUBLE_EQ(t->rows[0][3].number, 0.25);
  EXPECT_DOUBLE_EQ(t->rows[0][4].number, 0.5);
  EXPECT_NEAR(t->rows[0][5].number, std::sqrt(0.125), 1e-12);
  EXPECT_NEAR(t->rows[0][8].number, 1 / 1.5, 1e-12);
}

const Table& table(const Report& r, const std::string& id) {
  auto t =
      std::find_if(r.tables.begin(), r.tables.end(), [&](const Table& x) { return x.id == id; });
  if (t == r.tables.end()) throw std::runtime_error("no table " + id);
  return *t;
}

// Absolute latencies in us, the engine that bounds each best, and per-target totals that count a
// key without a program apart instead of adding NaN.
TEST(Report, LatencyTableAndTotals) {
  auto rows = std::vector{best("mm", "M=1", 2000), best("mm", "M=2", 4000), best("mm", "M=4", 100)};
  rows[0].busy_ns = {500, 0, 0, 0, 1800};  // dma 90 %
  rows[1].busy_ns = {3000, 100, 0, 0, 200};
  rows[2].latency_ns = store::kNotComputed;
  rows.push_back(best("mm", "M=1", 1000));
  rows.back().target = "trn2";
  Report r = build_report(loaded("a.h5", "ja", rows));
  const Table& l = table(r, "latency");
  ASSERT_EQ(l.rows.size(), 4u);
  EXPECT_EQ(l.columns[4], "best us");
  EXPECT_DOUBLE_EQ(l.rows[0][4].number, 2.0);
  EXPECT_EQ(l.rows[0][8].text, "dma 90% busy");
  EXPECT_EQ(l.rows[1][8].text, "tensor 75% busy");
  EXPECT_EQ(l.rows[2][8].text, "no program");
  const Table& total = table(r, "latency_total");
  ASSERT_EQ(total.rows.size(), 2u);
  EXPECT_EQ(total.rows[0][0].text, "trn1");
  EXPECT_DOUBLE_EQ(total.rows[0][2].number, 3);  // keys
  EXPECT_DOUBLE_EQ(total.rows[0][3].number, 1);  // without a program
  EXPECT_DOUBLE_EQ(total.rows[0][4].number, 6.0);
  EXPECT_DOUBLE_EQ(total.rows[0][5].number, 18.0);
  EXPECT_DOUBLE_EQ(total.rows[1][4].number, 1.0);
}

// Tidy CSV: every speedup value carries kernel, target, shape and mesh, so the rows of two
// targets never share a key; JSON names a per-target table's target and its columns' shapes.
TEST(Report, CsvRowsNameTheirKeys) {
  auto rows = std::vector{best("mm", "M=1", 100), best("mm", "M=2", 100)};
  rows.push_back(best("mm", "M=1", 50));
  rows.back().target = "trn2";
  Report r = build_report(loaded("a.h5", "ja", rows));
  std::string csv = format_csv(r);
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "table,row,column,value,kernel,target,shape,mesh");
  EXPECT_NE(csv.find("\nspeedup,mm,1,3,mm,trn1,M=1,1\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\nspeedup,mm,1,3,mm,trn2,M=1,1\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\nlatency,mm,best us,0.05,mm,trn2,M=1,1\n"), std::string::npos) << csv;
  std::string json = format_json(r);
  EXPECT_NE(json.find("\"target\": \"trn2\", \"column_keys\": [null, {\"shape\": \"M=1\", "
                      "\"mesh\": \"1\"}, null]"),
            std::string::npos)
      << json;
}

}  // namespace
}  // namespace ts::report

namespace ts::report {
namespace {

// `why`'s pieces: the partitions of each fused group read from a config, and the bound phrase
// (busiest engine, collectives, idle partitions, spills; no program / no feasible candidate).
TEST(Why, GroupPartitionsFromConfig) {
  struct Case {
    std::string config;
    std::vector<int> want;
  };
  for (const auto& c : std::vector<Case>{
           {"v0 fused | relu@2: activation(x) | g0: pt=8 block=1 free=512", {8}},
           {"v1 unfused | g0: pt=128 block=2 free=0 | g1: pt=64 block=1 free=128", {128, 64}},
           {"v0 fused | no groups here pt=3", {}},
           {"", {}},
       })
    EXPECT_EQ(group_partitions(c.config), c.want) << c.config;
}

TEST(Why, BoundPhrase) {
  store::BestRecord b = best("mm", "M=1", 1000);
  b.busy_ns = {100, 0, 0, 0, 920};
  store::CandidateRecord c;
  struct Case {
    std::string config;
    double collective_ns;
    std::int64_t spill;
    bool with_row;
    int partitions;
    std::string want;
  };
  for (const auto& k : std::vector<Case>{
           {"g0: pt=128", 0, 0, true, 128, "dma 92% busy"},
           {"g0: pt=8 block=1", 0, 0, true, 128, "dma 92% busy; 8 of 128 partitions"},
           {"g0: pt=8 | g1: pt=32", 0, 0, true, 128, "dma 92% busy; 32 of 128 partitions"},
           {"g0: pt=8", 0, 0, true, 0, "dma 92% busy"},  // target unknown
           {"g0: pt=128", 250, 0, true, 128, "dma 92% busy; collectives 25%"},
           {"g0: pt=128", 0, 3 << 20, true, 128, "dma 92% busy; spills 3.0 MiB"},
           {"g0: pt=128", 0, 3 << 20, false, 128, "dma 92% busy"},  // no /candidates row kept
       }) {
    b.config = k.config, b.collective_ns = k.collective_ns, c.spill_bytes = k.spill;
    EXPECT_EQ(bound_phrase(b, k.with_row ? &c : nullptr, k.partitions), k.want) << k.config;
  }
  b.latency_ns = store::kNotComputed;
  EXPECT_EQ(bound_phrase(b, nullptr, 128), "no program");
  b.infeasible = b.candidates;
  EXPECT_EQ(bound_phrase(b, nullptr, 128), "no feasible candidate");
}

}  // namespace
}  // namespace ts::report

namespace ts::report {
namespace {

// The job recorded in an archive is read through the TOML reader: its values typed, a damaged
// or hand-edited one an error at file:line:col naming the key (issue 21).
TEST(JobView, ReadsTheRecordedJobWithLocations) {
  JobView v = parse_job_view(
      "name = \"j\"\n[[kernel]]\nfile = \"k/axon/mm.py\"\nlabel = \"mm\"\n[search]\nmax_block = "
      "4\nbufs = [1, 3]\n",
      {}, "a.h5: /meta job_toml");
  EXPECT_EQ(v.name, "j");
  ASSERT_EQ(v.kernels.size(), 1u);
  EXPECT_EQ(v.kernels[0].label, "mm");
  EXPECT_EQ(v.kernels[0].suite, "axon");
  EXPECT_EQ(v.max_block, 4);
  EXPECT_EQ(v.isa_depth, 2);  // the default
  EXPECT_EQ(v.bufs, (std::vector<int>{1, 3}));
  struct Case {
    std::string toml, message;
  };
  for (
      const auto& c : std::vector<Case>{
          {"name = \"j\"\n[search]\nmax_block = \"4\"\n",
           "a.h5: /meta job_toml:3:13: error: 'search.max_block' must be an integer, not a string"},
          {"name = 3\n",
           "a.h5: /meta job_toml:1:8: error: 'name' must be a string, not an integer"},
          {"search = 1\n",
           "a.h5: /meta job_toml:1:10: error: 'search' must be a table ([search]), not an integer"},
          {"[search]\nbufs = [0]\n",
           "a.h5: /meta job_toml:2:9: error: 'search.bufs' must be between 1 and 64, got 0"},
          {"[[kernel]]\nfile = 7\n",
           "a.h5: /meta job_toml:2:8: error: 'file' must be a string, not an integer"},
          {"name = \"j\n", "a.h5: /meta job_toml:1:"},
      }) {
    try {
      parse_job_view(c.toml, {}, "a.h5: /meta job_toml");
      ADD_FAILURE() << "no error for " << c.toml;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace ts::report
