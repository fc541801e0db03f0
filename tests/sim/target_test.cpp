#include "tilesweep/target/target.h"

#include <gtest/gtest.h>

namespace ts::sim {
namespace {

const char* kTarget = R"toml(
name = "toy"
core = "toy-core"
[chip]
neuron_cores = 2
hbm_bytes_per_s = 820e9
dma_engines = 32
lnc = [1]
hbm_stacks = 2
[sbuf]
partitions = 128
bytes_per_partition = 196608
usable_bytes_per_partition = 180224
access_init_cycles = 60
min_align_bytes = 4
full_rate_stride_bytes = 16
[psum]
partitions = 128
bytes_per_partition = 16384
banks = 8
bank_bytes = 2048
[engine.tensor]
clock_hz = 2.8e9
elements_per_cycle = 128
[engine.vector]
clock_hz = 1.12e9
elements_per_cycle = 128
[engine.scalar]
clock_hz = 1.4e9
elements_per_cycle = 128
[engine.gpsimd]
clock_hz = 1.4e9
elements_per_cycle = 128
[overheads]
min_ii_cycles = 64
mm_init_cycles = 64
vector_fixed_cycles = 144
gpsimd_start_cycles = 150
dynamic_address_cycles = 600
semaphore_ns = 100
psum_read_cycles = 64
core_barrier_ns = 1400
[dma]
engines_per_core = 16
queues_per_engine = 16
bytes_per_ns_per_engine = 17.0
start_ns = 1300
dge_ns = 0
transpose_fraction_hbm = 0.0
transpose_fraction_sbuf = 0.0
efficiency = [[0, 0.05], [256, 0.2], [2048, 0.6], [4096, 0.9], [32768, 1.0]]
[roofline]
hbm_bytes_per_s = 440.2e9
matmul_flops_fp32 = 23.75e12
matmul_flops_bf16 = 92e12
vector_flops = 286.8e9
[mesh]
topology = "torus"
devices_per_node = 16
links_per_device = 4
link_bytes_per_s = 96e9
intra_hop_latency_ns = 1500
inter_node_latency_ns = 15000
efa_bytes_per_s = 100e9
)toml";

const char* kIsa = R"toml(
[instr.tensor_copy]
operands = ["x"]
expr = "x"
engines = ["vector"]
cost = "maximum(MIN_II, N)"
)toml";

TEST(Target, Loads) {
  target::Target t = target::load_target(kTarget, "target.toml", kIsa, "isa.toml");
  EXPECT_EQ(t.name, "toy");
  EXPECT_EQ(t.sbuf.bytes_per_partition, 196608);
  EXPECT_DOUBLE_EQ(t.engines.at(sem::Engine::Tensor).clock_hz, 2.8e9);
  EXPECT_TRUE(t.has_instr("tensor_copy"));
  EXPECT_DOUBLE_EQ(t.dma.efficiency_at(0), 0.05);
  EXPECT_DOUBLE_EQ(t.dma.efficiency_at(3072), 0.75);
  EXPECT_DOUBLE_EQ(t.dma.efficiency_at(1e6), 1.0);
}

// The error of loading the test target with `from` replaced by `to` ("no error" when it loads).
std::string error(const std::string& from, const std::string& to) {
  std::string text = kTarget;
  text.replace(text.find(from), from.size(), to);
  try {
    target::load_target(text, "target.toml", kIsa, "isa.toml");
  } catch (const UserError& e) {
    return std::string(e.what());
  }
  return std::string("no error");
}

TEST(Target, MistakesNameFileLineAndKey) {
  EXPECT_EQ(error("clock_hz = 2.8e9", "clock_hz = 2.8e12"),
            "target.toml:23:12: error: 'engine.tensor.clock_hz' must be between 100000000 and "
            "10000000000, got 2800000000000");
  EXPECT_EQ(error("banks = 8\n", ""), "target.toml:17:1: error: missing key 'psum.banks'");
  EXPECT_EQ(error("topology = \"torus\"", "topology = \"tree\""),
            "target.toml:58:12: error: 'mesh.topology' must be ring, torus or switch, got 'tree'");
  EXPECT_EQ(error("[roofline]", "[rooflin]"), "target.toml:1:1: error: missing table [roofline]");
  EXPECT_EQ(error("[4096, 0.9]", "[4096, 1.9]"),
            "target.toml:51:51: error: a DMA efficiency must be in (0, 1], got 1.9");
}

// A key nothing reads is an error at the key, with the closest known key of its table (or the
// list of them); a misspelled required key is named as the likely misspelling (issue 21).
TEST(Target, UnknownKeysNameTheClosestKnownOne) {
  struct Case {
    std::string from, to, want;
  };
  for (const auto& c : std::vector<Case>{
           {"min_align_bytes = 4\n", "min_align_bytes = 4\nmin_align_byte = 8\n",
            "target.toml:16:1: error: unknown key 'min_align_byte' in [sbuf]; did you mean "
            "'min_align_bytes'?"},
           {"banks = 8\n", "banks = 8\nbank = 4\n",
            "target.toml:21:1: error: unknown key 'bank' in [psum]; did you mean 'banks'?"},
           {"elements_per_cycle = 128\n[engine.vector]",
            "elements_per_cycle = 128\nclock = 1\n[engine.vector]",
            "target.toml:25:1: error: unknown key 'clock' in [engine.tensor] (its keys: clock_hz, "
            "elements_per_cycle)"},
           {"[engine.gpsimd]", "[engine.gpsimdd]\nx = 1\n[engine.gpsimd]",
            "target.toml:31:9: error: unknown key 'gpsimdd' in [engine]; did you mean 'gpsimd'?"},
           {"core = \"toy-core\"\n", "core = \"toy-core\"\ncores = 2\n",
            "target.toml:4:1: error: unknown key 'cores' in the target file; did you mean 'core'?"},
           {"lnc = [1]\n", "lnc = [1]\nlnx = [2]\n",
            "target.toml:9:1: error: unknown key 'lnx' in [chip]; did you mean 'lnc'?"},
           {"[roofline]\n", "[roofline]\nhbm_bytes = 1\n",
            "target.toml:53:1: error: unknown key 'hbm_bytes' in [roofline] (its keys: "
            "hbm_bytes_per_s, "
            "matmul_flops_bf16, matmul_flops_fp32, vector_flops)"},
           {"semaphore_ns = 100", "semaphor_ns = 100",
            "target.toml:40:1: error: missing key 'overheads.semaphore_ns': is 'semaphor_ns' here "
            "a misspelling of "
            "'semaphore_ns'?"},
           {"hbm_stacks = 2", "hbm_stacks = 3",
            "target.toml:4:1: error: 'chip.hbm_stacks' = 3 must divide 'chip.neuron_cores' = 2 "
            "(each stack serves as many cores)"},
           {"hbm_stacks = 2", "hbm_stacks = 0",
            "target.toml:9:14: error: 'chip.hbm_stacks' must be between 1 and 64, got 0"},
       })
    EXPECT_EQ(error(c.from, c.to), c.want) << c.to;
}

}  // namespace
}  // namespace ts::sim

namespace ts::sim {
namespace {

TEST(BuiltinTargets, AllLoadAndDifferWhereTheHardwareDoes) {
  const target::Target& t1 = target::builtin_target("trn1");
  const target::Target& t2 = target::builtin_target("trn2");
  const target::Target& t3 = target::builtin_target("trn3");
  EXPECT_EQ(t1.chip.neuron_cores, 2);
  EXPECT_EQ(t2.chip.neuron_cores, 8);
  EXPECT_EQ(t1.chip.hbm_stacks, 2);  // A1
  EXPECT_EQ(t2.chip.hbm_stacks, 4);  // A2: an LNC=2 pair per stack
  EXPECT_EQ(t3.chip.hbm_stacks, 4);  // A3
  for (const target::Target* t : {&t1, &t2, &t3})
    EXPECT_GT(t->overheads.core_barrier_ns, 0) << t->name;
  EXPECT_FALSE(t1.has_instr("dma_transpose"));
  EXPECT_TRUE(t2.has_instr("dma_transpose"));
  EXPECT_EQ(t1.isa.find("nc_matmul")->limits.at("n"), 512);
  EXPECT_EQ(t3.isa.find("nc_matmul")->limits.at("n"), 4096);
  EXPECT_GT(t2.sbuf.bytes_per_partition, t1.sbuf.bytes_per_partition);
  for (const char* instr :
       {"dma_copy", "tensor_copy", "nc_transpose_pe", "nc_transpose_dve", "nc_matmul", "activation",
        "activation_reduce", "reciprocal", "tensor_tensor", "tensor_scalar", "scalar_tensor_tensor",
        "tensor_reduce", "tensor_partition_reduce", "tensor_scalar_reduce", "tensor_tensor_scan",
        "memset", "iota", "affine_select"})
    for (const target::Target* t : {&t1, &t2, &t3})
      EXPECT_TRUE(t->has_instr(instr)) << t->name << " " << instr;
}

TEST(BuiltinTargets, UnknownNameIsAUserError) {
  try {
    target::builtin_target("trn9");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "error: unknown target 'trn9' (bundled targets: trn1, trn2, trn3)");
  }
}

}  // namespace
}  // namespace ts::sim
