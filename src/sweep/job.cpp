#include "tilesweep/sweep/job.h"

#include <toml++/toml.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

#include "tilesweep/base/hash.h"
#include "tilesweep/base/source.h"
#include "tilesweep/base/suggest.h"
#include "tilesweep/base/toml_reader.h"
#include "tilesweep/ir/frontend.h"
#include "tilesweep/target/target.h"

namespace ts::sweep {

namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kMaxDimSize = std::numeric_limits<std::int32_t>::max();
constexpr std::int64_t kMaxShapesPerKernel = 65536;
constexpr int kMaxMeshAxes = 4;
constexpr std::int64_t kMaxMeshDevices = 65536;

// Names that end up in file names and record keys: no spaces, commas or quotes.
bool valid_name(const std::string& s, std::string_view extra) {
  if (s.empty() || !std::isalnum(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
           extra.find(c) != std::string_view::npos;
  });
}

std::string resolve(const fs::path& dir, const std::string& rel) {
  return (dir / rel).lexically_normal().string();
}

std::string parse_name(const TomlReader& r, const toml::table& doc) {
  const toml::node* n = doc.get("name");
  if (!n) fail(r.at(doc.source()), "missing 'name': every job needs one, like name = \"my-sweep\"");
  std::string name = r.string(*n, "name");
  if (!valid_name(name, ""))
    fail(r.at(*n),
         "job name '{}' must start with a letter or digit and use only letters, digits, '-', '_' "
         "and '.' "
         "(it names the archive)",
         name);
  return name;
}

std::vector<std::string> parse_targets(const TomlReader& r, const toml::table& doc) {
  std::vector<std::string> known = target::builtin_target_names();
  const toml::node* n = doc.get("targets");
  if (!n)
    fail(r.at(doc.source()),
         "missing 'targets': name the hardware to score on, like targets = [\"trn2\"] "
         "(known targets: {})",
         fmt::join(known, ", "));
  std::vector<std::string> out;
  for (const toml::node& e : r.list(*n, "targets", "[\"trn2\"]")) {
    std::string t = r.string(e, "targets");
    if (std::find(known.begin(), known.end(), t) == known.end())
      fail(r.at(e), "unknown target '{}' (known targets: {}){}", t, fmt::join(known, ", "),
           did_you_mean(t, known));
    if (std::find(out.begin(), out.end(), t) != out.end())
      fail(r.at(e), "target '{}' is listed twice", t);
    out.push_back(t);
  }
  return out;
}

// ---- kernels and shapes ----

std::string dims_note(const ir::Kernel& k) {
  if (k.dims.empty()) return fmt::format("kernel '{}' has no dims", k.name);
  return fmt::format("kernel '{}' has dims {}", k.name, fmt::join(k.dims, ", "));
}

std::int64_t dim_size(const TomlReader& r, const toml::node& n, const std::string& dim,
                      const ir::Kernel& k) {
  if (n.is_array())
    fail(r.at(n),
         "dim '{}' takes one size in a list of shapes; for several sizes use a grid, like "
         "shapes = {{ {} = [...], ... }} ({})",
         dim, dim, dims_note(k));
  if (!n.is_integer())
    fail(r.at(n), "dim '{}' must be a positive integer, not {} ({})", dim, toml_type_name(n),
         dims_note(k));
  std::int64_t v = n.as_integer()->get();
  if (v < 1) fail(r.at(n), "dim '{}' = {} must be positive ({})", dim, v, dims_note(k));
  if (v > kMaxDimSize)
    fail(r.at(n), "dim '{}' = {} is larger than the {} limit ({})", dim, v, kMaxDimSize,
         dims_note(k));
  return v;
}

// The table gives every dim of the kernel and nothing else.
void check_dims(const TomlReader& r, const toml::table& t, const ir::Kernel& k) {
  for (auto&& [key, v] : t) {
    std::string d(key.str());
    if (std::find(k.dims.begin(), k.dims.end(), d) == k.dims.end())
      fail(r.at(key), "'{}' is not a dim of kernel '{}' (its dims: {}){}", d, k.name,
           k.dims.empty() ? "none" : fmt::format("{}", fmt::join(k.dims, ", ")),
           did_you_mean(d, k.dims));
  }
  for (const auto& d : k.dims)
    if (!t.contains(d)) fail(r.at(t), "shape is missing dim '{}' ({})", d, dims_note(k));
}

// shapes = { M = [..], K = .. }: the cartesian product, first dim outermost.
std::vector<Shape> expand_grid(const TomlReader& r, const toml::table& grid, const ir::Kernel& k) {
  check_dims(r, grid, k);
  std::vector<std::vector<std::int64_t>> values;
  std::int64_t total = 1;
  for (const auto& d : k.dims) {
    const toml::node& n = *grid.get(d);
    std::vector<std::int64_t> vs;
    if (const toml::array* a = n.as_array()) {
      if (a->empty()) fail(r.at(n), "dim '{}' has an empty list of sizes ({})", d, dims_note(k));
      for (const toml::node& e : *a) {
        if (e.is_array()) fail(r.at(e), "dim '{}': a size must be an integer, not a list", d);
        std::int64_t v = dim_size(r, e, d, k);
        if (std::find(vs.begin(), vs.end(), v) != vs.end())
          fail(r.at(e), "dim '{}' lists {} twice", d, v);
        vs.push_back(v);
      }
    } else {
      vs.push_back(dim_size(r, n, d, k));
    }
    total *= static_cast<std::int64_t>(vs.size());
    if (total > kMaxShapesPerKernel)
      fail(r.at(grid),
           "the grid has more than {} shapes; sweep fewer sizes or split the kernel into several "
           "[[kernel]] entries",
           kMaxShapesPerKernel);
    values.push_back(std::move(vs));
  }
  std::vector<Shape> out;
  std::vector<std::size_t> idx(k.dims.size(), 0);
  for (std::int64_t i = 0; i < total; ++i) {
    Shape s;
    for (std::size_t d = 0; d < k.dims.size(); ++d) s.emplace_back(k.dims[d], values[d][idx[d]]);
    out.push_back(std::move(s));
    for (std::size_t d = k.dims.size(); d-- > 0;) {  // odometer: the last dim turns fastest
      if (++idx[d] < values[d].size()) break;
      idx[d] = 0;
    }
  }
  return out;
}

// The shape's preconditions from the kernel (e.g. maxpool's even dims) hold.
void check_preconditions(const TomlReader& r, const toml::node& at, const Shape& s,
                         const ir::Kernel& k) {
  auto env = shape_env(s);
  for (const auto& p : k.preconditions) {
    std::optional<bool> ok = p.holds(env);
    if (!ok || !*ok)
      fail(r.at(at), "shape {} does not fit kernel '{}': it needs {} ({}{}), but {}", shape_text(s),
           k.name, p.str(), p.what, p.loc.known() ? ", " + format_loc(p.loc) : "", p.values(env));
  }
}

std::vector<Shape> parse_shapes(const TomlReader& r, const toml::table& t, const ir::Kernel& k,
                                const SourceLoc& loc) {
  const toml::node* n = t.get("shapes");
  if (!n) {
    if (k.dims.empty()) return {Shape{}};
    fail(loc, "[[kernel]] '{}' needs 'shapes', like shapes = {{ {} = [1024], ... }} ({})", k.name,
         k.dims[0], dims_note(k));
  }
  if (const toml::table* grid = n->as_table()) {
    std::vector<Shape> out = expand_grid(r, *grid, k);
    for (const auto& s : out) check_preconditions(r, *n, s, k);
    return out;
  }
  if (!n->is_array())
    fail(r.at(*n),
         "'shapes' must be a grid table like {{ M = [1024, 2048] }} or a list of tables like "
         "[{{ M = 1024 }}], not {}",
         toml_type_name(*n));
  std::vector<Shape> out;
  std::set<Shape> seen;
  for (const toml::node& e : r.list(*n, "shapes", "[{ ... }]")) {
    const toml::table* item = e.as_table();
    if (!item)
      fail(r.at(e), "each entry of 'shapes' must be a table like {{ M = 1024, ... }}, not {}",
           toml_type_name(e));
    check_dims(r, *item, k);
    Shape s;
    for (const auto& d : k.dims) s.emplace_back(d, dim_size(r, *item->get(d), d, k));
    if (!seen.insert(s).second) fail(r.at(e), "shape {} is listed twice", shape_text(s));
    check_preconditions(r, e, s, k);
    out.push_back(std::move(s));
  }
  if (static_cast<std::int64_t>(out.size()) > kMaxShapesPerKernel)
    fail(r.at(*n), "more than {} shapes; split the kernel into several [[kernel]] entries",
         kMaxShapesPerKernel);
  return out;
}

std::string read_kernel_file(const TomlReader& r, const toml::node& at, const std::string& rel,
                             const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    fail(r.at(at),
         "kernel file '{}' does not exist (looked for '{}'); paths are relative to the job file",
         rel, path);
  try {
    return read_text_file(path);
  } catch (const UserError& e) {
    if (e.loc().known()) throw;
    std::string m = e.message();
    if (m.rfind("error: ", 0) == 0) m = m.substr(7);
    fail(r.at(at), "kernel file '{}': {}", rel, m);
  }
}

const ir::Kernel& pick_kernel(const TomlReader& r, const toml::table& t, const ir::Module& m,
                              const std::string& rel, const SourceLoc& loc) {
  std::vector<std::string> names;
  for (const auto& k : m.kernels) names.push_back(k.name);
  const toml::node* n = t.get("name");
  if (!n) {
    if (m.kernels.size() == 1) return m.kernels[0];
    fail(loc, "'{}' defines {} kernels ({}); choose one with name = \"{}\"", rel, names.size(),
         fmt::join(names, ", "), names[0]);
  }
  std::string name = r.string(*n, "name");
  for (const auto& k : m.kernels)
    if (k.name == name) return k;
  fail(r.at(*n), "no kernel '{}' in '{}' (its kernels: {}){}", name, rel, fmt::join(names, ", "),
       did_you_mean(name, names));
}

ir::DType parse_kernel_dtype(const TomlReader& r, const toml::table& t) {
  const toml::node* n = t.get("dtype");
  if (!n) return ir::DType::F32;
  std::string s = r.string(*n, "dtype");
  std::optional<ir::DType> d = ir::parse_dtype(s);
  static const std::vector<std::string> names = {"f32", "bf16", "f16", "f8"};
  if (!d)
    fail(r.at(*n), "unknown dtype '{}' (dtypes: {}){}", s, fmt::join(names, ", "),
         did_you_mean(s, names));
  return *d;
}

JobKernel parse_kernel(const TomlReader& r, const toml::table& t, const fs::path& dir) {
  r.check_keys(t, {"file", "name", "label", "dtype", "shapes"}, "[[kernel]]");
  JobKernel jk;
  jk.loc = r.at(t);
  const toml::node* file = t.get("file");
  if (!file)
    fail(jk.loc, "[[kernel]] needs 'file', the kernel's .py file (relative to the job file)");
  std::string rel = r.string(*file, "file");
  jk.file = resolve(dir, rel);
  jk.source = read_kernel_file(r, *file, rel, jk.file);
  ir::Module m = ir::parse_module(jk.source, jk.file, sem::OpTable::builtin());
  const ir::Kernel& k = pick_kernel(r, t, m, rel, jk.loc);
  jk.name = k.name;
  jk.label = k.name;
  if (const toml::node* l = t.get("label")) {
    jk.label = r.string(*l, "label");
    if (!valid_name(jk.label, "/:"))
      fail(r.at(*l),
           "label '{}' must start with a letter or digit and use only letters, digits and '-_./:'",
           jk.label);
  }
  jk.dtype = parse_kernel_dtype(r, t);
  jk.shapes = parse_shapes(r, t, k, jk.loc);
  return jk;
}

std::vector<JobKernel> parse_kernels(const TomlReader& r, const toml::table& doc,
                                     const fs::path& dir) {
  const toml::node* n = doc.get("kernel");
  if (!n) fail(r.at(doc.source()), "no [[kernel]] tables: a job sweeps at least one kernel");
  if (!n->is_array_of_tables() || n->as_array()->empty())
    fail(r.at(*n), "'kernel' must be a list of tables, written [[kernel]], not {}",
         toml_type_name(*n));
  std::vector<JobKernel> out;
  for (const toml::node& e : *n->as_array()) {
    JobKernel k = parse_kernel(r, *e.as_table(), dir);
    for (const auto& o : out) {
      if (o.label != k.label || o.dtype != k.dtype) continue;
      if (o.file == k.file && o.name == k.name)
        fail(k.loc,
             "kernel '{}' ({}) is already in this job at line {}; merge their shapes into one "
             "[[kernel]]",
             k.name, ir::dtype_name(k.dtype), o.loc.line);
      fail(k.loc,
           "another kernel labelled '{}' ({}) is in this job at line {}; give one of them a "
           "different "
           "label = \"...\"",
           k.label, ir::dtype_name(k.dtype), o.loc.line);
    }
    out.push_back(std::move(k));
  }
  return out;
}

// ---- [search], [mesh], [output] ----

std::int64_t parse_keep(const TomlReader& r, const toml::node& n) {
  std::string s = r.string(n, "keep");
  if (s == "all") return kKeepAll;
  const std::string prefix = "top:";
  std::string digits = s.rfind(prefix, 0) == 0 ? s.substr(prefix.size()) : "";
  bool ok = !digits.empty() && digits.size() <= 9 &&
            std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
  std::int64_t v = ok ? std::stoll(digits) : 0;
  if (!ok || v < 1)
    fail(r.at(n), "'keep' must be \"all\" or \"top:N\" with N at least 1, got \"{}\"", s);
  return v;
}

std::vector<int> parse_bufs(const TomlReader& r, const toml::node& n) {
  std::vector<int> out;
  for (const toml::node& e : r.list(n, "bufs", "[1, 2]")) {
    int b = static_cast<int>(r.integer(e, "bufs", 1, 8));
    if (std::find(out.begin(), out.end(), b) != out.end())
      fail(r.at(e), "'bufs' lists {} twice", b);
    out.push_back(b);
  }
  return out;
}

// [search] cores: 1 .. the NeuronCores per chip of every target of the job.
int parse_cores(const TomlReader& r, const toml::node& n, const std::vector<std::string>& targets) {
  int cores = static_cast<int>(r.integer(n, "cores", 1, 64));
  for (const auto& name : targets) {
    const target::Target& t = target::builtin_target(name);
    if (cores > t.chip.neuron_cores)
      fail(
          r.at(n),
          "'cores' = {} is more than the {} NeuronCores of a {} chip; give at most {} (or sweep {} "
          "in a job of its own)",
          cores, t.chip.neuron_cores, name, t.chip.neuron_cores, name);
  }
  return cores;
}

Search parse_search(const TomlReader& r, const toml::table& doc,
                    const std::vector<std::string>& targets) {
  Search s;
  const toml::table* t = r.table(doc, "search");
  if (!t) return s;
  r.check_keys(
      *t,
      {"max_block", "isa_depth", "keep", "ablations", "max_lowerings", "bufs", "check_samples",
       "unit_size", "max_section_candidates", "engines", "cores", "prune"},
      "[search]");
  if (auto* n = t->get("max_block"))
    s.max_block = static_cast<int>(r.integer(*n, "max_block", 1, 64));
  if (auto* n = t->get("isa_depth"))
    s.isa_depth = static_cast<int>(r.integer(*n, "isa_depth", 1, 3));
  if (auto* n = t->get("keep")) s.keep_top = parse_keep(r, *n);
  if (auto* n = t->get("ablations")) s.ablations = r.boolean(*n, "ablations");
  if (auto* n = t->get("prune")) s.prune = r.boolean(*n, "prune");
  if (auto* n = t->get("max_lowerings"))
    s.max_lowerings = static_cast<int>(r.integer(*n, "max_lowerings", 1, 64));
  if (auto* n = t->get("bufs")) s.bufs = parse_bufs(r, *n);
  if (auto* n = t->get("check_samples"))
    s.check_samples = r.integer(*n, "check_samples", 0, 1000000);
  if (auto* n = t->get("unit_size")) s.unit_size = r.integer(*n, "unit_size", 1, 1 << 20);
  if (auto* n = t->get("max_section_candidates"))
    s.max_section_candidates = r.integer(*n, "max_section_candidates", 0, std::int64_t{1} << 40);
  if (auto* n = t->get("engines")) {
    const std::vector<std::string> kinds = {"policy", "per-op"};
    std::string v = r.string(*n, "engines");
    if (std::find(kinds.begin(), kinds.end(), v) == kinds.end())
      fail(r.at(*n), "unknown engines '{}' (choices: policy, per-op){}", v, did_you_mean(v, kinds));
    s.engines_per_op = v == "per-op";
  }
  if (auto* n = t->get("cores")) s.cores = parse_cores(r, *n, targets);
  return s;
}

// "4", "2x2": positive integers joined by 'x'; nullopt when malformed.
std::optional<MeshShape> parse_mesh_shape(const std::string& s) {
  MeshShape m;
  std::size_t i = 0;
  while (true) {
    std::size_t j = i;
    while (j < s.size() && s[j] >= '0' && s[j] <= '9') ++j;
    if (j == i || j - i > 6) return std::nullopt;
    int v = std::stoi(s.substr(i, j - i));
    if (v < 1) return std::nullopt;
    m.sizes.push_back(v);
    if (j == s.size()) break;
    if (s[j] != 'x') return std::nullopt;
    i = j + 1;
  }
  m.text = fmt::format("{}", fmt::join(m.sizes, "x"));
  return m;
}

MeshShape mesh_shape(const TomlReader& r, const toml::node& n) {
  std::string s = r.string(n, "shapes");
  std::optional<MeshShape> m = parse_mesh_shape(s);
  if (!m)
    fail(r.at(n),
         "mesh shape \"{}\" must be positive integers joined by 'x', like \"4\" or \"2x2\"", s);
  if (static_cast<int>(m->sizes.size()) > kMaxMeshAxes)
    fail(r.at(n), "mesh shape \"{}\" has {} axes; at most {} are supported", s, m->sizes.size(),
         kMaxMeshAxes);
  std::int64_t devices = 1;
  for (int d : m->sizes) devices = std::min<std::int64_t>(devices * d, kMaxMeshDevices + 1);
  if (devices > kMaxMeshDevices)
    fail(r.at(n), "mesh shape \"{}\" has more than {} devices", s, kMaxMeshDevices);
  return *m;
}

std::optional<MeshSpec> parse_mesh(const TomlReader& r, const toml::table& doc) {
  const toml::table* t = r.table(doc, "mesh");
  if (!t) return std::nullopt;
  r.check_keys(*t, {"shapes", "topology"}, "[mesh]");
  MeshSpec mesh;
  const toml::node* shapes = t->get("shapes");
  if (!shapes)
    fail(r.at(*t),
         "[mesh] needs 'shapes', the device meshes to score on, like shapes = [\"4\", \"2x2\"]");
  for (const toml::node& e : r.list(*shapes, "shapes", "[\"4\", \"2x2\"]")) {
    MeshShape m = mesh_shape(r, e);
    for (const auto& o : mesh.shapes)
      if (o.text == m.text) fail(r.at(e), "mesh shape \"{}\" is listed twice", m.text);
    mesh.shapes.push_back(std::move(m));
  }
  if (const toml::node* n = t->get("topology")) {
    static const std::vector<std::string> kinds = {"ring", "torus", "switch"};
    mesh.topology = r.string(*n, "topology");
    if (std::find(kinds.begin(), kinds.end(), mesh.topology) == kinds.end())
      fail(r.at(*n), "unknown topology '{}' (topologies: {}){}", mesh.topology,
           fmt::join(kinds, ", "), did_you_mean(mesh.topology, kinds));
  }
  return mesh;
}

// Creates the archive's folder if needed and writes (then removes) a probe file there, so an
// unwritable path fails now rather than after hours of sweeping.
void check_writable(const SourceLoc& loc, const std::string& archive) {
  fs::path p(archive);
  fs::path folder = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  std::error_code ec;
  if (fs::is_directory(p, ec))
    fail(loc, "archive '{}' is a folder; name a file in it, like '{}/job.h5'", archive, archive);
  fs::create_directories(folder, ec);
  if (ec)
    fail(loc, "archive '{}': cannot create its folder '{}': {}", archive, folder.string(),
         ec.message());
  if (!fs::is_directory(folder, ec))
    fail(loc, "archive '{}': '{}' is not a folder", archive, folder.string());
  fs::path probe = folder / fmt::format(".tilesweep-probe-{}", ::getpid());
  std::ofstream out(probe, std::ios::binary);
  bool ok = out && (out << "probe") && out.flush();
  int err = errno;
  out.close();
  fs::remove(probe, ec);
  if (!ok)
    fail(loc, "archive '{}': cannot write in its folder '{}': {}", archive, folder.string(),
         std::strerror(err));
  if (fs::exists(p, ec) && ::access(p.c_str(), W_OK) != 0)
    fail(loc, "archive '{}' exists and is not writable: {}", archive, std::strerror(errno));
}

std::string parse_output(const TomlReader& r, const toml::table& doc, const fs::path& dir,
                         const std::string& name, OutputCheck check) {
  const toml::table* t = r.table(doc, "output");
  std::string archive = resolve(dir, name + ".h5");
  SourceLoc loc = r.at(*doc.get("name"));  // the default archive is named after the job
  if (t) {
    r.check_keys(*t, {"archive"}, "[output]");
    if (const toml::node* n = t->get("archive")) {
      std::string rel = r.string(*n, "archive");
      if (rel.empty())
        fail(r.at(*n), "'archive' is empty; name the HDF5 file, like archive = \"{}.h5\"", name);
      archive = resolve(dir, rel);
      loc = r.at(*n);
    }
  }
  if (check == OutputCheck::Probe) check_writable(loc, archive);
  return archive;
}

}  // namespace

std::string shape_text(const Shape& shape) {
  std::string out;
  for (const auto& [d, v] : shape) out += fmt::format("{}{}={}", out.empty() ? "" : ",", d, v);
  return out;
}

std::map<std::string, std::int64_t> shape_env(const Shape& shape) {
  return {shape.begin(), shape.end()};
}

std::string keep_text(const Search& search) {
  return search.keep_top == kKeepAll ? "all" : fmt::format("top:{}", search.keep_top);
}

int MeshShape::devices() const {
  int n = 1;
  for (int d : sizes) n *= d;
  return n;
}

std::string Job::hash() const {
  std::uint64_t h = hash_bytes(text);
  for (const auto& k : kernels) h = hash_combine(h, hash_bytes(k.source));
  return fmt::format("{:016x}", h);
}

Job parse_job(const std::string& text, const std::string& path, OutputCheck output) {
  check_text(path, text);
  TomlReader r(path);
  toml::table doc = r.parse(text);
  r.check_keys(doc, {"name", "targets", "seed", "kernel", "search", "mesh", "output"}, "the job");
  Job job;
  job.path = path;
  job.text = text;
  job.name = parse_name(r, doc);
  job.targets = parse_targets(r, doc);
  if (const toml::node* n = doc.get("seed"))
    job.seed = static_cast<std::uint64_t>(r.integer(*n, "seed", 0));
  fs::path dir = fs::path(path).parent_path();
  job.kernels = parse_kernels(r, doc, dir);
  job.search = parse_search(r, doc, job.targets);
  job.mesh = parse_mesh(r, doc);
  job.archive = parse_output(r, doc, dir, job.name, output);
  return job;
}

Job load_job(const std::string& path, OutputCheck output) {
  return parse_job(read_text_file(path), path, output);
}

}  // namespace ts::sweep
