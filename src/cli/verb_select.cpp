// `tilesweep select ARCHIVE... -o LIB.h5 [--json F] [--nki-dir D] [--force]`: the shape library,
// the best entry per (kernel, target, shape, mesh) over the archives, with provenance and NKI
// source.
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <iostream>

#include "tilesweep/base/durable_file.h"
#include "tilesweep/base/error.h"
#include "tilesweep/base/json_string.h"
#include "tilesweep/report/select.h"
#include "verbs.h"

namespace ts::cli {

namespace {

struct SelectOpts {
  std::vector<std::string> archives;
  std::string out, json, nki_dir, python, nki_api = "current", nki_shapes = "generic";
  bool no_nki = false, force = false, quiet = false;
};

namespace fs = std::filesystem;

// Before any work: each output's folder exists (created) and takes a file; an existing file is
// overwritten only with --force; the library is never one of the archives read.
void check_output(const std::string& path, const std::string& option, const SelectOpts& o) {
  if (path.empty()) return;
  std::error_code ec;
  for (const auto& a : o.archives)
    if (a == path || fs::equivalent(a, path, ec))
      throw UserError(
          fmt::format("error: {}: '{}' is also an input; name a new file", option, path));
  if (fs::exists(path, ec) && !o.force)
    throw UserError(fmt::format(
        "error: {}: '{}' already exists; use --force to overwrite it, or name a new file", option,
        path));
  fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  if (ec)
    throw UserError(fmt::format("error: {}: cannot create folder '{}': {}", option, parent.string(),
                                ec.message()));
  check_writable(path, option);
}

std::string json_number(double v) { return std::isfinite(v) ? fmt::format("{}", v) : "null"; }

std::string library_json(const store::Library& lib) {
  std::string out =
      "{\n  \"tool_version\": " + json_string(lib.tool_version) + ",\n  \"archives\": [";
  for (std::size_t i = 0; i < lib.archives.size(); ++i)
    out += (i ? ", " : "") + json_string(lib.archives[i]);
  out += "],\n  \"entries\": [";
  for (std::size_t i = 0; i < lib.entries.size(); ++i) {
    const auto& e = lib.entries[i];
    out += fmt::format(
        "{}\n    {{\"kernel\": {}, \"target\": {}, \"shape\": {}, \"mesh\": {}, \"variant\": {}, "
        "\"choice\": {}, "
        "\"index\": {}, \"config\": {}, \"latency_ns\": {}, \"roofline_ns\": {}, \"roofline_pct\": "
        "{}, "
        "\"heuristic_ns\": {}, \"archive\": {}, \"job_name\": {}, \"tool_version\": {}, \"nki\": "
        "{}, "
        "\"nki_error\": {}}}",
        i ? "," : "", json_string(e.kernel), json_string(e.target), json_string(e.shape),
        json_string(e.mesh), e.variant, e.choice, e.index, json_string(e.config),
        json_number(e.latency_ns), json_number(e.roofline_ns), json_number(e.roofline_pct),
        json_number(e.heuristic_ns), json_string(e.archive), json_string(e.job_name),
        json_string(e.tool_version), json_string(e.nki), json_string(e.nki_error));
  }
  return out + "\n  ]\n}\n";
}

// One file per entry: <kernel>_<target>_<shape>_mesh<mesh>.py, characters outside [A-Za-z0-9_-] as
// '_'.
void write_nki_dir(const store::Library& lib, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw UserError(
        fmt::format("error: --nki-dir: cannot create folder '{}': {}", dir, ec.message()));
  for (const auto& e : lib.entries) {
    std::string name = fmt::format("{}_{}_{}_mesh{}", e.kernel, e.target, e.shape, e.mesh);
    for (char& c : name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') c = '_';
    std::string text = !e.nki.empty()
                           ? e.nki
                           : fmt::format("# {} {} {} mesh {}: no NKI source: {}\n", e.kernel,
                                         e.target, e.shape, e.mesh, e.nki_error);
    write_file_durably(dir + "/" + name + ".py", text, "--nki-dir file");
  }
}

// A Python module mapping (kernel, target, shape) to the entry's NKI function: exact shapes only,
// by the library's rule; another shape raises LookupError naming the nearest entry and the
// `lookup --nki` command that re-instantiates it (never another shape's kernel).
std::string python_module(const store::Library& lib) {
  std::string out =
      "\"\"\"The shape library's NKI kernels (written by `tilesweep select --python`).\n\n"
      "    kernel(\"softmax\", \"trn1\", M=256, N=256) -> the @nki.jit function for exactly that "
      "shape.\n"
      "A shape that was not swept raises LookupError naming the nearest entry (a kernel is built "
      "for one\n"
      "shape and asserts it); `tilesweep lookup LIB --nki` re-instantiates a configuration at a "
      "new shape.\n"
      "\"\"\"\nimport math\n\nENTRIES = {\n";
  for (const auto& e : lib.entries) {
    if (e.nki.empty() || e.mesh != "1") continue;
    out += fmt::format("    ({}, {}, {}): {},\n", json_string(e.kernel), json_string(e.target),
                       json_string(e.shape), json_string(e.nki));
  }
  out +=
      "}\n_LOADED = {}\n\n\ndef _dims(shape):\n    return dict((k, int(v)) for k, v in "
      "(i.split(\"=\") for i in shape.split(\",\")))\n\n\n"
      "def kernel(name, target, **dims):\n"
      "    key = (name, target, \",\".join(f\"{k}={dims[k]}\" for k in sorted(dims)))\n"
      "    if key not in ENTRIES:\n"
      "        near = [(sum(abs(math.log2(d[k] / dims[k])) for k in dims), s) for (n, t, s) in "
      "ENTRIES\n"
      "                for d in [_dims(s)] if n == name and t == target and set(d) == set(dims)]\n"
      "        hint = f\"; nearest entry {min(near)[1]}\" if near else \"\"\n"
      "        raise LookupError(f\"no NKI kernel for {name} on {target} at {key[2]}{hint}; run "
      "`tilesweep lookup LIB \"\n"
      "                          f\"--kernel {name} --target {target} --shape {key[2]} --nki` to "
      "re-instantiate one\")\n"
      "    if key not in _LOADED:\n"
      "        scope = {}\n"
      "        exec(compile(ENTRIES[key], f\"<tilesweep {name} {target} {key[2]}>\", \"exec\"), "
      "scope)\n"
      "        _LOADED[key] = scope[[k for k, v in scope.items() if hasattr(v, \"__call__\") and "
      "not k.startswith(\"_\")][-1]]\n"
      "    return _LOADED[key]\n";
  return out;
}

}  // namespace

VerbRun add_select(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "select",
      "build a shape library: the best entry per (kernel, target, shape, mesh) over archives");
  auto o = std::make_shared<SelectOpts>();
  cmd->add_option("archives", o->archives, "archives (plain or merged)")->required();
  cmd->add_option("-o,--output", o->out, "the library to write (HDF5)")->required();
  cmd->add_option("--json", o->json, "also write the library as JSON");
  cmd->add_option("--nki-dir", o->nki_dir,
                  "write each entry's NKI source as a .py file in this folder");
  cmd->add_option("--python", o->python,
                  "also write a Python module: kernel(name, target, **dims) returns the entry's "
                  "NKI function (exact shapes)");
  cmd->add_flag("--force", o->force, "overwrite existing output files (-o, --json, --python)");
  cmd->add_flag("-q,--quiet", o->quiet, "no progress lines on stderr");
  cmd->add_flag("--no-nki", o->no_nki, "do not re-materialize candidates (no NKI source)");
  cmd->add_option("--nki-api", o->nki_api,
                  "NKI dialect: current (nki, Neuron SDK 2.27+) or legacy (neuronxcc.nki, <= 2.26)")
      ->check(CLI::IsMember({"current", "legacy"}));
  cmd->add_option("--nki-shapes", o->nki_shapes,
                  "generic (default): each entry's NKI as `lower --nki-shapes generic` writes "
                  "it (trip counts from the arguments' shapes, partial last tiles where safe); "
                  "fixed: asserted to the entry's shape")
      ->check(CLI::IsMember({"generic", "fixed"}));
  return [o, cmd]() {
    if (!*cmd) return -1;
    check_output(o->out, "-o", *o);
    check_output(o->json, "--json", *o);
    check_output(o->python, "--python", *o);
    report::SelectOptions so;
    so.emit_nki = !o->no_nki;
    so.nki_api = lower::parse_nki_api(o->nki_api);
    so.nki_generic = o->nki_shapes == "generic";
    so.tool_version = TILESWEEP_VERSION;
    auto t0 = std::chrono::steady_clock::now();
    if (!o->quiet)
      so.progress = [t0](const std::string& what) {
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::cerr << fmt::format("select {:6.1f} s: {}", s, what) << std::endl;
      };
    store::Library lib = report::select_library(o->archives, so);
    store::write_library(o->out, lib);
    if (!o->json.empty()) {
      write_file_durably(o->json, library_json(lib), "--json file");
    }
    if (!o->nki_dir.empty()) write_nki_dir(lib, o->nki_dir);
    if (!o->python.empty()) write_file_durably(o->python, python_module(lib), "--python file");
    int failed = 0;
    for (const auto& e : lib.entries) failed += e.nki.empty() ? 1 : 0;
    std::cout << fmt::format(
        "{}: {} entries from {} archive(s); NKI source for {} ({} without: see nki_error)\n",
        o->out, lib.entries.size(), o->archives.size(), lib.entries.size() - failed, failed);
    return 0;
  };
}

}  // namespace ts::cli
