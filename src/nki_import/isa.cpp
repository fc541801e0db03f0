// The nisa.* instructions (one program instruction each), and the instruction helpers the nl.*
// functions share: matmul, transpose, copies, element-wise arithmetic and reductions.
#include "translator.h"

namespace ts::nki {

namespace {
using K = Value::Kind;

bool is_memory(const std::vector<Array>& arrays, const Value& v, sem::Memory m) {
  return v.tensor() && arrays[static_cast<std::size_t>(v.array)].memory == m;
}
}  // namespace

Value Translator::matmul(const Value& stationary, const Value& moving, const Value* dst,
                         bool accumulate, const SourceLoc& loc) {
  std::vector<Operand> in = {operand(stationary, loc), operand(moving, loc)};
  if (!dst || is_memory(arrays_, *dst, sem::Memory::Psum))
    return emit("nc_matmul", std::nullopt, in, {}, dst, ir::DType::F32, accumulate, loc);
  Value psum = emit("nc_matmul", std::nullopt, in, {}, nullptr, ir::DType::F32, false, loc);
  return copy_into(psum, dst, std::nullopt, loc);
}

Value Translator::transpose(const Value& x, std::optional<sem::Engine> engine, const Value* dst,
                            const SourceLoc& loc) {
  Operand in = operand(x, loc);
  if (engine == sem::Engine::Vector)
    return emit("nc_transpose_dve", engine, {in}, {}, dst, std::nullopt, false, loc);
  if (dst && is_memory(arrays_, *dst, sem::Memory::Psum))
    return emit("nc_transpose_pe", engine, {in}, {}, dst, std::nullopt, false, loc);
  Value psum = emit("nc_transpose_pe", engine, {in}, {}, nullptr, std::nullopt, false, loc);
  return copy_into(psum, dst, builder_.buffer(in.buffer).dtype, loc);
}

// `dst = src` for tiles: a DMA when one side is in HBM, a memset for a number, else tensor_copy.
Value Translator::copy_into(const Value& src, const Value* dst, std::optional<ir::DType> dt,
                            const SourceLoc& loc) {
  if (dst && is_memory(arrays_, *dst, sem::Memory::Hbm)) return store(*dst, src, {}, loc);
  if (src.tensor() && is_memory(arrays_, src, sem::Memory::Hbm)) {
    Args a = {{"src", src}};
    return load(a, dst, loc);
  }
  if (src.is_number()) {
    if (!dst) throw UserError(loc, "a number where a tile is needed");
    Operand o = operand(*dst, loc);
    return emit("memset", std::nullopt, {},
                {{"value", src.number()}, {"P", sem::Dim(o.parts)}, {"F", sem::Dim(o.width)}}, dst,
                dt, false, loc);
  }
  if (!src.tensor()) {
    if (!dst) return src;
    throw UserError(loc, fmt::format("cannot assign {} into a tile", describe(src)));
  }
  Operand from = operand(src, loc);
  if (builder_.buffer(from.buffer).memory ==
      sem::Memory::Psum)  // PSUM evacuation: the compiler uses ACT
    return emit("activation", sem::Engine::Scalar, {from, constant(0.0, from.parts, loc)},
                {{"func", std::string("copy")}, {"scale", 1.0}}, dst, dt, false, loc);
  return emit("tensor_copy", std::nullopt, {from}, {}, dst, dt, false, loc);
}

Value Translator::elementwise(const std::string& alu, const Value& a, const Value& b,
                              const Value* dst, std::optional<ir::DType> dt, bool accumulate,
                              const SourceLoc& loc) {
  // A division (nl.divide, `/`): no engine has a divide ALU operator (isa.toml [legality]), so
  // the compiler multiplies by the reciprocal: x / c as x * (1 / c), x / y as x * reciprocal(y).
  if (alu == "div" && b.is_number() && a.tensor())
    return elementwise("mul", a, Value::real(1.0 / b.number()), dst, dt, accumulate, loc);
  if (alu == "div" && b.tensor() && !(a.is_number() && a.number() == 1.0)) {
    Value r =
        emit("reciprocal", std::nullopt, {operand(b, loc)}, {}, nullptr, std::nullopt, false, loc);
    return a.is_number() ? elementwise("mul", r, a, dst, dt, accumulate, loc)
                         : elementwise("mul", a, r, dst, dt, accumulate, loc);
  }
  bool commutes = alu == "add" || alu == "mul" || alu == "maximum" || alu == "minimum";
  if (a.tensor() && b.tensor()) {
    Operand x = operand(a, loc), y = operand(b, loc);
    if (x.width == y.width)
      return emit("tensor_tensor", std::nullopt, {x, y}, {{"op", alu}}, dst, dt, accumulate, loc);
    if (y.width == 1)
      return emit("tensor_scalar", std::nullopt, {x, y}, {{"op0", alu}}, dst, dt, accumulate, loc);
    if (x.width == 1 && commutes)
      return emit("tensor_scalar", std::nullopt, {y, x}, {{"op0", alu}}, dst, dt, accumulate, loc);
    throw UserError(loc, fmt::format("shape error: {} of a [{}, {}] and a [{}, {}] tile", alu,
                                     x.parts, x.width, y.parts, y.width));
  }
  if (a.tensor() && b.is_number()) {
    Operand x = operand(a, loc);
    return emit("tensor_scalar", std::nullopt, {x, constant(b.number(), x.parts, loc)},
                {{"op0", alu}}, dst, dt, accumulate, loc);
  }
  if (b.tensor() && a.is_number()) {
    Operand y = operand(b, loc);
    if (commutes)
      return emit("tensor_scalar", std::nullopt, {y, constant(a.number(), y.parts, loc)},
                  {{"op0", alu}}, dst, dt, accumulate, loc);
    if (alu == "sub")  // c - y = y * -1 + c
      return emit(
          "tensor_scalar", std::nullopt, {y, constant(-1.0, y.parts, loc)},
          {{"op0", std::string("mul")}, {"op1", std::string("add")}, {"operand1", a.number()}}, dst,
          dt, accumulate, loc);
    if (alu == "div" && a.number() == 1.0)
      return emit("reciprocal", std::nullopt, {y}, {}, dst, dt, accumulate, loc);
  }
  throw UserError(loc,
                  fmt::format("{} of {} and {} is not supported", alu, describe(a), describe(b)));
}

// `t.broadcast_to((P, F))` of a one-partition tile: a partition broadcast runs on the Tensor
// engine (the NKI Mamba tutorial: "partition-dim broadcast often requires a separate instruction
// on TensorE"): a matmul of a [1, P] row of ones by the [1, F] tile, into PSUM.
Value Translator::broadcast_partitions(const Value& x, const Value& shape, const SourceLoc& loc) {
  Operand in = operand(x, loc);
  std::int64_t parts = 0, width = 0;
  if (shape.kind == K::Tuple && shape.items.size() == 2) {
    parts = const_int(shape.items[0], loc, "broadcast_to's partitions");
    width = const_int(shape.items[1], loc, "broadcast_to's free size");
  }
  if (in.parts != 1 || width != in.width || parts < 1)
    throw UserError(loc, fmt::format("broadcast_to takes a [1, F] tile to (P, F); this is a [{}, "
                                     "{}] tile",
                                     in.parts, in.width));
  return emit("nc_matmul", std::nullopt, {ones_row(parts, loc), in}, {}, nullptr, ir::DType::F32,
              false, loc);
}

Value Translator::reduce(const std::string& op, const Args& a, const Value* dst,
                         const SourceLoc& loc) {
  auto x = a.find("x");
  if (x == a.end() || !x->second.tensor()) throw UserError(loc, "a reduction takes a tile");
  const Array& arr = arrays_[static_cast<std::size_t>(x->second.array)];
  auto ax = a.find("axis");
  std::vector<Value> axes = ax == a.end()                 ? std::vector<Value>{}
                            : ax->second.kind == K::Tuple ? ax->second.items
                                                          : std::vector<Value>{ax->second};
  // A view of an array's tile (`t[i, j]`) has the block dims indexed away: its axes count from
  // the partition dim.
  const bool view = x->second.kind == K::View;
  const std::int64_t rank = static_cast<std::int64_t>(arr.shape.size()) - (view ? arr.par : 0);
  const std::int64_t par = view ? 0 : arr.par;
  for (const Value& v : axes) {
    std::int64_t d = const_int(v, loc, "an axis");
    if (d < 0) d += rank;
    if (d == par)
      throw UserError(loc,
                      "a reduction across partitions is not supported (reduce along the free dims, "
                      "or transpose first)");
  }
  if (axes.empty() || static_cast<std::int64_t>(axes.size()) + 1 < rank)
    throw UserError(loc, "reduce along all free dims of the tile (axis=1 for a 2-D tile)");
  std::string rop = op == "sum" || op == "mean" ? "add" : op;
  Operand in = operand(x->second, loc);
  std::optional<ir::DType> dt = dtype_arg(a, "dtype", loc);
  if (op != "mean")
    return emit("tensor_reduce", std::nullopt, {in}, {{"op", rop}}, dst, dt, false, loc);
  Value sum = emit("tensor_reduce", std::nullopt, {in}, {{"op", rop}}, nullptr, dt, false, loc);
  return elementwise("mul", sum, Value::real(1.0 / static_cast<double>(in.width)), dst, dt, false,
                     loc);
}

Value Translator::call_isa(const std::string& fn, const Expr& e, const Value* dst,
                           bool accumulate) {
  const SourceLoc& loc = e.loc;
  auto with_dst = [&](Args& a) -> const Value* {
    auto it = a.find("dst");
    return it != a.end() && it->second.kind != K::None ? &it->second : dst;
  };
  if (fn == "nc_matmul") {
    Args a =
        bind_args(e,
                  {"stationary", "moving", "is_stationary_onezero", "is_moving_onezero",
                   "is_transpose", "tile_position", "tile_size", "mask", "accumulate", "perf_mode"},
                  true);
    bool acc = accumulate || (a.count("accumulate") && a["accumulate"].kind != K::None &&
                              truth(a["accumulate"], loc));
    if (a.count("is_transpose") && truth(a["is_transpose"], loc))
      throw UserError(loc, "nc_matmul(is_transpose=True) is not supported");
    return matmul(a["stationary"], a["moving"], with_dst(a), acc, loc);
  }
  if (fn == "nc_transpose") {
    Args a = bind_args(e, {"data", "mask", "dtype", "engine"}, true);
    std::optional<sem::Engine> eng = a.count("engine") ? engine_of(a["engine"], loc) : std::nullopt;
    return transpose(a["data"], eng.value_or(sem::Engine::Tensor), with_dst(a), loc);
  }
  if (fn == "activation" || fn == "activation_reduce") {
    Args a = bind_args(
        e,
        {"op", "data", "bias", "scale", "reduce_op", "reduce_res", "reduce_cmd", "mask", "dtype"},
        true);
    Operand x = operand(a["data"], loc);
    Operand bias = a.count("bias") && a["bias"].kind != K::None ? operand(a["bias"], loc)
                                                                : constant(0.0, x.parts, loc);
    if (a.count("scale") && a["scale"].tensor()) {  // one scale per partition: same cost (S1, A1)
      if (a.count("reduce_res") && a["reduce_res"].kind != K::None)
        throw UserError(loc, "activation with a tile scale and reduce_res is not supported");
      return emit("activation_scale_tile", sem::Engine::Scalar, {x, operand(a["scale"], loc), bias},
                  {{"func", func_name(a["op"], loc)}}, with_dst(a), dtype_arg(a, "dtype", loc),
                  accumulate, loc);
    }
    double scale = a.count("scale") ? number(a["scale"], loc, "activation's scale") : 1.0;
    sem::AttrMap attrs = {{"func", func_name(a["op"], loc)}, {"scale", scale}};
    Value r = emit("activation", sem::Engine::Scalar, {x, bias}, attrs, with_dst(a),
                   dtype_arg(a, "dtype", loc), accumulate, loc);
    if (a.count("reduce_res") && a["reduce_res"].kind != K::None) {
      if (a.count("reduce_op") && alu_name(a["reduce_op"], loc) != "add")
        throw UserError(loc, "activation reduces with nl.add only");
      emit("activation_reduce", sem::Engine::Scalar, {x, bias}, attrs, &a["reduce_res"],
           std::nullopt, false, loc);
    }
    return r;
  }
  if (fn == "tensor_tensor") {
    Args a = bind_args(e, {"data1", "data2", "op", "engine", "mask", "dtype"}, true);
    std::optional<sem::Engine> eng = a.count("engine") ? engine_of(a["engine"], loc) : std::nullopt;
    return emit("tensor_tensor", eng, {operand(a["data1"], loc), operand(a["data2"], loc)},
                {{"op", alu_name(a["op"], loc)}}, with_dst(a), dtype_arg(a, "dtype", loc),
                accumulate, loc);
  }
  if (fn == "tensor_scalar") {
    Args a = bind_args(e,
                       {"data", "op0", "operand0", "reverse0", "op1", "operand1", "reverse1",
                        "engine", "mask", "dtype"},
                       true);
    auto commutes = [&](const char* op) {
      if (!a.count(op) || a[op].kind == K::None) return true;
      std::string n = alu_name(a[op], loc);
      return n == "add" || n == "mul" || n == "maximum" || n == "minimum";
    };
    if ((a.count("reverse0") && truth(a["reverse0"], loc) && !commutes("op0")) ||
        (a.count("reverse1") && truth(a["reverse1"], loc) && !commutes("op1")))
      throw UserError(loc,
                      "tensor_scalar with a reversed non-commutative operator is not supported");
    Operand x = operand(a["data"], loc);
    Operand s0 = a["operand0"].tensor()
                     ? operand(a["operand0"], loc)
                     : constant(number(a["operand0"], loc, "operand0"), x.parts, loc);
    sem::AttrMap attrs = {{"op0", alu_name(a["op0"], loc)}};
    if (a.count("op1") && a["op1"].kind != K::None) {
      attrs["op1"] = alu_name(a["op1"], loc);
      attrs["operand1"] = number(a["operand1"], loc, "operand1 (a tile operand1 is not supported)");
    }
    std::optional<sem::Engine> eng = a.count("engine") ? engine_of(a["engine"], loc) : std::nullopt;
    // The compiler's choice (no engine, unknown_engine): x * c and x + b run on the Scalar engine
    // as activation(copy) with scale c or bias b (src/nki_import/README.md: the NKIBench profiles).
    std::string op0 = std::get<std::string>(attrs["op0"]);
    bool one_op = !attrs.count("op1"), constant0 = !a["operand0"].tensor();
    if (!eng && one_op && (op0 == "add" || (op0 == "mul" && constant0))) {
      double scale = op0 == "mul" ? number(a["operand0"], loc, "operand0") : 1.0;
      Operand bias = op0 == "add" ? s0 : constant(0.0, x.parts, loc);
      return emit("activation", sem::Engine::Scalar, {x, bias},
                  {{"func", std::string("copy")}, {"scale", scale}}, with_dst(a),
                  dtype_arg(a, "dtype", loc), accumulate, loc);
    }
    return emit("tensor_scalar", eng, {x, s0}, attrs, with_dst(a), dtype_arg(a, "dtype", loc),
                accumulate, loc);
  }
  if (fn == "tensor_tensor_scan") {
    Args a = bind_args(e, {"data0", "data1", "initial", "op0", "op1", "mask", "dtype"}, true);
    bool linear = a.count("op0") && alu_name(a["op0"], loc) == "mul" && a.count("op1") &&
                  alu_name(a["op1"], loc) == "add";
    bool zero = a.count("initial") && a["initial"].is_number() && a["initial"].number() == 0.0;
    // A per-partition start (a [P, 1] tile): the scan from that start (a chunk of a longer one).
    bool from = a.count("initial") && a["initial"].tensor();
    if (!linear || !(zero || from))
      throw UserError(loc,
                      "tensor_tensor_scan is supported as op0=multiply, op1=add with initial=0 or "
                      "a [P, 1] tile only");
    std::vector<Operand> ins = {operand(a["data0"], loc), operand(a["data1"], loc)};
    if (from) ins.push_back(operand(a["initial"], loc));
    return emit(from ? "tensor_tensor_scan_from" : "tensor_tensor_scan", std::nullopt, ins, {},
                with_dst(a), dtype_arg(a, "dtype", loc), accumulate, loc);
  }
  if (fn == "tensor_reduce") {
    Args a = bind_args(e, {"op", "data", "axis", "negate", "keepdims", "mask", "dtype"}, true);
    Args r = {{"x", a["data"]}, {"axis", a["axis"]}};
    if (a.count("dtype")) r["dtype"] = a["dtype"];
    std::string op = alu_name(a["op"], loc);
    return reduce(op == "add" ? "sum" : op, r, with_dst(a), loc);
  }
  if (fn == "tensor_copy") {
    Args a = bind_args(e, {"src", "engine", "mask", "dtype"}, true);
    std::optional<sem::Engine> eng = a.count("engine") ? engine_of(a["engine"], loc) : std::nullopt;
    return emit("tensor_copy", eng, {operand(a["src"], loc)}, {}, with_dst(a),
                dtype_arg(a, "dtype", loc), false, loc);
  }
  if (fn == "reciprocal") {
    Args a = bind_args(e, {"data", "mask", "dtype"}, true);
    return emit("reciprocal", std::nullopt, {operand(a["data"], loc)}, {}, with_dst(a),
                dtype_arg(a, "dtype", loc), false, loc);
  }
  if (fn == "dma_copy") {
    Args a = bind_args(e, {"dst", "src", "mask", "dge_mode"}, false);
    return copy_into(a["src"], &a["dst"], std::nullopt, loc);
  }
  if (fn == "memset") {
    Args a = bind_args(e, {"shape", "value", "dtype", "mask", "engine"}, true);
    const Value* d = with_dst(a);
    Value made = d ? *d : allocate("ndarray", a, loc);
    return copy_into(Value::real(number(a["value"], loc, "memset's value")), &made,
                     dtype_arg(a, "dtype", loc), loc);
  }
  throw UserError(loc, fmt::format("nisa.{} is not supported by tilesweep's NKI importer", fn));
}

}  // namespace ts::nki
