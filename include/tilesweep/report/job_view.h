// What the analysis verbs need from a job file recorded in an archive (/meta job_toml): each
// kernel's file, name, label and suite, and the search options that shaped the candidate space.
// Unlike sweep::parse_job it reads nothing from disk: kernel sources come from the archive's
// /meta kernel_sources, so an archive stays analysable after its job and kernels have moved.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace ts::report {

struct JobKernelRef {
  std::string file;    // as the job names it (relative to the job's folder)
  std::string source;  // the key of its text in /meta kernel_sources ("" when not found)
  std::string name;    // the kernel in the file ("" = the file's only kernel)
  std::string label;   // its name in records
  std::string suite;   // "axon", "nkibench" or "other", from the file's path
};

struct JobView {
  std::string name;
  std::vector<JobKernelRef> kernels;
  int max_block = 8, isa_depth = 2, max_lowerings = 3;
  std::vector<int> bufs = {1, 2, 3};
  int cores = 1;  // [search] cores: the most NeuronCores a candidate may use

  const JobKernelRef* kernel(const std::string& label) const;  // nullptr when absent
};

// Parses `job_toml`; `where` names it in errors (UserError on malformed TOML). Labels left
// implicit are resolved by parsing the kernel's source (the file's only kernel).
JobView parse_job_view(const std::string& job_toml,
                       const std::map<std::string, std::string>& kernel_sources,
                       const std::string& where);

// "axon" / "nkibench" when the path has such a folder, else "other".
std::string suite_of(const std::string& file);

}  // namespace ts::report
