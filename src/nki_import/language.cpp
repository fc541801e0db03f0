// The nl.* functions. Where the compiler chooses the instruction and engine, tilesweep's rule:
//   nl.load / nl.store        dma_copy (DMA queues)
//   nl.matmul                 nc_matmul (Tensor); transpose_x=False first transposes x on the
//                             Tensor engine (nc_transpose_pe into PSUM, tensor_copy to SBUF)
//   nl.transpose              nc_transpose_pe (Tensor) into PSUM
//   nl.copy, tile assignment  from PSUM activation(copy) (Scalar), else tensor_copy (Vector)
//   nl.exp/tanh/... (unary)   activation on the Scalar engine, bias 0
//   nl.add/... tile op tile   tensor_tensor (Vector); tile op [P,1] tile or number: tensor_scalar
//   (Vector) nl.sum/max/min/mean       tensor_reduce (Vector) along the free dims (mean: then x
//   1/n) nl.zeros in SBUF          memset (Vector); in PSUM no instruction: the first += writes
#include <set>

#include "translator.h"

namespace ts::nki {

namespace {
using K = Value::Kind;

const std::set<std::string> kUnary = {"exp",    "log",  "tanh", "sigmoid", "relu",
                                      "gelu",   "silu", "sqrt", "rsqrt",   "reciprocal",
                                      "square", "abs",  "sin"};
const std::map<std::string, std::string> kBinary = {{"add", "add"},         {"subtract", "sub"},
                                                    {"multiply", "mul"},    {"divide", "div"},
                                                    {"maximum", "maximum"}, {"minimum", "minimum"}};
}  // namespace

Value Translator::call_language(const std::string& fn, const Expr& e, const Value* dst,
                                bool accumulate) {
  const SourceLoc& loc = e.loc;
  if (fn == "affine_range" || fn == "sequential_range" || fn == "static_range")
    return make_range(fn, bind_args(e, {"start", "stop", "step"}, false), loc);
  if (fn == "arange") {
    Args a = bind_args(e, {"start", "stop"}, false);
    std::int64_t lo = 0, hi = const_int(a["start"], loc, "nl.arange's bound");
    if (a.count("stop")) lo = hi, hi = const_int(a["stop"], loc, "nl.arange's bound");
    Value v;
    v.kind = K::Index;
    v.idx = Index{Affine{lo, {}}, 0, 1, hi - lo, 1};
    return v;
  }
  if (fn == "par_dim") {
    Value v;
    v.kind = K::ParDim;
    v.a = Affine{const_int(bind_args(e, {"size"}, false)["size"], loc, "nl.par_dim's size"), {}};
    return v;
  }
  if (fn == "ds") {
    Args a = bind_args(e, {"start", "size"}, false);
    Value v;
    v.kind = K::Slice;
    v.items = {a["start"],
               Value::integer(a["start"].a + Affine{const_int(a["size"], loc, "nl.ds's size"), {}}),
               Value::none()};
    return v;
  }
  if (fn == "program_id") return Value::integer(0);
  if (fn == "num_programs") return Value::integer(1);
  if (fn == "device_print") return Value::none();
  if (fn == "ndarray" || fn == "zeros" || fn == "ones" || fn == "full" || fn == "empty") {
    // nl.full(shape, fill_value, dtype, ...): its second positional argument is the value.
    std::vector<std::string> order =
        fn == "full" ? std::vector<std::string>{"shape", "fill_value", "dtype", "buffer"}
                     : std::vector<std::string>{"shape", "dtype", "buffer", "fill_value"};
    Value v = allocate(fn, bind_args(e, order, false), loc);
    return dst ? copy_into(v, dst, std::nullopt, loc) : v;
  }
  if (fn == "load") return load(bind_args(e, {"src", "mask", "dtype"}, false), dst, loc);
  if (fn == "store") {
    Args a = bind_args(e, {"dst", "value", "mask"}, false);
    return store(a["dst"], a["value"], a["mask"].mask, loc);
  }
  if (fn == "matmul") {
    Args a = bind_args(e, {"x", "y", "transpose_x", "mask"}, false);
    Value x = a["x"];
    if (!a.count("transpose_x") || !truth(a["transpose_x"], loc))
      x = transpose(x, sem::Engine::Tensor, nullptr, loc);
    return matmul(x, a["y"], dst, accumulate, loc);
  }
  if (fn == "transpose")
    return transpose(bind_args(e, {"x", "dtype", "mask"}, false)["x"], sem::Engine::Tensor, dst,
                     loc);
  if (fn == "copy") {
    Args a = bind_args(e, {"x", "dtype", "mask"}, false);
    return copy_into(a["x"], dst, dtype_arg(a, "dtype", loc), loc);
  }
  return language_math(fn, e, dst, accumulate);
}

Value Translator::language_math(const std::string& fn, const Expr& e, const Value* dst,
                                bool accumulate) {
  const SourceLoc& loc = e.loc;
  if (kUnary.count(fn)) {
    Args a = bind_args(e, {"x", "dtype", "mask"}, false);
    Operand x = operand(a["x"], loc);
    return emit("activation", sem::Engine::Scalar, {x, constant(0.0, x.parts, loc)},
                {{"func", fn}, {"scale", 1.0}}, dst, dtype_arg(a, "dtype", loc), accumulate, loc);
  }
  if (fn == "negative") {
    Args a = bind_args(e, {"x", "dtype", "mask"}, false);
    return elementwise("mul", a["x"], Value::real(-1.0), dst, dtype_arg(a, "dtype", loc),
                       accumulate, loc);
  }
  auto bin = kBinary.find(fn);
  if (bin != kBinary.end()) {
    Args a = bind_args(e, {"x", "y", "dtype", "mask"}, false);
    return elementwise(bin->second, a["x"], a["y"], dst, dtype_arg(a, "dtype", loc), accumulate,
                       loc);
  }
  if (fn == "sum" || fn == "max" || fn == "min" || fn == "mean")
    return reduce(fn, bind_args(e, {"x", "axis", "dtype", "keepdims", "mask"}, false), dst, loc);
  throw UserError(loc, fmt::format("nl.{} is not supported by tilesweep's NKI importer", fn));
}

Value Translator::allocate(const std::string& fn, const Args& a, const SourceLoc& loc) {
  auto it = a.find("shape");
  if (it == a.end() || it->second.kind != K::Tuple)
    throw UserError(loc, fmt::format("nl.{} needs a shape tuple", fn));
  std::vector<std::int64_t> shape;
  int par = -1;
  for (const Value& d : it->second.items) {
    if (d.kind == K::ParDim) par = static_cast<int>(shape.size());
    shape.push_back(d.kind == K::ParDim ? d.a.c : const_int(d, loc, "a dim"));
  }
  ir::DType dt = dtype_arg(a, "dtype", loc).value_or(ir::DType::F32);
  sem::Memory m = sem::Memory::Sbuf;
  auto buf = a.find("buffer");
  if (buf != a.end() && buf->second.kind == K::Module) {
    const std::string& b = buf->second.s;
    if (b == "language.psum")
      m = sem::Memory::Psum;
    else if (b == "language.shared_hbm" || b == "language.hbm" || b == "language.private_hbm")
      m = sem::Memory::Hbm;
    else if (b != "language.sbuf")
      throw UserError(loc, fmt::format("buffer {} is not supported", b));
  }
  int id = alloc(fn, m, dt, shape, par < 0 ? 0 : par, loc);
  Value v = Value::of_array(id);
  if (fn == "ndarray" || fn == "empty") return v;
  double fill = fn == "ones"   ? 1.0
                : fn == "full" ? number(a.count("fill_value") ? a.at("fill_value") : Value::none(),
                                        loc, "nl.full's fill_value")
                               : 0.0;
  if (m == sem::Memory::Hbm)
    throw UserError(loc, fmt::format("nl.{} in HBM is not supported; use nl.ndarray", fn));
  if (m == sem::Memory::Psum && fill == 0.0) {
    arrays_[static_cast<std::size_t>(id)].zeroed = true;
    return v;
  }
  Operand o = whole(id);
  emit("memset", std::nullopt, {},
       {{"value", fill}, {"P", sem::Dim(o.parts)}, {"F", sem::Dim(o.width)}}, &v, dt, false, loc);
  return v;
}

Value Translator::load(const Args& a, const Value* dst, const SourceLoc& loc) {
  auto src = a.find("src");
  if (src == a.end() || !src->second.tensor())
    throw UserError(loc, "nl.load takes an HBM tensor (or a subscript of one)");
  auto m = a.find("mask");
  HbmAccess h = hbm_access(src->second, m == a.end() ? std::vector<Cond>{} : m->second.mask, loc);
  const Array& from = arrays_[static_cast<std::size_t>(src->second.array)];
  Value out = dst ? *dst
                  : Value::of_array(alloc(from.name + "_tile", sem::Memory::Sbuf,
                                          dtype_arg(a, "dtype", loc).value_or(from.dtype),
                                          {h.grid_parts, h.grid_width}, 0, loc));
  if (arrays_[static_cast<std::size_t>(out.array)].memory == sem::Memory::Hbm)
    throw UserError(loc, "nl.load into an HBM tensor; load into an SBUF tile");
  emit_dma(h, operand(out, loc), false, loc);
  return out;
}

Value Translator::store(const Value& dst, const Value& value, const std::vector<Cond>& mask,
                        const SourceLoc& loc) {
  if (!dst.tensor())
    throw UserError(loc, "nl.store's dst is an HBM tensor (or a subscript of one)");
  if (!value.tensor())
    throw UserError(loc, fmt::format("nl.store stores a tile, not {}", describe(value)));
  Operand tile = operand(value, loc);
  if (builder_.buffer(tile.buffer).memory ==
      sem::Memory::Psum) {  // the compiler copies PSUM out through SBUF
    Value sb = copy_into(value, nullptr, std::nullopt, loc);
    tile = operand(sb, loc);
  }
  emit_dma(hbm_access(dst, mask, loc), tile, true, loc);
  return Value::none();
}

}  // namespace ts::nki
