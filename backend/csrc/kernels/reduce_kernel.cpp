#include "kernels/reduce_kernel.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <sstream>

#include "kernels/binding_window.h"
#include "kernels/dtypes.h"
#include "kernels/elementwise_math.h"
#include "kernels/pipeline_cache.h"
#include "runtime/allocator.h"
#include "runtime/stream.h"

namespace torch_dml::kernels {
namespace {

constexpr uint32_t kWorkgroup = 256;
constexpr uint64_t kWorkgroupModeFrom = 64; // reduced elements per output
// Few outputs over long rows (a full sum) split each row into slices, one workgroup each, whose
// partial results a second dispatch combines: one workgroup per output would leave a GPU idle.
constexpr uint64_t kSplitFrom = 16384;     // reduced elements per output
constexpr uint64_t kSliceElements = 4096;  // at least this many per slice
constexpr uint64_t kSplitGroups = 2048;    // about this many workgroups in the first pass

struct Params {
  uint32_t head[4];  // out_numel, red_numel, input offset, out offset
  uint32_t extra[4]; // index offset, slices per row, elements per slice, first work item
  // head.x is the end of this dispatch's work items (outputs, or row slices of a partial pass) and
  // extra.w their start; head.z, the input's first element, wraps modulo 2^32 when the dispatch binds
  // only the part of a large input its items read.
  uint32_t scalars[4]; // scale and p: encode_scalar slots 0 and 1, in the accumulator's type
  uint32_t aux[4];   // split argmax/argmin/var: the second partial array's offset, row length, slice length
  uint32_t out_shape[kMaxCopyRank], out_in_stride[kMaxCopyRank], out_stride[kMaxCopyRank],
      index_stride[kMaxCopyRank], red_shape[kMaxCopyRank], red_in_stride[kMaxCopyRank];
};

const char* op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::NanSum: return "nansum";
    case ReduceOp::Prod: return "prod";
    case ReduceOp::Mean: return "mean";
    case ReduceOp::Max: return "max";
    case ReduceOp::Min: return "min";
    case ReduceOp::ArgMax: return "argmax";
    case ReduceOp::ArgMin: return "argmin";
    case ReduceOp::Any: return "any";
    case ReduceOp::All: return "all";
    case ReduceOp::Var: return "var";
    case ReduceOp::CountNonzero: return "count_nonzero";
    case ReduceOp::Norm0: return "norm0";
    case ReduceOp::Norm1: return "norm1";
    case ReduceOp::Norm2: return "norm2";
    case ReduceOp::NormP: return "normp";
    case ReduceOp::NormInf: return "norminf";
    case ReduceOp::NormNegInf: return "normneginf";
  }
  return "?";
}

bool is_arg(ReduceOp op) {
  return op == ReduceOp::ArgMax || op == ReduceOp::ArgMin;
}

bool is_max_like(ReduceOp op) {
  return op == ReduceOp::Max || op == ReduceOp::ArgMax || op == ReduceOp::NormInf;
}

bool is_min_like(ReduceOp op) {
  return op == ReduceOp::Min || op == ReduceOp::ArgMin || op == ReduceOp::NormNegInf;
}

Value value_of(c10::ScalarType type) {
  switch (type) {
    case c10::kDouble: return Value::F64;
    case c10::kLong: return Value::I64;
    case c10::kInt: return Value::I32;
    default: return Value::F32;
  }
}

std::string lowest(Value v) {
  switch (v) {
    case Value::F32: return "bitcast<f32>(0xff800000u)";
    case Value::F64: return "f64(bitcast<f32>(0xff800000u))";
    case Value::I32: return "(-2147483647i - 1i)";
    case Value::I64: return "(-9223372036854775807li - 1li)";
    default: return "0";
  }
}

std::string highest(Value v) {
  switch (v) {
    case Value::F32: return "bitcast<f32>(0x7f800000u)";
    case Value::F64: return "f64(bitcast<f32>(0x7f800000u))";
    case Value::I32: return "2147483647i";
    case Value::I64: return "9223372036854775807li";
    default: return "0";
  }
}

std::string identity(ReduceOp op, Value acc) {
  if (op == ReduceOp::Prod || op == ReduceOp::All) return one_literal(acc);
  if (op == ReduceOp::Max || op == ReduceOp::ArgMax) return lowest(acc);
  if (op == ReduceOp::Min || op == ReduceOp::ArgMin || op == ReduceOp::NormNegInf) return highest(acc);
  return zero_literal(acc);
}

// Combines accumulator `a` with value `b` (both the accumulator type).
std::string combine(ReduceOp op, const std::string& a, const std::string& b) {
  if (op == ReduceOp::Prod) return a + " * " + b;
  // NaN wins, as in PyTorch's max/min.
  if (is_max_like(op)) return "select(" + a + ", " + b + ", " + b + " > " + a + " || is_nan(" + b + "))";
  if (is_min_like(op)) return "select(" + a + ", " + b + ", " + b + " < " + a + " || is_nan(" + b + "))";
  if (op == ReduceOp::Any) return "max(" + a + ", " + b + ")";
  if (op == ReduceOp::All) return "min(" + a + ", " + b + ")";
  return a + " + " + b;
}

// Which part of a (possibly split) reduction a kernel does.
enum class Stage {
  Whole,    // reads the input, writes finished outputs
  Partial,  // reads one slice of each row, writes the unfinished partial result of that slice
  Combine,  // reads the partial results (already in the accumulator type), writes finished outputs
};

// Ops whose partial results combine with the op's own combine(). argmax/argmin also keep each
// slice's index, and var each slice's sum of squared deviations from its own mean (Chan's pairwise
// update combines them), in a second partial array.
bool plain_combine(ReduceOp op) {
  return !is_arg(op) && op != ReduceOp::Var;
}

struct Spec {
  ReduceOp op;
  c10::ScalarType input, acc;
  bool workgroup;
  int out_rank, red_rank;
  bool sqrt_result;
  Stage stage = Stage::Whole;
  bool subgroups = false; // fold each subgroup with one subgroup operation before the workgroup step
  bool vec4 = false;      // Partial over unit-stride rows of 32-bit words: a vec4 per load

  std::string name() const {
    std::ostringstream text;
    text << "reduce/" << op_name(op) << "/" << dtype_info(input)->name << ">" << dtype_info(acc)->name << "/o"
         << out_rank << "r" << red_rank << (workgroup ? "/wg" : "/thread") << (sqrt_result ? "/sqrt" : "")
         << (stage == Stage::Partial ? "/partial" : stage == Stage::Combine ? "/combine" : "")
         << (subgroups ? "/sg" : "") << (vec4 ? "/v4" : "");
    return text.str();
  }

  // The subgroup builtin folding `v` across a subgroup with this op's combine(), or "" when there is
  // none for the op and accumulator (subgroup operations take 32-bit scalars here).
  std::string subgroup_fold(const std::string& v) const {
    const Value a = value_of(acc);
    if (a != Value::F32 && a != Value::I32) return "";
    if (op == ReduceOp::Prod) return "subgroupMul(" + v + ")";
    if (op == ReduceOp::Any) return "subgroupMax(" + v + ")";
    if (op == ReduceOp::All) return "subgroupMin(" + v + ")";
    // NaN wins in PyTorch's max/min; subgroupMax/Min leave NaN to the implementation.
    const std::string nan = a == Value::F32 ? "bitcast<f32>(0x7fc00000u)" : v;
    if (is_max_like(op)) return "select(subgroupMax(" + v + "), " + nan + ", subgroupAny(is_nan(" + v + ")))";
    if (is_min_like(op)) return "select(subgroupMin(" + v + "), " + nan + ", subgroupAny(is_nan(" + v + ")))";
    return "subgroupAdd(" + v + ")";
  }

  // var's two passes over elements [lo, hi) of the row at row_base, `step` apart from `start` (a
  // thread walks the whole row, a workgroup's lanes interleave), leaving this thread's sums in
  // `total` and `acc` for the caller to fold. Each pass works on x - shift, shift the first value
  // read (an element; in a Combine stage the first slice's mean): a constant row gives exactly 0
  // whatever the rounding of the mean's division, which a driver may leave 2.5 ulp off (NVIDIA's
  // var of a row of ones was 9.5e-17), and a large mean costs the deviations no precision. Partial
  // stages therefore hand on each slice's mean (not its sum) with its sum of squared deviations.
  // In a Combine stage p.aux.y is the row's length and p.aux.z the slice length (the last slice may
  // be shorter); a slice adds its own sum of squares (aux) and its count times its mean's squared
  // distance from the row's mean.
  std::string var_loop(const std::string& row_base, const std::string& lo, const std::string& hi,
                       const std::string& start, const std::string& step, const std::string& fold_total) const {
    const std::string A = wgsl_type(value_of(acc)), zero = zero_literal(value_of(acc));
    const bool combining = stage == Stage::Combine;
    const std::string count = combining ? "    let n = " + A + "(min(p.aux.z, p.aux.y - r * p.aux.z));\n" : "";
    const std::string weight = combining ? "n * " : "";
    std::string w = "  var shift = " + zero + ";\n  if (" + lo + " < " + hi + ") { shift = load(" + row_base +
        " + red_offset(" + lo + ")); }\n  var total = " + zero + ";\n";
    w += "  for (var r = " + start + "; r < " + hi + "; r += " + step + ") {\n    let i = " + row_base +
         " + red_offset(r);\n" + count + "    total += " + weight + "(load(i) - shift);\n  }\n";
    w += fold_total;
    w += "  let mean = sum / " + A + "(" + (combining ? std::string("p.aux.y") : hi + " - " + lo) + ");\n";
    w += "  var acc = " + zero + ";\n";
    w += "  for (var r = " + start + "; r < " + hi + "; r += " + step + ") {\n    let i = " + row_base +
         " + red_offset(r);\n" + count + "    let d = (load(i) - shift) - mean;\n    acc += " +
         (combining ? "aux_at(i) + n * d * d" : "d * d") + ";\n  }\n";
    return w;
  }

  std::string index_function(const char* fn, const char* shape, const char* stride, const char* start,
                             int rank) const {
    std::ostringstream w;
    w << "fn " << fn << "(i: u32) -> u32 {\n  var rest = i;\n  var offset = " << start << ";\n";
    for (int d = 0; d < rank; ++d) {
      const std::string s = std::string("p.") + shape + "[" + std::to_string(d / 4) + "][" + std::to_string(d % 4) + "]";
      const std::string t = std::string("p.") + stride + "[" + std::to_string(d / 4) + "][" + std::to_string(d % 4) + "]";
      if (d + 1 < rank) w << "  offset += (rest % " << s << ") * " << t << ";\n  rest = rest / " << s << ";\n";
      else w << "  offset += rest * " << t << ";\n";
    }
    w << "  return offset;\n}\n";
    return w.str();
  }

  std::string source() const {
    const Value acc_value = value_of(acc);
    const std::string A = wgsl_type(acc_value);
    const Value in_value = dtype_info(input)->value;
    const bool arg = is_arg(op);
    std::ostringstream w;
    w << "// generated by torch_dml kernels/reduce_kernel.cpp: " << name() << "\n";
    // No `enable subgroups;`: this naga rejects the directive and takes the builtins when the device
    // was created with the subgroup feature.
    w << "struct Params {\n  head: vec4<u32>,\n  extra: vec4<u32>,\n  scalars: array<vec4<u32>, 1>,\n  aux: vec4<u32>,\n"
         "  out_shape: array<vec4<u32>, 2>,\n  out_in_stride: array<vec4<u32>, 2>,\n"
         "  out_stride: array<vec4<u32>, 2>,\n  index_stride: array<vec4<u32>, 2>,\n"
         "  red_shape: array<vec4<u32>, 2>,\n  red_in_stride: array<vec4<u32>, 2>,\n}\n";
    const char* in_array = input == c10::kDouble ? "f64" : input == c10::kLong ? "i64" : "u32";
    w << "@group(0) @binding(0) var<storage, read_write> out: array<" << A << ">;\n"
      << "@group(0) @binding(1) var<storage, read_write> input: array<" << (vec4 ? "vec4<u32>" : in_array) << ">;\n";
    // Partial stages of argmax/argmin/var write their second partial array (aux) where a whole
    // argmax/argmin writes indices; the combining stage reads it after the indices.
    const bool with_aux = !plain_combine(op) && stage != Stage::Whole;
    const bool with_indices = arg && stage != Stage::Partial;
    uint32_t binding = 2;
    if (with_indices) w << "@group(0) @binding(" << binding++ << ") var<storage, read_write> indices: array<i64>;\n";
    if (with_aux)
      w << "@group(0) @binding(" << binding++ << ") var<storage, read_write> aux: array<" << (arg ? "u32" : A) << ">;\n";
    w << "@group(0) @binding(" << binding << ") var<uniform> p: Params;\n";
    // The second partial array runs parallel to the first (the combining stage's input).
    if (with_aux && stage == Stage::Combine)
      w << "fn aux_at(i: u32) -> " << (arg ? "u32" : A) << " { return aux[i - p.head.z + p.aux.x]; }\n";
    w << index_function("in_base", "out_shape", "out_in_stride", "p.head.z", out_rank)
      << index_function("out_pos", "out_shape", "out_stride", "p.head.w", out_rank)
      << index_function("red_offset", "red_shape", "red_in_stride", "0u", red_rank);
    if (with_indices) w << index_function("index_pos", "out_shape", "index_stride", "p.extra.x", out_rank);

    // The scale (mean, var) and the norm's order in the accumulator's type; float64 takes pow from
    // the elementwise family's float64 math (WGSL's pow has no f64 form).
    const bool f64 = acc_value == Value::F64;
    const std::string scale = decode_scalar(0, acc_value), order = decode_scalar(1, acc_value);
    if (f64 && op == ReduceOp::NormP) w << math_helpers("pow_(", Value::F64);
    // WGSL lets implementations assume floats are never NaN (x != x may fold to false, and does on
    // lavapipe), so NaN is recognised from the bits.
    w << "fn is_nan(x: " << A << ") -> bool { return ";
    if (acc_value == Value::F32) w << "(bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u";
    else if (acc_value == Value::F64) w << "(bitcast<u64>(x) & 0x7ffffffffffffffflu) > 0x7ff0000000000000lu";
    else w << "false";
    w << "; }\n";
    // The value one input element contributes, in the accumulator type.
    // load(i): the value element i contributes, in the accumulator type; on the vec4 path
    // load_word(w) does the same from one 32-bit word.
    const std::string raw = vec4 ? (input == c10::kFloat ? "bitcast<f32>(w)" : "bitcast<i32>(w)")
                                 : typed_load(input, "input", "i");
    w << (vec4 ? "fn load_word(w: u32) -> " : "fn load(i: u32) -> ") << A << " {\n";
    switch (stage == Stage::Combine ? ReduceOp::Sum : op) { // partial results need no per-element step
      case ReduceOp::Any:
      case ReduceOp::All:
        w << "  return " << convert_value(convert_value(raw, in_value, Value::Bool), Value::Bool, acc_value) << ";\n";
        break;
      case ReduceOp::CountNonzero:
      case ReduceOp::Norm0:
        w << "  return " << convert_value(convert_value(raw, in_value, Value::Bool), Value::Bool, acc_value) << ";\n";
        break;
      case ReduceOp::NanSum:
        w << "  let x = " << convert_value(raw, in_value, acc_value) << ";\n  return select(x, "
          << zero_literal(acc_value) << ", is_nan(x));\n";
        break;
      case ReduceOp::Norm1:
      case ReduceOp::NormInf:
      case ReduceOp::NormNegInf:
        w << "  return abs(" << convert_value(raw, in_value, acc_value) << ");\n";
        break;
      case ReduceOp::Norm2:
        w << "  let x = " << convert_value(raw, in_value, acc_value) << ";\n  return x * x;\n";
        break;
      case ReduceOp::NormP:
        w << "  return " << (f64 ? "pow_" : "pow") << "(abs(" << convert_value(raw, in_value, acc_value) << "), " << order
          << ");\n";
        break;
      default:
        w << "  return " << convert_value(raw, in_value, acc_value) << ";\n";
    }
    w << "}\n";
    if (arg) {
      const std::string cmp = op == ReduceOp::ArgMax ? ">" : "<";
      // x beats a: strictly better, or NaN against a number (NaN wins, first NaN kept).
      w << "fn better(x: " << A << ", a: " << A << ") -> bool { return x " << cmp << " a || (is_nan(x) && !is_nan(a)); }\n"
        << "fn take(v1: " << A << ", i1: u32, v2: " << A << ", i2: u32) -> bool {\n"
        << "  return i1 == 0xFFFFFFFFu || (i2 != 0xFFFFFFFFu && (better(v2, v1) || (!better(v1, v2) && i2 < i1)));\n}\n";
    }

    // finish(acc): the value written for an output.
    w << "fn finish(acc: " << A << ") -> " << A << " {\n";
    if (stage == Stage::Partial) w << "  return acc;\n";
    else if (op == ReduceOp::Mean) w << "  return acc * " << scale << ";\n";
    else if (op == ReduceOp::Var) w << "  let v = acc * " << scale << ";\n  return " << (sqrt_result ? "sqrt(v)" : "v") << ";\n";
    else if (op == ReduceOp::Norm2) w << "  return sqrt(acc);\n";
    else if (op == ReduceOp::NormP) w << "  return " << (f64 ? "pow_" : "pow") << "(acc, " << A << "(1) / " << order << ");\n";
    else w << "  return acc;\n";
    w << "}\n";

    const std::string ident = identity(op, acc_value);
    if (!workgroup) {
      w << "@compute @workgroup_size(" << kWorkgroup << ")\n"
        << "fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {\n"
        << "  let o = p.extra.w + gid.x + gid.y * groups.x * " << kWorkgroup << "u;\n"
        << "  if (o >= p.head.x) { return; }\n  let base = in_base(o);\n";
      if (op == ReduceOp::Var) {
        w << var_loop("base", "0u", "p.head.y", "0u", "1u", "  let sum = total;\n");
      } else if (arg) {
        w << "  var acc = " << ident << ";\n  var best = 0xFFFFFFFFu;\n"
          << "  for (var r = 0u; r < p.head.y; r++) {\n    let i = base + red_offset(r);\n    let x = load(i);\n"
          << "    let at = " << (stage == Stage::Combine ? "aux_at(i)" : "r") << ";\n"
          << "    if (take(acc, best, x, at)) { acc = x; best = at; }\n  }\n"
          << "  indices[index_pos(o)] = i64(best);\n";
      } else {
        w << "  var acc = " << ident << ";\n"
          << "  for (var r = 0u; r < p.head.y; r++) { let x = load(base + red_offset(r)); acc = "
          << combine(op, "acc", "x") << "; }\n";
      }
      w << "  out[out_pos(o)] = finish(acc);\n}\n";
      return w.str();
    }

    // Workgroup per output: each lane folds a strided slice, then a tree in workgroup memory.
    w << "var<workgroup> partial: array<" << A << ", " << kWorkgroup << ">;\n";
    if (arg) w << "var<workgroup> partial_index: array<u32, " << kWorkgroup << ">;\n";
    w << "@compute @workgroup_size(" << kWorkgroup << ")\n"
      << "fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,\n"
      << "        @builtin(local_invocation_index) lane: u32";
    if (subgroups)
      w << ",\n        @builtin(subgroup_invocation_id) sg_lane: u32, @builtin(subgroup_id) sg_id: u32,\n"
        << "        @builtin(num_subgroups) sg_count: u32";
    w << ") {\n"
      << "  let o = p.extra.w + group.x + group.y * groups.x;\n"
      << "  if (o >= p.head.x) { return; }\n  let base = in_base(" << (stage == Stage::Partial ? "0u" : "o") << ");\n";
    auto tree = [&](const std::string& what) {
      std::ostringstream t;
      t << "  partial[lane] = " << what << ";\n  workgroupBarrier();\n"
        << "  for (var s = " << kWorkgroup / 2 << "u; s > 0u; s = s >> 1u) {\n"
        << "    if (lane < s) { partial[lane] = partial[lane] + partial[lane + s]; }\n"
        << "    workgroupBarrier();\n  }\n";
      return t.str();
    };
    // argmax/argmin and var read elements [lo, hi) of the row at row_base: the whole row, or one
    // slice of it in a Partial stage.
    std::string lo = "0u", hi = "p.head.y", row_base = "base";
    if (!plain_combine(op) && stage == Stage::Partial) {
      w << "  let slice = o % p.extra.y;\n  let row_base = in_base(o / p.extra.y);\n"
        << "  let lo = slice * p.extra.z;\n  let hi = min(p.head.y, lo + p.extra.z);\n";
      lo = "lo";
      hi = "hi";
      row_base = "row_base";
    }
    if (op == ReduceOp::Var) {
      w << var_loop(row_base, lo, hi, lo + " + lane", std::to_string(kWorkgroup) + "u",
                    tree("total") + "  let sum = partial[0];\n  workgroupBarrier();\n");
      w << tree("acc");
      if (stage == Stage::Partial)
        w << "  if (lane == 0u) {\n    out[p.head.w + o] = shift + mean;\n    aux[p.aux.x + o] = partial[0];\n  }\n}\n";
      else
        w << "  if (lane == 0u) { out[out_pos(o)] = finish(partial[0]); }\n}\n";
      return w.str();
    }
    if (arg) {
      w << "  var acc = " << ident << ";\n  var best = 0xFFFFFFFFu;\n"
        << "  for (var r = " << lo << " + lane; r < " << hi << "; r += " << kWorkgroup << "u) {\n"
        << "    let i = " << row_base << " + red_offset(r);\n    let x = load(i);\n"
        << "    let at = " << (stage == Stage::Combine ? "aux_at(i)" : "r") << ";\n"
        << "    if (take(acc, best, x, at)) { acc = x; best = at; }\n  }\n"
        << "  partial[lane] = acc;\n  partial_index[lane] = best;\n  workgroupBarrier();\n"
        << "  for (var s = " << kWorkgroup / 2 << "u; s > 0u; s = s >> 1u) {\n"
        << "    if (lane < s && take(partial[lane], partial_index[lane], partial[lane + s], partial_index[lane + s])) {\n"
        << "      partial[lane] = partial[lane + s];\n      partial_index[lane] = partial_index[lane + s];\n    }\n"
        << "    workgroupBarrier();\n  }\n";
      if (stage == Stage::Partial)
        w << "  if (lane == 0u) {\n    out[p.head.w + o] = partial[0];\n    aux[p.aux.x + o] = partial_index[0];\n  }\n}\n";
      else
        w << "  if (lane == 0u) {\n    out[out_pos(o)] = partial[0];\n"
          << "    indices[index_pos(o)] = i64(partial_index[0]);\n  }\n}\n";
      return w.str();
    }
    // A Partial kernel's workgroup g reduces slice g % S (p.extra.y slices of p.extra.z elements) of
    // row g / S and writes partial result g.
    const bool sliced = stage == Stage::Partial;
    w << "  var acc = " << ident << ";\n";
    if (sliced && vec4) {
      // Rows, slices and the input offset are multiples of 4 elements here.
      w << "  let slice = o % p.extra.y;\n  let row_base = in_base(o / p.extra.y);\n"
        << "  let end = (row_base + min(p.head.y, (slice + 1u) * p.extra.z)) >> 2u;\n"
        << "  for (var q = ((row_base + slice * p.extra.z) >> 2u) + lane; q < end; q += " << kWorkgroup << "u) {\n"
        << "    let v = input[q];\n";
      for (const char* lane : {"x", "y", "z"})
        w << "    acc = " << combine(op, "acc", std::string("load_word(v.") + lane + ")") << ";\n";
      w << "    let x = load_word(v.w);\n";
    } else if (sliced) {
      w << "  let slice = o % p.extra.y;\n  let row_base = in_base(o / p.extra.y);\n"
        << "  let end = min(p.head.y, (slice + 1u) * p.extra.z);\n"
        << "  for (var r = slice * p.extra.z + lane; r < end; r += " << kWorkgroup << "u) {\n"
        << "    let x = load(row_base + red_offset(r));\n";
    } else {
      w << "  for (var r = lane; r < p.head.y; r += " << kWorkgroup << "u) {\n"
        << "    let x = load(base + red_offset(r));\n";
    }
    w << "    acc = " << combine(op, "acc", "x") << ";\n  }\n";
    const std::string target = sliced ? "p.head.w + o" : "out_pos(o)";
    if (subgroups) {
      // One subgroup operation per subgroup, then lane 0 folds the few subgroup results.
      w << "  let folded = " << subgroup_fold("acc") << ";\n"
        << "  if (sg_lane == 0u) { partial[sg_id] = folded; }\n  workgroupBarrier();\n"
        << "  if (lane == 0u) {\n    var total = partial[0];\n"
        << "    for (var i = 1u; i < sg_count; i++) { total = " << combine(op, "total", "partial[i]") << "; }\n"
        << "    out[" << target << "] = finish(total);\n  }\n}\n";
      return w.str();
    }
    w << "  partial[lane] = acc;\n  workgroupBarrier();\n"
      << "  for (var s = " << kWorkgroup / 2 << "u; s > 0u; s = s >> 1u) {\n"
      << "    if (lane < s) { partial[lane] = " << combine(op, "partial[lane]", "partial[lane + s]") << "; }\n"
      << "    workgroupBarrier();\n  }\n"
      << "  if (lane == 0u) { out[" << target << "] = finish(partial[0]); }\n}\n";
    return w.str();
  }
};

Window input_window(runtime::DeviceContext& context, const ReduceProblem& r) {
  const ReduceGeometry& g = r.geometry;
  uint64_t last = r.input.element_offset;
  for (int d = 0; d < g.out_rank; ++d) last += static_cast<uint64_t>(g.out_shape[d] - 1) * g.out_in_stride[d];
  for (int d = 0; d < g.red_rank; ++d) last += static_cast<uint64_t>(g.red_shape[d] - 1) * g.red_in_stride[d];
  return binding_window(context, r.input.buffer_size, c10::elementSize(r.input.dtype), r.input.element_offset, last);
}

Window output_window(runtime::DeviceContext& context, const DeviceTensorRef& t, const uint32_t* stride,
                     const ReduceGeometry& g) {
  uint64_t last = t.element_offset;
  for (int d = 0; d < g.out_rank; ++d) last += static_cast<uint64_t>(g.out_shape[d] - 1) * stride[d];
  return binding_window(context, t.buffer_size, c10::elementSize(t.dtype), t.element_offset, last);
}

} // namespace

c10::ScalarType reduce_accumulator(ReduceOp op, c10::ScalarType input, c10::ScalarType result) {
  switch (op) {
    case ReduceOp::Any:
    case ReduceOp::All: return c10::kInt;
    case ReduceOp::CountNonzero: return c10::kLong;
    case ReduceOp::Max:
    case ReduceOp::Min:
    case ReduceOp::ArgMax:
    case ReduceOp::ArgMin:
      if (input == c10::kDouble || input == c10::kLong) return input;
      return c10::isFloatingType(input) ? c10::kFloat : c10::kInt;
    case ReduceOp::Sum:
    case ReduceOp::NanSum:
    case ReduceOp::Prod:
      if (result == c10::kDouble) return c10::kDouble;
      return c10::isFloatingType(result) ? c10::kFloat : c10::kLong;
    default: return result == c10::kDouble || input == c10::kDouble ? c10::kDouble : c10::kFloat;
  }
}

namespace {

// How a problem runs: one pass, or slices of each row then a combining pass.
struct Plan {
  Spec spec;
  uint64_t slices = 1; // per row, in the first pass
  uint64_t slice = 0;  // reduced elements per slice
  uint64_t items = 0;  // work items of the first pass: outputs, or outputs x slices
};

Plan plan_for(runtime::DeviceContext& context, const ReduceProblem& r) {
  const ReduceGeometry& g = r.geometry;
  Plan plan{Spec{r.op, r.input.dtype, r.out.dtype, g.red_numel >= kWorkgroupModeFrom, std::max(g.out_rank, 1),
                 std::max(g.red_rank, 1), r.sqrt_result}};
  plan.spec.subgroups = plan.spec.workgroup && plain_combine(r.op) && context.has(runtime::Feature::Subgroup) &&
      !plan.spec.subgroup_fold("x").empty();
  if (plan.spec.workgroup && g.red_numel >= kSplitFrom) {
    const uint64_t by_size = (g.red_numel + kSliceElements - 1) / kSliceElements;
    plan.slices = std::min(by_size, std::max<uint64_t>(1, kSplitGroups / std::max<uint64_t>(g.out_numel, 1)));
  }
  if (plan.slices >= 2) {
    plan.spec.stage = Stage::Partial;
    // Slices of a multiple of 4 elements, so unit-stride rows can be read a vec4 at a time.
    plan.slice = ((g.red_numel + plan.slices - 1) / plan.slices + 3) / 4 * 4;
    plan.slices = (g.red_numel + plan.slice - 1) / plan.slice;
  } else {
    plan.slices = 1;
  }
  plan.items = g.out_numel * plan.slices;
  return plan;
}

// The input elements (relative to the input's first) that work items [w0, w1) read, for geometries
// of at most one output and one reduced dimension (a contiguous tensor reduced over trailing dims
// coalesces to that); nullopt for others.
struct Extent {
  uint64_t first, last;
};

std::optional<Extent> items_extent(const ReduceProblem& r, const Plan& plan, uint64_t w0, uint64_t w1) {
  const ReduceGeometry& g = r.geometry;
  if (g.out_rank > 1 || g.red_rank > 1) return std::nullopt;
  const uint64_t os = g.out_rank ? g.out_in_stride[0] : 0, rs = g.red_rank ? g.red_in_stride[0] : 0;
  const uint64_t rows = g.red_numel, S = plan.slices;
  const uint64_t slice = S > 1 ? plan.slice : rows;
  // Each item's span grows with its row and its slice, so the bounds come from the range's ends
  // and, when it spans rows, from the first slice of its second row and the last of its next-to-last.
  auto first_of = [&](uint64_t w) { return (w / S) * os + (w % S) * slice * rs; };
  auto last_of = [&](uint64_t w) {
    const uint64_t end = std::min((w % S + 1) * slice, rows);
    return (w / S) * os + (end ? end - 1 : 0) * rs;
  };
  Extent e{first_of(w0), last_of(w1 - 1)};
  if ((w1 - 1) / S > w0 / S) {
    e.first = std::min(e.first, first_of((w0 / S + 1) * S));
    e.last = std::max(e.last, last_of((w1 - 1) / S * S - 1));
  }
  return e;
}

bool window_fits(runtime::DeviceContext& context, const ReduceProblem& r, const Extent& e) {
  const size_t itemsize = c10::elementSize(r.input.dtype);
  return fits_binding(context, binding_window(context, r.input.buffer_size, itemsize, r.input.element_offset + e.first,
                                              r.input.element_offset + e.last));
}

std::string unsupported_reason(runtime::DeviceContext& context, const ReduceProblem& r, const Plan& plan) {
  const auto in_info = dtype_info(r.input.dtype);
  if (!in_info) return std::string("no WGSL reduction for ") + c10::toString(r.input.dtype);
  for (c10::ScalarType type : {r.input.dtype, r.out.dtype}) {
    const auto info = dtype_info(type);
    if (info && info->needs && !context.has(*info->needs))
      return std::string(c10::toString(type)) + " needs " + std::string(runtime::feature_name(*info->needs));
  }
  if (r.indices && !context.has(runtime::Feature::ShaderInt64)) return "int64 indices need shader-int64";
  const ReduceGeometry& g = r.geometry;
  if (g.out_rank > kMaxCopyRank || g.red_rank > kMaxCopyRank) return "too many dimensions";
  if (g.out_numel > 0xFFFFFFFFull || g.red_numel > 0xFFFFFFFFull) return "more than 2^32 elements";
  if (!fits_binding(context, output_window(context, r.out, g.out_stride, g)) ||
      (r.indices && !fits_binding(context, output_window(context, *r.indices, g.index_stride, g))))
    return "an output larger than one storage binding";
  if (g.out_numel == 0 || fits_binding(context, input_window(context, r))) return "";
  // A larger input runs in dispatches over ranges of work items, each binding what its items read.
  if (plan.items > 0xFFFFFFFFull) return "more than 2^32 work items";
  for (uint64_t w : {uint64_t{0}, plan.items - 1}) {
    const auto one = items_extent(r, plan, w, w + 1);
    if (!one) return "an input larger than one storage binding, reduced over more than one strided dimension";
    if (!window_fits(context, r, *one)) return "one output reads more than one storage binding";
  }
  return "";
}

// The second partial array of a split argmax/argmin (slice indices, 32-bit) or var (each slice's
// sum of squared deviations): `count` entries, for rows of `row_length` cut in slices of `slice`.
struct Aux {
  DeviceTensorRef ref;
  uint64_t count, row_length, slice;
};

// Records one kernel over work items [w0, w1) of `r`; for a Partial kernel, `plan` gives the slices.
// `windowed`: the input exceeds one binding, so the dispatch binds just what items [w0, w1) read.
void launch(runtime::DeviceContext& context, const ReduceProblem& r, const Spec& spec, const Plan& plan,
            uint64_t w0, uint64_t w1, bool windowed = false, const Aux* aux = nullptr) {
  const ReduceGeometry& g = r.geometry;
  const bool with_indices = is_arg(r.op) && spec.stage != Stage::Partial;
  const bool with_aux = !plain_combine(r.op) && spec.stage != Stage::Whole;
  TORCH_INTERNAL_ASSERT(!with_aux || aux, "torch_dml: a split ", op_name(r.op), " needs its second partial array");
  const uint32_t storage_count = 2 + (with_indices ? 1 : 0) + (with_aux ? 1 : 0);
  Window win_in = input_window(context, r);
  uint32_t input_offset = static_cast<uint32_t>(win_in.element_offset);
  if (windowed) {
    const Extent e = *items_extent(r, plan, w0, w1);
    win_in = binding_window(context, r.input.buffer_size, c10::elementSize(r.input.dtype),
                            r.input.element_offset + e.first, r.input.element_offset + e.last);
    input_offset = static_cast<uint32_t>(win_in.element_offset - e.first); // wraps: see Params
  }
  Spec chosen = spec;
  chosen.vec4 = spec.stage == Stage::Partial && plain_combine(r.op) &&
      (r.input.dtype == c10::kFloat || r.input.dtype == c10::kInt) &&
      g.red_rank == 1 && g.red_in_stride[0] == 1 && g.red_numel % 4 == 0 && plan.slice % 4 == 0 &&
      (g.out_rank == 0 || (g.out_rank == 1 && g.out_in_stride[0] % 4 == 0)) && input_offset % 4 == 0 &&
      win_in.offset % 16 == 0 && win_in.size % 16 == 0;
  WGPUComputePipeline compiled = pipeline(context, chosen.name(), storage_count, [&] { return chosen.source(); });
  const Window win_out = spec.stage == Stage::Partial
      ? binding_window(context, r.out.buffer_size, c10::elementSize(r.out.dtype), r.out.element_offset,
                       r.out.element_offset + plan.items - 1)
      : output_window(context, r.out, g.out_stride, g);
  Params params = {};
  params.head[0] = static_cast<uint32_t>(w1);
  params.head[1] = static_cast<uint32_t>(g.red_numel);
  params.head[2] = input_offset;
  params.head[3] = static_cast<uint32_t>(win_out.element_offset);
  params.extra[1] = static_cast<uint32_t>(plan.slices);
  params.extra[2] = static_cast<uint32_t>(plan.slice);
  params.extra[3] = static_cast<uint32_t>(w0);
  const Value acc_value = dtype_info(r.out.dtype)->value;
  encode_scalar(r.scale, acc_value, r.out.dtype, &params.scalars[0]);
  encode_scalar(r.p, acc_value, r.out.dtype, &params.scalars[2]);
  // Rank 0 on either side runs as rank 1 of size 1 (the generated loops expect at least one dim).
  for (int d = 0; d < kMaxCopyRank; ++d) {
    params.out_shape[d] = d < g.out_rank ? g.out_shape[d] : 1;
    params.red_shape[d] = d < g.red_rank ? g.red_shape[d] : 1;
    params.out_in_stride[d] = g.out_in_stride[d];
    params.out_stride[d] = g.out_stride[d];
    params.index_stride[d] = g.index_stride[d];
    params.red_in_stride[d] = g.red_in_stride[d];
  }
  runtime::StorageBinding bindings[4] = {{r.out.buffer, win_out.offset, win_out.size},
                                         {r.input.buffer, win_in.offset, win_in.size},
                                         {},
                                         {}};
  uint32_t next = 2;
  if (with_indices) {
    const Window win_index = output_window(context, *r.indices, g.index_stride, g);
    params.extra[0] = static_cast<uint32_t>(win_index.element_offset);
    bindings[next++] = {r.indices->buffer, win_index.offset, win_index.size};
  }
  if (with_aux) {
    const Window win_aux = binding_window(context, aux->ref.buffer_size, c10::elementSize(aux->ref.dtype),
                                          aux->ref.element_offset, aux->ref.element_offset + aux->count - 1);
    params.aux[0] = static_cast<uint32_t>(win_aux.element_offset);
    params.aux[1] = static_cast<uint32_t>(aux->row_length);
    params.aux[2] = static_cast<uint32_t>(aux->slice);
    bindings[next++] = {aux->ref.buffer, win_aux.offset, win_aux.size};
  }
  const uint64_t count = w1 - w0;
  const Grid grid = grid_for(context, spec.workgroup ? count : (count + kWorkgroup - 1) / kWorkgroup);
  context.stream().dispatch(compiled, storage_count, bindings, &params, sizeof(params), grid.x, grid.y);
}

// Halves the range of work items until what each part reads fits one binding.
void launch_range(runtime::DeviceContext& context, const ReduceProblem& r, const Spec& spec, const Plan& plan,
                  uint64_t w0, uint64_t w1, bool windowed, const Aux* aux = nullptr) {
  if (windowed && w1 - w0 > 1 && !window_fits(context, r, *items_extent(r, plan, w0, w1))) {
    const uint64_t middle = w0 + (w1 - w0) / 2;
    launch_range(context, r, spec, plan, w0, middle, windowed, aux);
    launch_range(context, r, spec, plan, middle, w1, windowed, aux);
    return;
  }
  launch(context, r, spec, plan, w0, w1, windowed, aux);
}

} // namespace

std::string reduce_unsupported_reason(runtime::DeviceContext& context, const ReduceProblem& r) {
  return unsupported_reason(context, r, plan_for(context, r));
}

void reduce(runtime::DeviceContext& context, const ReduceProblem& r) {
  const Plan plan = plan_for(context, r);
  const std::string reason = unsupported_reason(context, r, plan);
  TORCH_CHECK(reason.empty(), "torch_dml: ", op_name(r.op), " of ", r.input.dtype, " cannot run on ",
              context.describe(), ": ", reason);
  const ReduceGeometry& g = r.geometry;
  if (g.out_numel == 0) return;
  const bool windowed = !fits_binding(context, input_window(context, r));
  if (plan.slices == 1) {
    launch_range(context, r, plan.spec, plan, 0, plan.items, windowed);
    return;
  }

  // Partial results in a scratch buffer: freed (back to the pool) on return, which is safe because
  // later work that reuses it is recorded after this reduction's dispatches.
  auto scratch_of = [&](c10::ScalarType type, c10::DataPtr& holder) {
    const size_t size = c10::elementSize(type);
    holder = runtime::device_allocator().allocate_on(context.index(), plan.items * size);
    const runtime::BufferSpan span = runtime::device_allocator().resolve(holder.get());
    return DeviceTensorRef{span.buffer, span.buffer_size, span.offset / size, type};
  };
  c10::DataPtr scratch, aux_scratch;
  const DeviceTensorRef partials = scratch_of(r.out.dtype, scratch);
  std::optional<Aux> aux;
  if (!plain_combine(r.op))
    aux = Aux{scratch_of(is_arg(r.op) ? c10::kInt : r.out.dtype, aux_scratch), plan.items, g.red_numel, plan.slice};

  ReduceProblem first = r;
  first.out = partials;
  launch_range(context, first, plan.spec, plan, 0, plan.items, windowed, aux ? &*aux : nullptr);

  // The second pass reads row o's partial results at o * slices, contiguous in output order.
  ReduceProblem second = r;
  second.input = partials;
  ReduceGeometry& g2 = second.geometry;
  uint64_t stride = plan.slices;
  for (int d = 0; d < g2.out_rank; ++d) {
    g2.out_in_stride[d] = static_cast<uint32_t>(stride);
    stride *= g2.out_shape[d];
  }
  g2.red_rank = 1;
  g2.red_numel = plan.slices;
  g2.red_shape[0] = static_cast<uint32_t>(plan.slices);
  g2.red_in_stride[0] = 1;
  Spec combine{r.op, r.out.dtype, r.out.dtype, plan.slices >= kWorkgroupModeFrom, std::max(g2.out_rank, 1), 1,
               r.sqrt_result, Stage::Combine};
  combine.subgroups = combine.workgroup && plan.spec.subgroups;
  Plan whole;
  whole.items = g.out_numel;
  launch(context, second, combine, whole, 0, g.out_numel, false, aux ? &*aux : nullptr);
}

} // namespace torch_dml::kernels
