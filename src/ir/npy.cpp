#include "tilesweep/ir/npy.h"

#include <cstring>
#include <fstream>
#include <iterator>

#include "tilesweep/base/error.h"

namespace ts::ir {

namespace {

constexpr char kMagic[] = "\x93NUMPY";

[[noreturn]] void bad(const std::string& path, const std::string& what) {
  throw UserError(fmt::format("error: '{}' is not a usable .npy file: {}", path, what));
}

// Extracts the value text of `'key': value` from the header dict.
std::string dict_value(const std::string& header, const std::string& key, const std::string& path) {
  std::size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) bad(path, "header has no '" + key + "'");
  std::size_t colon = header.find(':', k);
  if (colon == std::string::npos) bad(path, "malformed header");
  std::size_t b = header.find_first_not_of(' ', colon + 1);
  std::size_t e = b;
  if (header[b] == '(')
    e = header.find(')', b) + 1;
  else if (header[b] == '\'')
    e = header.find('\'', b + 1) + 1;
  else
    e = header.find_first_of(",}", b);
  if (b == std::string::npos || e == std::string::npos || e <= b) bad(path, "malformed header");
  return header.substr(b, e - b);
}

}  // namespace

Tensor read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(fmt::format("error: cannot open '{}': {}", path, std::strerror(errno)));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < 10 || bytes.compare(0, 6, kMagic, 6) != 0)
    bad(path, "missing the \\x93NUMPY magic");
  int major = static_cast<unsigned char>(bytes[6]);
  std::size_t header_len, offset;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) bad(path, "truncated header");
    header_len = 0;
    for (int i = 0; i < 4; ++i)
      header_len |= static_cast<std::size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    offset = 12;
  } else {
    bad(path, fmt::format("unsupported format version {}", major));
  }
  if (bytes.size() < offset + header_len) bad(path, "truncated header");
  std::string header = bytes.substr(offset, header_len);
  std::string descr = dict_value(header, "descr", path);
  std::string order = dict_value(header, "fortran_order", path);
  std::string shape_text = dict_value(header, "shape", path);
  int width;
  if (descr == "'<f8'")
    width = 8;
  else if (descr == "'<f4'")
    width = 4;
  else
    bad(path, "dtype " + descr + " (expected '<f4' or '<f8'; convert with .astype(np.float64))");
  if (order != "False") bad(path, "Fortran order (save a C-ordered array: np.ascontiguousarray)");
  Tensor t;
  t.shape.clear();
  std::string inner = shape_text.substr(1, shape_text.size() - 2);
  std::size_t p = 0;
  while (p < inner.size()) {
    std::size_t q = inner.find(',', p);
    std::string part = inner.substr(p, q == std::string::npos ? std::string::npos : q - p);
    part.erase(0, part.find_first_not_of(' '));
    if (!part.empty()) {
      try {
        long long d = std::stoll(part);
        if (d < 0) bad(path, "negative dim in shape");
        t.shape.push_back(d);
      } catch (const std::logic_error&) {
        bad(path, "malformed shape " + shape_text);
      }
    }
    if (q == std::string::npos) break;
    p = q + 1;
  }
  std::int64_t n = numel(t.shape);
  std::size_t data_off = offset + header_len;
  if (bytes.size() - data_off < static_cast<std::size_t>(n) * width)
    bad(path, fmt::format("truncated data: shape {} needs {} bytes, file has {}", shape_text,
                          n * width, bytes.size() - data_off));
  t.data.resize(static_cast<std::size_t>(n));
  const char* d = bytes.data() + data_off;
  for (std::int64_t i = 0; i < n; ++i) {
    if (width == 8) {
      double v;
      std::memcpy(&v, d + i * 8, 8);
      t.data[i] = v;
    } else {
      float v;
      std::memcpy(&v, d + i * 4, 4);
      t.data[i] = v;
    }
  }
  return t;
}

void write_npy(const std::string& path, const Tensor& t, NpyType type) {
  // NumPy's spelling: (), (n,), (a, b).
  std::string pretty = "(";
  for (std::size_t i = 0; i < t.shape.size(); ++i) {
    pretty += std::to_string(t.shape[i]);
    if (t.shape.size() == 1)
      pretty += ",";
    else if (i + 1 < t.shape.size())
      pretty += ", ";
  }
  pretty += ")";
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                                   type == NpyType::F64 ? "<f8" : "<f4", pretty);
  std::size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic, 6);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  for (double v : t.data) {
    if (type == NpyType::F64) {
      out.append(reinterpret_cast<const char*>(&v), 8);
    } else {
      float f = static_cast<float>(v);
      out.append(reinterpret_cast<const char*>(&f), 4);
    }
  }
  std::ofstream f(path, std::ios::binary);
  if (!f) throw UserError(fmt::format("error: cannot write '{}': {}", path, std::strerror(errno)));
  f.write(out.data(), static_cast<std::streamsize>(out.size()));
  if (!f) throw UserError(fmt::format("error: cannot write '{}'", path));
}

}  // namespace ts::ir
