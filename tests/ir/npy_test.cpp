#include "tilesweep/ir/npy.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "tilesweep/base/error.h"

namespace ts::ir {
namespace {

std::string tmp(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("ts_npy_" + name)).string();
}

TEST(Npy, RoundTrip) {
  for (auto type : {NpyType::F64, NpyType::F32}) {
    for (std::vector<std::int64_t> shape : {std::vector<std::int64_t>{}, {5}, {2, 3}, {2, 1, 4}}) {
      Tensor t(shape);
      for (std::size_t i = 0; i < t.data.size(); ++i) t.data[i] = 0.25 * static_cast<double>(i) - 1;
      std::string p = tmp("rt.npy");
      write_npy(p, t, type);
      Tensor r = read_npy(p);
      EXPECT_EQ(r.shape, t.shape);
      EXPECT_EQ(r.data, t.data);
    }
  }
}

TEST(Npy, HeaderIsNumpyCompatible) {
  Tensor t({2, 3});
  std::string p = tmp("hdr.npy");
  write_npy(p, t, NpyType::F32);
  std::ifstream in(p, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_NE(bytes.find("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"),
            std::string::npos);
  EXPECT_EQ((bytes.size() - 6 * 4) % 64, 0u);
}

TEST(Npy, BadFilesAreUserErrors) {
  auto error = [](const std::string& content) {
    std::string p = tmp("bad.npy");
    std::ofstream(p, std::ios::binary) << content;
    try {
      read_npy(p);
    } catch (const UserError& e) {
      std::string w = e.what();
      return w.substr(w.find("file: ") + 6);
    }
    return std::string("no error");
  };
  std::string hdr = "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }";
  std::string v1 = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(hdr.size()) + '\0' + hdr;
  EXPECT_EQ(error("hello"), "missing the \\x93NUMPY magic");
  EXPECT_EQ(error(v1), "dtype '<i8' (expected '<f4' or '<f8'; convert with .astype(np.float64))");
  std::string ok = "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }";
  std::string trunc =
      std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(ok.size()) + '\0' + ok + "abc";
  EXPECT_EQ(error(trunc), "truncated data: shape (2,) needs 16 bytes, file has 3");
  EXPECT_THROW(read_npy(tmp("does_not_exist.npy")), UserError);
}

}  // namespace
}  // namespace ts::ir
