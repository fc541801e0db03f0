// Good jobs: what parse_job makes of them (grid order, list form, defaults, paths), and every
// bundled job in jobs/ loads.
#include "tilesweep/sweep/job.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace ts::sweep {
namespace {

namespace fs = std::filesystem;

const std::string kMatmul = std::string(TS_SOURCE_DIR) + "/jobs/kernels/axon/matmul.py";

// A fresh folder per test (ctest runs tests as separate, possibly parallel, processes).
class JobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("ts_job_{}_{}",
                       ::testing::UnitTest::GetInstance()->current_test_info()->name(), ::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& rel, const std::string& text) {
    fs::path p = dir_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  // A job with one kernel entry (`kernel` is the body of the [[kernel]] table).
  Job job(const std::string& kernel, const std::string& rest = "") {
    std::string path = write(
        "job.toml", "name = \"j\"\ntargets = [\"trn2\"]\n[[kernel]]\n" + kernel + "\n" + rest);
    return load_job(path);
  }
  std::vector<std::string> shapes(const JobKernel& k) {
    std::vector<std::string> out;
    for (const auto& s : k.shapes) out.push_back(shape_text(s));
    return out;
  }
  std::string error(const std::string& kernel, const std::string& rest = "") {
    try {
      job(kernel, rest);
    } catch (const UserError& e) {
      return e.what();
    }
    return "no error";
  }

  fs::path dir_;
};

using Strings = std::vector<std::string>;

TEST_F(JobTest, GridExpandsInKernelDimOrderFirstDimOutermost) {
  struct Case {
    std::string shapes;
    Strings expect;
  };
  const Case cases[] = {
      {"{ N = [1, 2], M = 3, K = [4, 5] }",
       {"M=3,K=4,N=1", "M=3,K=4,N=2", "M=3,K=5,N=1", "M=3,K=5,N=2"}},
      {"{ M = [2, 1], K = 7, N = 9 }", {"M=2,K=7,N=9", "M=1,K=7,N=9"}},
      {"{ M = 8, K = [16], N = 32 }", {"M=8,K=16,N=32"}},
      {"[{ N = 3, K = 2, M = 1 }, { M = 4, K = 5, N = 6 }]", {"M=1,K=2,N=3", "M=4,K=5,N=6"}},
  };
  for (const auto& c : cases) {
    Job j = job("file = \"" + kMatmul + "\"\nshapes = " + c.shapes);
    ASSERT_EQ(j.kernels.size(), 1u);
    EXPECT_EQ(shapes(j.kernels[0]), c.expect) << c.shapes;
    for (const auto& s : j.kernels[0].shapes) EXPECT_EQ(s[0].first, "M");
  }
}

TEST_F(JobTest, Defaults) {
  Job j = job("file = \"" + kMatmul + "\"\nshapes = { M = 1, K = 2, N = 3 }");
  EXPECT_EQ(j.name, "j");
  EXPECT_EQ(j.targets, Strings{"trn2"});
  EXPECT_EQ(j.seed, 1u);
  const JobKernel& k = j.kernels[0];
  EXPECT_EQ(k.name, "matmul");
  EXPECT_EQ(k.label, "matmul");
  EXPECT_EQ(k.dtype, ir::DType::F32);
  EXPECT_EQ(k.file, kMatmul);
  EXPECT_NE(k.source.find("def matmul"), std::string::npos);
  EXPECT_EQ(k.loc.line, 3);
  EXPECT_EQ(j.search.max_block, 8);
  EXPECT_EQ(j.search.isa_depth, 2);
  EXPECT_EQ(keep_text(j.search), "top:16");
  EXPECT_TRUE(j.search.ablations);
  EXPECT_EQ(j.search.max_lowerings, 3);
  EXPECT_EQ(j.search.bufs, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(j.search.check_samples, 0);
  EXPECT_EQ(j.search.unit_size, 256);
  EXPECT_EQ(j.search.max_section_candidates, 0);
  EXPECT_EQ(j.search.cores, 1);
  EXPECT_FALSE(j.mesh);
  EXPECT_EQ(j.archive, (dir_ / "j.h5").string());
}

TEST_F(JobTest, EveryKeySet) {
  Job j = job("file = \"" + kMatmul +
                  "\"\nname = \"matmul\"\nlabel = \"axon/matmul\"\ndtype = \"bf16\"\n"
                  "shapes = { M = 1, K = 2, N = 3 }",
              "[search]\nmax_block = 64\nisa_depth = 3\nkeep = \"all\"\nablations = "
              "false\nmax_lowerings = 5\n"
              "bufs = [2, 4]\ncheck_samples = 10\nunit_size = 1000\nmax_section_candidates = 5000\n"
              "[mesh]\nshapes = [\"1\", \"4\", \"2x2\", \"4x4\", \"2x2x2\"]\ntopology = \"ring\"\n"
              "[output]\narchive = \"out/a.h5\"\n");
  EXPECT_EQ(j.kernels[0].label, "axon/matmul");
  EXPECT_EQ(j.kernels[0].dtype, ir::DType::BF16);
  EXPECT_EQ(j.search.max_block, 64);
  EXPECT_EQ(j.search.isa_depth, 3);
  EXPECT_EQ(j.search.keep_top, kKeepAll);
  EXPECT_EQ(keep_text(j.search), "all");
  EXPECT_FALSE(j.search.ablations);
  EXPECT_EQ(j.search.max_lowerings, 5);
  EXPECT_EQ(j.search.bufs, (std::vector<int>{2, 4}));
  EXPECT_EQ(j.search.check_samples, 10);
  EXPECT_EQ(j.search.unit_size, 1000);
  EXPECT_EQ(j.search.max_section_candidates, 5000);
  ASSERT_TRUE(j.mesh);
  EXPECT_EQ(j.mesh->topology, "ring");
  Strings texts;
  std::vector<int> devices;
  for (const auto& m : j.mesh->shapes) {
    texts.push_back(m.text);
    devices.push_back(m.devices());
  }
  EXPECT_EQ(texts, (Strings{"1", "4", "2x2", "4x4", "2x2x2"}));
  EXPECT_EQ(devices, (std::vector<int>{1, 4, 4, 16, 8}));
  EXPECT_EQ(j.mesh->shapes[3].sizes, (std::vector<int>{4, 4}));
}

// [search] cores: up to the NeuronCores per chip of every target (bad values: tests/jobs/cores_*).
TEST_F(JobTest, CoresUpToTheChip) {
  const std::string k = "file = \"" + kMatmul + "\"\nshapes = { M = 1, K = 2, N = 3 }";
  for (int cores : {1, 2, 3, 8})
    EXPECT_EQ(job(k, fmt::format("[search]\ncores = {}\n", cores)).search.cores, cores);
  struct Case {
    std::string targets;
    int cores;
    bool ok;
  };
  for (const Case& c : std::vector<Case>{{"trn1", 2, true},
                                         {"trn1", 3, false},
                                         {"trn3", 8, true},
                                         {"trn3", 9, false},
                                         {"trn1\", \"trn2", 2, true},
                                         {"trn2\", \"trn1", 8, false}}) {
    std::string path =
        write("c.toml", fmt::format("name = \"j\"\ntargets = [\"{}\"]\n[[kernel]]\n{}\n"
                                    "[search]\ncores = {}\n",
                                    c.targets, k, c.cores));
    bool ok = true;
    try {
      EXPECT_EQ(load_job(path).search.cores, c.cores);
    } catch (const UserError& e) {
      ok = false;
      EXPECT_NE(std::string(e.what()).find("NeuronCores of a trn"), std::string::npos) << e.what();
    }
    EXPECT_EQ(ok, c.ok) << c.targets << " " << c.cores;
  }
}

TEST_F(JobTest, KeepTopN) {
  Job j = job("file = \"" + kMatmul + "\"\nshapes = { M = 1, K = 2, N = 3 }",
              "[search]\nkeep = \"top:5\"\n");
  EXPECT_EQ(j.search.keep_top, 5);
  EXPECT_EQ(keep_text(j.search), "top:5");
}

TEST_F(JobTest, PathsAreRelativeToTheJobFile) {
  write("kernels/k.py", "def k(x: f32[R, C]) -> f32[R, C]:\n    return relu(x)\n");
  std::string path =
      write("jobs/sub/job.toml",
            "name = \"rel\"\ntargets = [\"trn1\"]\n[[kernel]]\nfile = \"../../kernels/k.py\"\n"
            "shapes = { R = [4, 8], C = 16 }\n[output]\narchive = \"out/deep/rel.h5\"\n");
  Job j = load_job(path);
  EXPECT_EQ(j.kernels[0].file, (dir_ / "kernels/k.py").string());
  EXPECT_EQ(j.archive, (dir_ / "jobs/sub/out/deep/rel.h5").string());
  EXPECT_TRUE(fs::is_directory(dir_ / "jobs/sub/out/deep"));  // created, and the probe removed
  EXPECT_TRUE(fs::is_empty(dir_ / "jobs/sub/out/deep"));
  EXPECT_EQ(shapes(j.kernels[0]), (Strings{"R=4,C=16", "R=8,C=16"}));
}

TEST_F(JobTest, FileWithSeveralKernelsNeedsAName) {
  write(
      "two.py",
      "def a(x: f32[M]) -> f32[M]:\n    return x\n\ndef b(y: f32[N]) -> f32[N]:\n    return -y\n");
  Job j = job("file = \"two.py\"\nname = \"b\"\nshapes = { N = 5 }");
  EXPECT_EQ(j.kernels[0].name, "b");
  EXPECT_EQ(shapes(j.kernels[0]), Strings{"N=5"});
  EXPECT_EQ(error("file = \"two.py\"\nshapes = { N = 5 }"),
            (dir_ / "job.toml").string() +
                ":3:1: error: 'two.py' defines 2 kernels (a, b); choose one with name = \"a\"");
}

TEST_F(JobTest, KernelWithoutDimsHasOneEmptyShape) {
  write("fixed.py", "def f(x: f32[4, 8]) -> f32[4, 8]:\n    return exp(x)\n");
  Job j = job("file = \"fixed.py\"");
  ASSERT_EQ(j.kernels[0].shapes.size(), 1u);
  EXPECT_EQ(shape_text(j.kernels[0].shapes[0]), "");
}

TEST_F(JobTest, KernelParseErrorIsReportedAsIs) {
  std::string k = write("bad.py", "def f(x: f32[M, N]) -> f32[M, N]:\n    return frobnicate(x)\n");
  std::string e = error("file = \"bad.py\"\nshapes = { M = 1, N = 1 }");
  EXPECT_EQ(e.rfind(k + ":2:", 0), 0u) << e;
}

TEST_F(JobTest, BinaryKernelFileIsReportedInTheKernelFile) {
  write("bin.py", std::string("def \0f", 6));
  std::string e = error("file = \"bin.py\"\nshapes = { M = 1 }");
  EXPECT_EQ(e.rfind((dir_ / "bin.py").string() + ":1: error: file is not UTF-8 text", 0), 0u) << e;
}

TEST_F(JobTest, SameKernelTwiceWithDifferentDtypes) {
  std::string f = "file = \"" + kMatmul + "\"\nshapes = { M = 1, K = 2, N = 3 }\n";
  Job j = job(f, "[[kernel]]\n" + f + "dtype = \"f8\"\n");
  ASSERT_EQ(j.kernels.size(), 2u);
  EXPECT_EQ(j.kernels[1].dtype, ir::DType::F8);
}

TEST_F(JobTest, HashCoversTheJobAndItsKernels) {
  std::string k = write("k.py", "def k(x: f32[M]) -> f32[M]:\n    return x\n");
  std::string a = job("file = \"k.py\"\nshapes = { M = 4 }").hash();
  EXPECT_EQ(a.size(), 16u);
  EXPECT_EQ(job("file = \"k.py\"\nshapes = { M = 4 }").hash(), a);
  EXPECT_NE(job("file = \"k.py\"\nshapes = { M = 5 }").hash(), a);
  write("k.py", "def k(x: f32[M]) -> f32[M]:\n    return -x\n");
  EXPECT_NE(job("file = \"k.py\"\nshapes = { M = 4 }").hash(), a);
}

TEST_F(JobTest, GridSizeIsLimited) {
  std::string sizes;
  for (int i = 1; i <= 300; ++i) sizes += fmt::format("{}{}", i > 1 ? ", " : "", i);
  std::string e = error("file = \"" + kMatmul + "\"\nshapes = { M = [" + sizes + "], K = [" +
                        sizes + "], N = 1 }");
  EXPECT_EQ(e, (dir_ / "job.toml").string() +
                   ":5:10: error: the grid has more than 65536 shapes; sweep fewer sizes or split "
                   "the kernel into "
                   "several [[kernel]] entries");
}

TEST_F(JobTest, ShapeText) {
  EXPECT_EQ(shape_text({{"M", 4096}, {"K", 1024}, {"N", 2048}}), "M=4096,K=1024,N=2048");
  EXPECT_EQ(shape_text({}), "");
  EXPECT_EQ(shape_env({{"M", 2}, {"K", 3}}).at("K"), 3);
}

TEST(BundledJobs, EveryJobLoads) {
  int n = 0;
  for (const auto& f : fs::directory_iterator(fs::path(TS_SOURCE_DIR) / "jobs")) {
    if (f.path().extension() != ".toml") continue;
    ++n;
    SCOPED_TRACE(f.path().string());
    Job j = load_job(f.path().string());
    EXPECT_EQ(j.name, f.path().stem().string());  // the name matches the file
    EXPECT_FALSE(j.kernels.empty());
  }
  EXPECT_GE(n, 4);
}

// (kernels, shapes in all, targets, meshes) of each bundled job.
TEST(BundledJobs, Contents) {
  struct Case {
    std::string file;
    std::size_t kernels, shapes, targets, meshes;
  };
  const Case cases[] = {
      {"quick", 4, 11, 2, 0},
      {"axon-suite", 20, 60, 2, 0},
      {"nkibench", 14, 14, 2, 0},
      {"mesh-tp", 3, 6, 1, 4},
  };
  for (const auto& c : cases) {
    Job j = load_job(std::string(TS_SOURCE_DIR) + "/jobs/" + c.file + ".toml");
    std::size_t shapes = 0;
    for (const auto& k : j.kernels) shapes += k.shapes.size();
    EXPECT_EQ(j.kernels.size(), c.kernels) << c.file;
    EXPECT_EQ(shapes, c.shapes) << c.file;
    EXPECT_EQ(j.targets.size(), c.targets) << c.file;
    EXPECT_EQ(j.mesh ? j.mesh->shapes.size() : 0u, c.meshes) << c.file;
    EXPECT_EQ(fs::path(j.archive).filename().string(), c.file + ".h5");
  }
}

}  // namespace
}  // namespace ts::sweep
