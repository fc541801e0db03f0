// The job file: what a sweep runs (kernels × shapes × targets × meshes) and how hard it searches.
// parse_job validates everything a run needs before any work starts: every kernel file exists
// and parses, every shape gives every dim of its kernel, every target is known, the archive's
// folder is writable. Any mistake is a UserError at the job file's line and column; a typo'd
// key is an error (with a suggestion), never ignored.
//
// Keys (TOML; paths are relative to the job file's folder):
//   name      string, required: letters, digits, '-', '_', '.'; names the default archive
//   targets   non-empty list of bundled target names (trn1, trn2, trn3), no repeats
//   seed      integer ≥ 0, default 1: random inputs and sampling
//   [[kernel]]          one or more
//     file    the kernel file (.py), required; must exist and parse (its errors are reported as is)
//     name    the kernel in that file; optional when the file defines exactly one kernel
//     label   how records name this kernel, default `name`; (label, dtype) is unique in the job,
//             so two suites' same-named kernels need a label to share a job
//     dtype   f32 | bf16 | f16 | f8, default f32: the element type of every tensor parameter
//     shapes  required when the kernel has dims; every dim of the kernel exactly once:
//             { M = [1024, 2048], K = 512 }   grid: the cartesian product, in the kernel's dim
//                                             order, first dim outermost, values as listed
//             [ { M = 1024, K = 512 }, ... ]  an explicit list
//             each value an integer 1 .. 2^31-1; every shape must meet the kernel's
//             preconditions (e.g. maxpool's even dims); no repeated shape; ≤ 65536 per kernel
//   [search]
//     max_block      tiles per block, per dim: 1 .. 64, default 8
//     isa_depth      ISA synthesis depth: 1 .. 3, default 2
//     keep           records kept per (kernel, target, shape, mesh): "all" or "top:N" (N ≥ 1),
//                    default "top:16"
//     ablations      also score the no-algebra / no-fusion / heuristic baselines, default true
//     prune          skip candidates whose latency provably cannot reach the kept rows or the
//                    ablation baselines (sweep/prune.h): same archive rows, fewer simulations;
//                    default true
//     max_lowerings  lowerings tried per op: 1 .. 64, default 3
//     bufs           multi-buffering depths tried: non-empty, each 1 .. 8, no repeats,
//                    default [1, 2, 3]
//     check_samples  the best N kept candidates per (kernel, target, shape, mesh) also run
//                    through the functional interpreter at the space's shape and compared with
//                    the reference (sweep/check.h; /candidates `check`): 0 .. 1000000, default 0
//     unit_size      candidates per work unit: 1 .. 1048576, default 256
//     cores          NeuronCores a candidate may split its top-level loops over: 1 .. the
//                    NeuronCores per chip of every target (trn1 2, trn2 8, trn3 8), default 1;
//                    the search tries 1, 2, 4, ... and N cores (sim/cores.h)
//     max_section_candidates  0 (default: score every candidate) or N >= 1: a section of a
//                    space (a variant's fused or unfused form) with more candidates is scored
//                    by a stratified sample of N of them drawn from `seed` (sweep/sample.h)
//   [mesh]              optional: multi-device scoring. Every (kernel, target, shape) is searched
//                       on each mesh, under every sharding choice of the kernel (mesh/sharding.h)
//                       at its local shape, plus the choice's collectives; without [mesh] only
//                       mesh "1" (one device, no sharding). List "1" to keep the one-device rows.
//     shapes    non-empty list of device meshes "4", "2x2", "4x4" (positive integers joined by
//               'x', at most 4 axes, at most 65536 devices), no repeats; required
//     topology  ring | torus | switch; default: each target's own
//   [output]
//     archive   the HDF5 archive, default "<name>.h5" next to the job file; its folder is
//               created if missing and must be writable
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tilesweep/base/error.h"
#include "tilesweep/ir/dtype.h"

namespace ts::sweep {

// One concrete shape: (dim name, size) in the kernel's dim order.
using Shape = std::vector<std::pair<std::string, std::int64_t>>;

// "M=4096,K=1024,N=2048" ("" for a kernel without dims): the shape's name in records.
std::string shape_text(const Shape& shape);
// The same shape as a dim environment (sem::DimEnv) for shape arithmetic.
std::map<std::string, std::int64_t> shape_env(const Shape& shape);

struct JobKernel {
  std::string file;    // resolved path of the kernel file
  std::string source;  // its text, as read (ranks re-parse it; archives record it)
  std::string name;    // the kernel in the file
  std::string label;   // its name in records (default: name)
  ir::DType dtype = ir::DType::F32;
  std::vector<Shape> shapes;  // expanded, in the order the job gives them
  SourceLoc loc;              // the [[kernel]] table in the job file
};

inline constexpr std::int64_t kKeepAll = 0;

struct Search {
  int max_block = 8;
  int isa_depth = 2;
  std::int64_t keep_top = 16;  // records kept per (kernel, target, shape, mesh); kKeepAll: all
  bool ablations = true;
  bool prune = true;  // sweep/prune.h
  int max_lowerings = 3;
  std::vector<int> bufs = {1, 2, 3};
  std::int64_t check_samples = 0;
  std::int64_t unit_size = 256;
  std::int64_t max_section_candidates = 0;  // 0: every candidate
  bool engines_per_op = false;  // engines = "per-op": an engine choice per op, not one policy
  int cores = 1;                // NeuronCores a candidate may use, at most
};

// "all" or "top:N", as a job file writes it.
std::string keep_text(const Search& search);

struct MeshShape {
  std::vector<int> sizes;  // devices per mesh axis, slowest first
  std::string text;        // canonical "2x2"
  int devices() const;
};

struct MeshSpec {
  std::vector<MeshShape> shapes;
  std::string topology;  // ring | torus | switch; "" = each target's default
};

struct Job {
  std::string name;
  std::string path;  // the job file as given
  std::string text;  // its text, as read
  std::vector<std::string> targets;
  std::uint64_t seed = 1;
  std::vector<JobKernel> kernels;
  Search search;
  std::optional<MeshSpec> mesh;
  std::string archive;  // resolved path

  // 16 hex digits: FNV-1a of the job text and every kernel's source, so a resumed run can
  // tell that neither the job nor a kernel it sweeps has changed.
  std::string hash() const;
};

// What parsing a job may touch on disk besides reading the kernel files.
enum class OutputCheck {
  Probe,  // create the [output] archive's folder if missing and probe that it is writable
  Skip,   // resolve the path only: the run writes elsewhere (--archive), runs dry, or another
          // rank already probed it
};

// Parses and validates a job; `path` names the file in messages and anchors relative paths.
// Reads the kernel files and, with OutputCheck::Probe, creates the archive's folder if it is
// missing (probing that it is writable with a temporary file, removed again). Throws UserError
// on any mistake.
Job parse_job(const std::string& text, const std::string& path,
              OutputCheck output = OutputCheck::Probe);

// Reads the file (read_text_file's checks) and parses it.
Job load_job(const std::string& path, OutputCheck output = OutputCheck::Probe);

}  // namespace ts::sweep
