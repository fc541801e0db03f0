// A hardware target, loaded from data: src/targets/<name>/target.toml (chip, memories,
// engines, overheads, DMA, roofline peaks, mesh links) and isa.toml (the instructions). The
// simulator, the tiler and the reports read every hardware number from here.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tilesweep/semantics/instr_spec.h"
#include "tilesweep/target/legality.h"

namespace ts::target {

struct EngineSpec {
  double clock_hz = 0;
  int elements_per_cycle = 0;
};

struct Target {
  std::string name, core;

  struct Chip {
    int neuron_cores = 0;
    double hbm_bytes_per_s = 0;
    int dma_engines = 0;
    std::vector<int> lnc;
    int hbm_stacks = 1;  // HBM stacks; the cores attached to one share its bandwidth
  } chip;
  struct Sbuf {
    int partitions = 0;
    std::int64_t bytes_per_partition = 0, usable_bytes_per_partition = 0;
    int access_init_cycles = 0;
    int min_align_bytes = 0;
    // An engine reads or writes an SBUF/PSUM operand at half its element rate when the operand's
    // most-minor stride exceeds this many bytes (A1: full rate below 16 B).
    int full_rate_stride_bytes = 16;
  } sbuf;
  struct Psum {
    int partitions = 0;
    std::int64_t bytes_per_partition = 0;
    int banks = 0;
    std::int64_t bank_bytes = 0;
  } psum;
  std::map<sem::Engine, EngineSpec> engines;  // tensor, vector, scalar, gpsimd
  struct Overheads {
    double min_ii_cycles = 0, mm_init_cycles = 0, vector_fixed_cycles = 0, gpsimd_start_cycles = 0,
           dynamic_address_cycles = 0, semaphore_ns = 0, psum_read_cycles = 0;
    double core_barrier_ns = 0;  // one round of a barrier between the cores of a chip
  } overheads;
  struct Dma {
    int engines_per_core = 0, queues_per_engine = 0;
    double bytes_per_ns_per_engine = 0, start_ns = 0, dge_ns = 0;
    double transpose_fraction_hbm = 0, transpose_fraction_sbuf = 0;
    std::vector<std::pair<double, double>> efficiency;  // (bytes per partition, fraction of peak)
    // Fraction of peak DMA throughput at this many bytes per partition (piecewise linear).
    double efficiency_at(double bytes_per_partition) const;
  } dma;
  struct Roofline {
    double hbm_bytes_per_s = 0, matmul_flops_fp32 = 0, matmul_flops_bf16 = 0, vector_flops = 0;
  } roofline;
  struct Mesh {
    std::string topology;
    int devices_per_node = 0, links_per_device = 0;
    double link_bytes_per_s = 0, intra_hop_latency_ns = 0, inter_node_latency_ns = 0,
           efa_bytes_per_s = 0;
  } mesh;

  sem::InstrTable isa;
  Legality legality;  // isa.toml [legality]: per-engine memories, ALU operators, requirements
  std::string target_text, isa_text;  // the description as read (archives record it)

  bool has_instr(std::string_view name) const { return isa.find(name) != nullptr; }
};

// Parses a target from the two files' texts; every missing or malformed value is a UserError
// naming the file, the line and the key.
Target load_target(const std::string& target_text, const std::string& target_file,
                   const std::string& isa_text, const std::string& isa_file,
                   const sem::OpTable& ops = sem::OpTable::builtin());

// A bundled target (trn1, trn2, trn3), embedded at build time; loaded once. UserError for an
// unknown name (listing the known ones).
const Target& builtin_target(const std::string& name);
std::vector<std::string> builtin_target_names();

// Loads src/targets/<dir name>/target.toml and isa.toml from a folder.
Target load_target_dir(const std::string& dir, const sem::OpTable& ops = sem::OpTable::builtin());

}  // namespace ts::target
