#include "tilesweep/mesh/sharding.h"

#include <gtest/gtest.h>

#include "tilesweep/ir/frontend.h"

namespace ts::mesh {
namespace {

ir::Kernel kernel(const std::string& name) {
  ir::Module m = ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/axon/" + name + ".py",
                                 sem::OpTable::builtin());
  return m.kernel("");
}

std::string roles(const ir::Kernel& k) {
  std::string s;
  for (const DimInfo& d : classify_dims(k))
    s += (s.empty() ? "" : " ") + d.dim + ":" + dim_role_name(d.role);
  return s;
}

std::vector<std::string> texts(const std::vector<ShardingChoice>& cs) {
  std::vector<std::string> out;
  for (const ShardingChoice& c : cs) out.push_back(c.text);
  return out;
}

const ShardingChoice& find(const std::vector<ShardingChoice>& cs, const std::string& text) {
  for (const ShardingChoice& c : cs)
    if (c.text == text) return c;
  throw std::runtime_error("no choice " + text);
}

TEST(DimRoles, AxonKernels) {
  struct Case {
    const char* kernel;
    const char* roles;
  } cases[] = {
      {"matmul", "M:parallel K:contracted N:parallel"},
      {"transpose_matmul", "K:contracted M:parallel N:parallel"},
      {"qkv_projection", "M:parallel K:contracted N:parallel"},
      {"rmsnorm_matmul", "M:parallel K:fixed N:parallel"},
      {"mm_mm_silu_mul", "M:parallel K:fixed N:parallel"},
      {"silu_mlp", "M:parallel K:fixed N:contracted"},
      {"matmul_add_rmsnorm", "M:parallel K:fixed N:fixed"},
      {"softmax", "M:parallel N:fixed"},
      {"softmax_matmul", "M:parallel K:fixed N:parallel"},
      {"rmsnorm", "M:parallel N:fixed"},
      {"cumsum", "M:parallel N:fixed"},
      {"rope", "M:parallel N:fixed"},
      {"maxpool", "M:fixed N:fixed"},
      {"gqa", "M:parallel N:fixed"},
      {"multiply", "M:parallel N:parallel"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.kernel);
    EXPECT_EQ(roles(kernel(c.kernel)), c.roles);
  }
}

TEST(DimRoles, ReasonsForFixedDims) {
  std::vector<DimInfo> rms = classify_dims(kernel("rmsnorm_matmul"));
  EXPECT_EQ(rms[1].dim, "K");
  EXPECT_EQ(rms[1].reason, "its size is used as a value");  // mean divides by K
  std::vector<DimInfo> mlp = classify_dims(kernel("mm_mm_silu_mul"));
  EXPECT_EQ(mlp[1].reason,
            "'matmul' reduces it and its result feeds other ops (only reductions producing an "
            "output are split)");
  EXPECT_EQ(classify_dims(kernel("maxpool"))[0].reason, "a value has size (M + 1) // 2");
}

TEST(Sharding, MatmulOnFourDevices) {
  ir::Kernel k = kernel("matmul");
  std::vector<ShardingChoice> cs = sharding_choices(k, parse_mesh_shape("4"));
  EXPECT_EQ(texts(cs), (std::vector<std::string>{"replicate", "M:x", "K:x", "K:x+rs", "N:x"}));
  sem::DimEnv env{{"M", 256}, {"K", 512}, {"N", 1024}};
  struct Case {
    const char* text;
    sem::DimEnv local;
    std::vector<CollectiveUse> uses;
    const char* layout;
  } cases[] = {
      {"replicate", env, {}, "RR"},
      {"M:x", {{"M", 64}, {"K", 512}, {"N", 1024}}, {}, "S(x)R"},
      {"N:x", {{"M", 256}, {"K", 512}, {"N", 256}}, {}, "RS(x)"},
      {"K:x",
       {{"M", 256}, {"K", 128}, {"N", 1024}},
       {{Collective::AllReduce, {0}, 256 * 1024 * 4, 0}},
       "RR"},
      {"K:x+rs",
       {{"M", 256}, {"K", 128}, {"N", 1024}},
       {{Collective::ReduceScatter, {0}, 256 * 1024 * 4, 0}},
       "S(x)R"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const ShardingChoice& s = find(cs, c.text);
    EXPECT_EQ(s.local_dims(env), c.local);
    std::vector<CollectiveUse> uses = s.collectives(env);
    ASSERT_EQ(uses.size(), c.uses.size());
    for (std::size_t i = 0; i < uses.size(); ++i) {
      EXPECT_EQ(uses[i].kind, c.uses[i].kind);
      EXPECT_EQ(uses[i].axes, c.uses[i].axes);
      EXPECT_EQ(uses[i].bytes, c.uses[i].bytes);
      EXPECT_EQ(uses[i].output, c.uses[i].output);
    }
    EXPECT_EQ(format_layout(s.output_layouts().at(0)), c.layout);
  }
  std::vector<CollectiveUse> gather = find(cs, "M:x").gathers(env);
  ASSERT_EQ(gather.size(), 1u);
  EXPECT_EQ(gather[0].kind, Collective::AllGather);
  EXPECT_EQ(gather[0].bytes, 256 * 1024 * 4);
  EXPECT_TRUE(find(cs, "replicate").gathers(env).empty());
}

TEST(Sharding, NotDivisibleIsNotOffered) {
  ir::Kernel k = kernel("matmul");
  MeshShape m = parse_mesh_shape("4");
  EXPECT_EQ(
      texts(sharding_choices(k, m, {{"M", 6}, {"K", 512}, {"N", 1024}})),
      (std::vector<std::string>{"replicate", "K:x",
                                "N:x"}));  // M = 6: no M split, and no +rs (its scatter splits M)
  EXPECT_EQ(texts(sharding_choices(k, m, {{"M", 256}, {"K", 10}, {"N", 1026}})),
            (std::vector<std::string>{"replicate", "M:x"}));
  // reduce-scatter splits the output's first dim further: with M = 2 on 2x2, M:x leaves 1 row
  std::vector<std::string> small =
      texts(sharding_choices(k, parse_mesh_shape("2x2"), {{"M", 2}, {"K", 8}, {"N", 8}}));
  auto has = [&](const char* t) { return std::find(small.begin(), small.end(), t) != small.end(); };
  EXPECT_TRUE(has("M:x,K:y"));
  EXPECT_FALSE(has("M:x,K:y+rs"));
  EXPECT_TRUE(has("K:y+rs"));
  EXPECT_FALSE(has("M:x*y"));
  EXPECT_THROW(find(sharding_choices(k, m), "M:x").local_dims({{"K", 4}}), UserError);
}

TEST(Sharding, RmsnormMatmulKeepsKWhole) {
  std::vector<ShardingChoice> cs =
      sharding_choices(kernel("rmsnorm_matmul"), parse_mesh_shape("4"));
  EXPECT_EQ(texts(cs), (std::vector<std::string>{"replicate", "M:x", "N:x"}));
  for (const ShardingChoice& c : cs) EXPECT_TRUE(c.axes_of("K").empty());
}

TEST(Sharding, TwoAxisMesh) {
  ir::Kernel k = kernel("matmul");
  std::vector<ShardingChoice> cs = sharding_choices(k, parse_mesh_shape("2x2"));
  EXPECT_EQ(cs.size(), 16u + 7u);  // 4 options per axis; the 7 with K also come as +rs
  sem::DimEnv env{{"M", 256}, {"K", 512}, {"N", 1024}};
  const ShardingChoice& mn = find(cs, "M:x,N:y");
  EXPECT_EQ(mn.local_dims(env), (sem::DimEnv{{"M", 128}, {"K", 512}, {"N", 512}}));
  EXPECT_TRUE(mn.collectives(env).empty());
  EXPECT_EQ(format_layout(mn.output_layouts()[0]), "S(x)S(y)");
  ASSERT_EQ(mn.gathers(env).size(), 1u);
  EXPECT_EQ(mn.gathers(env)[0].axes, (std::vector<int>{0, 1}));

  const ShardingChoice& kk = find(cs, "K:x*y");
  EXPECT_EQ(kk.local_dims(env)->at("K"), 128);
  ASSERT_EQ(kk.collectives(env).size(), 1u);
  EXPECT_EQ(kk.collectives(env)[0].axes, (std::vector<int>{0, 1}));
  EXPECT_EQ(kk.collectives(env)[0].bytes, 256 * 1024 * 4);

  const ShardingChoice& mk = find(cs, "M:x,K:y");
  ASSERT_EQ(mk.collectives(env).size(), 1u);
  EXPECT_EQ(mk.collectives(env)[0].axes, (std::vector<int>{1}));
  EXPECT_EQ(mk.collectives(env)[0].bytes, 128 * 1024 * 4);
  EXPECT_EQ(format_layout(find(cs, "M:x,K:y+rs").output_layouts()[0]), "S(x*y)R");
}

TEST(Sharding, MultiOutputAndMlp) {
  sem::DimEnv env{{"M", 128}, {"K", 256}, {"N", 512}};
  std::vector<CollectiveUse> qkv =
      find(sharding_choices(kernel("qkv_projection"), parse_mesh_shape("2")), "K:x")
          .collectives(env);
  ASSERT_EQ(qkv.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(qkv[i].output, i);
    EXPECT_EQ(qkv[i].bytes, 128 * 512 * 4);
  }
  // silu_mlp split over its hidden dim N (tensor parallel MLP): one all-reduce of M x K.
  std::vector<CollectiveUse> mlp =
      find(sharding_choices(kernel("silu_mlp"), parse_mesh_shape("2")), "N:x").collectives(env);
  ASSERT_EQ(mlp.size(), 1u);
  EXPECT_EQ(mlp[0].kind, Collective::AllReduce);
  EXPECT_EQ(mlp[0].bytes, 128 * 256 * 4);
}

TEST(Sharding, OneDeviceOnlyReplicates) {
  EXPECT_EQ(texts(sharding_choices(kernel("matmul"), parse_mesh_shape("1"))),
            (std::vector<std::string>{"replicate"}));
  EXPECT_EQ(texts(sharding_choices(kernel("matmul"), parse_mesh_shape("1x2"))),
            (std::vector<std::string>{"replicate", "M:y", "K:y", "K:y+rs", "N:y"}));
}

}  // namespace
}  // namespace ts::mesh
