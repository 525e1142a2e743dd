#include "kernels/reduce_kernel.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <iterator>

#include "kernels/dtypes.h"
#include "kernels/elementwise_math.h"
#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/launch.h"
#include "runtime/allocator.h"

namespace torch_dml::kernels {
namespace {

constexpr uint64_t kWorkgroupModeFrom = 64; // reduced elements per output
// Few outputs over long rows (a full sum) split each row into slices, one workgroup each, whose
// partial results a second dispatch combines: one workgroup per output would leave a GPU idle.
constexpr uint64_t kSplitFrom = 16384;     // reduced elements per output
constexpr uint64_t kSliceElements = 4096;  // at least this many per slice
constexpr uint64_t kSplitGroups = 2048;    // about this many workgroups in the first pass

// Which entry points of reduce.wgsl an op takes.
enum class Kind { Fold, Arg, Var };

enum class Identity { Zero, One, Lowest, Highest };

// What reduce.wgsl's holes hold for each op, in WGSL over the accumulator type T: an element's
// contribution from its value x (`via_bool`: x is its truth, 0 or 1), how two accumulators a and b
// combine, the output from the folded acc, and the subgroup fold for accumulators of 32 bits.
struct OpRow {
  const char* name;
  Kind kind;
  Identity identity;
  bool via_bool;
  const char* contribution;
  const char* combine;
  const char* finish;
  const char* subgroup_fold; // nullptr: the op folds through workgroup memory only
};

// In ReduceOp's order.
constexpr OpRow kOps[] = {
    {"sum", Kind::Fold, Identity::Zero, false, "x", "a + b", "acc", "subgroupAdd"},
    {"nansum", Kind::Fold, Identity::Zero, false, "select(x, T(0), is_nan(x))", "a + b", "acc", "subgroupAdd"},
    {"prod", Kind::Fold, Identity::One, false, "x", "a * b", "acc", "subgroupMul"},
    {"mean", Kind::Fold, Identity::Zero, false, "x", "a + b", "acc * scale()", "subgroupAdd"},
    {"max", Kind::Fold, Identity::Lowest, false, "x", "max_or_nan(a, b)", "acc", "subgroup_max_or_nan"},
    {"min", Kind::Fold, Identity::Highest, false, "x", "min_or_nan(a, b)", "acc", "subgroup_min_or_nan"},
    {"argmax", Kind::Arg, Identity::Lowest, false, "x", "max_or_nan(a, b)", "acc", nullptr},
    {"argmin", Kind::Arg, Identity::Highest, false, "x", "min_or_nan(a, b)", "acc", nullptr},
    {"any", Kind::Fold, Identity::Zero, true, "x", "max(a, b)", "acc", "subgroupMax"},
    {"all", Kind::Fold, Identity::One, true, "x", "min(a, b)", "acc", "subgroupMin"},
    {"var", Kind::Var, Identity::Zero, false, "x", "a + b", "acc * scale()", nullptr}, // std: sqrt of it
    {"count_nonzero", Kind::Fold, Identity::Zero, true, "x", "a + b", "acc", "subgroupAdd"},
    {"norm0", Kind::Fold, Identity::Zero, true, "x", "a + b", "acc", "subgroupAdd"},
    {"norm1", Kind::Fold, Identity::Zero, false, "abs(x)", "a + b", "acc", "subgroupAdd"},
    {"norm2", Kind::Fold, Identity::Zero, false, "x * x", "a + b", "sqrt(acc)", "subgroupAdd"},
    {"normp", Kind::Fold, Identity::Zero, false, "power(abs(x), order())", "a + b", "power(acc, T(1) / order())",
     "subgroupAdd"},
    {"norminf", Kind::Fold, Identity::Zero, false, "abs(x)", "max_or_nan(a, b)", "acc", "subgroup_max_or_nan"},
    {"normneginf", Kind::Fold, Identity::Highest, false, "abs(x)", "min_or_nan(a, b)", "acc", "subgroup_min_or_nan"},
};

static_assert(std::size(kOps) == static_cast<size_t>(ReduceOp::NormNegInf) + 1);

const OpRow& row(ReduceOp op) {
  return kOps[static_cast<size_t>(op)];
}

const char* op_name(ReduceOp op) {
  return row(op).name;
}

bool is_arg(ReduceOp op) {
  return row(op).kind == Kind::Arg;
}

// Ops whose partial results combine with the op's own combine(). argmax/argmin also keep each
// slice's index, and var each slice's sum of squared deviations, in a second partial array.
bool plain_combine(ReduceOp op) {
  return row(op).kind == Kind::Fold;
}

Value value_of(c10::ScalarType type) {
  switch (type) {
    case c10::kDouble: return Value::F64;
    case c10::kLong: return Value::I64;
    case c10::kInt: return Value::I32;
    default: return Value::F32;
  }
}

std::string identity(Identity kind, Value v) {
  switch (kind) {
    case Identity::Zero: return zero_literal(v);
    case Identity::One: return one_literal(v);
    case Identity::Lowest:
      if (v == Value::F32) return "bitcast<f32>(0xff800000u)";
      if (v == Value::F64) return "f64(bitcast<f32>(0xff800000u))";
      return v == Value::I32 ? "(-2147483647i - 1i)" : "(-9223372036854775807li - 1li)";
    case Identity::Highest:
      if (v == Value::F32) return "bitcast<f32>(0x7f800000u)";
      if (v == Value::F64) return "f64(bitcast<f32>(0x7f800000u))";
      return v == Value::I32 ? "2147483647i" : "9223372036854775807li";
  }
  return "?";
}

// lib/nan_compare.wgsl's test of x's bits.
const char* nan_test(Value v) {
  if (v == Value::F32) return "(bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u";
  if (v == Value::F64) return "(bitcast<u64>(x) & 0x7ffffffffffffffflu) > 0x7ff0000000000000lu";
  return "false";
}

// Which part of a (possibly split) reduction a kernel does: reduce.wgsl's STAGE.
enum class Stage : uint32_t { Whole = 0, Partial = 1, Combine = 2 };

struct Spec {
  ReduceOp op;
  c10::ScalarType input, acc;
  bool workgroup;
  int out_rank, red_rank;
  bool sqrt_result;
  Stage stage = Stage::Whole;
  bool subgroups = false; // fold each subgroup with one subgroup operation before the workgroup step
  bool vec4 = false;      // Partial over unit-stride rows of 32-bit words: a vec4 per load
  bool wide = false;      // float32 math helpers may compute in float64 (fixed per device)

  std::string name() const {
    const char* stage_name = stage == Stage::Partial ? "/partial" : stage == Stage::Combine ? "/combine" : "";
    return std::string("reduce/") + op_name(op) + "/" + dtype_info(input)->name + ">" + dtype_info(acc)->name + "/o" +
        std::to_string(out_rank) + "r" + std::to_string(red_rank) + (workgroup ? "/wg" : "/thread") +
        (sqrt_result ? "/sqrt" : "") + stage_name + (subgroups ? "/sg" : "") + (vec4 ? "/v4" : "");
  }

  // Subgroup operations take 32-bit scalars here.
  bool can_use_subgroups() const {
    const Value a = value_of(acc);
    return row(op).subgroup_fold != nullptr && (a == Value::F32 || a == Value::I32);
  }

  std::string entry() const {
    const char* kind = row(op).kind == Kind::Arg ? "arg" : row(op).kind == Kind::Var ? "var" : "reduce";
    return std::string(kind) + (!workgroup ? "_thread" : subgroups ? "_workgroup_subgroups" : "_workgroup");
  }

  std::string source() const {
    const OpRow& r = row(op);
    const Value acc_value = value_of(acc), in_value = dtype_info(input)->value;
    const char* A = wgsl_type(acc_value);
    const bool f64 = acc_value == Value::F64;
    // A p-norm takes the elementwise family's pow_ where it has one better than WGSL's pow (which has
    // no float64 form and loses |y log2 x| ulp): in float64, and in float32 with float64 at hand.
    // Every other variant keeps power() on float32, uncalled.
    const bool helper_pow = op == ReduceOp::NormP && (f64 || (wide && acc_value == Value::F32));
    // Partial results need no per-element step, and a Partial pass hands on the unfinished fold.
    const bool combining = stage == Stage::Combine;
    const std::string x = combining || !r.via_bool ? convert_value("raw", in_value, acc_value)
                                                   : convert_value(convert_value("raw", in_value, Value::Bool),
                                                                   Value::Bool, acc_value);
    std::string finish = stage == Stage::Partial ? "acc" : op == ReduceOp::Var && sqrt_result ? "sqrt(acc * scale())"
                                                                                            : r.finish;
    const char* word = input == c10::kFloat ? "f32" : "i32";
    std::string text = render(
        wgsl::reduce,
        {{"acc", A},
         {"input_value", wgsl_type(in_value)},
         {"input_array", vec4 ? "array<vec4<u32>>" : input == c10::kDouble ? "array<f64>"
                                                     : input == c10::kLong ? "array<i64>" : "array<u32>"},
         {"load_input", vec4 ? std::string("bitcast<") + word + ">(input[i >> 2u][i & 3u])"
                             : typed_load(input, "input", "i")},
         {"load_quad", vec4 ? std::string("bitcast<vec4<") + word + ">>(input[q])"
                            : std::string("vec4<") + wgsl_type(in_value) + ">()"},
         {"convert", x},
         {"contribution", substitute_type(combining ? "x" : r.contribution, A)},
         {"combine", r.combine},
         {"finish", substitute_type(finish, A)},
         {"identity", identity(r.identity, acc_value)},
         {"beats", op == ReduceOp::ArgMin ? "beats_for_min" : "beats_for_max"},
         {"is_nan", nan_test(acc_value)},
         {"scale", decode_scalar(0, acc_value)},
         {"order", decode_scalar(1, acc_value)},
         {"power_type", helper_pow ? A : "f32"},
         {"pow", helper_pow ? "pow_" : "pow"},
         {"math", helper_pow ? math_helpers("pow_(", acc_value, wide) : ""},
         {"stage", std::to_string(static_cast<uint32_t>(stage))},
         {"vec4", vec4 ? "true" : "false"},
         {"out_rank", std::to_string(out_rank)},
         {"red_rank", std::to_string(red_rank)},
         {"workgroup_size", std::to_string(kWorkgroupSize)}});
    if (subgroups)
      text += render(wgsl::reduce_subgroup, {{"acc", A},
                                             {"nan", acc_value == Value::F32 ? "bitcast<f32>(0x7fc00000u)" : "v"},
                                             {"subgroup_fold", r.subgroup_fold},
                                             {"workgroup_size", std::to_string(kWorkgroupSize)}});
    return text;
  }
};

// Elements from a tensor's first to its last, over the output dims through `stride`.
uint64_t span(const ReduceGeometry& g, const uint32_t* stride) {
  uint64_t last = 0;
  for (int d = 0; d < g.out_rank; ++d) last += static_cast<uint64_t>(g.out_shape[d] - 1) * stride[d];
  return last + 1;
}

uint64_t input_span(const ReduceGeometry& g) {
  uint64_t last = span(g, g.out_in_stride) - 1;
  for (int d = 0; d < g.red_rank; ++d) last += static_cast<uint64_t>(g.red_shape[d] - 1) * g.red_in_stride[d];
  return last + 1;
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
  plan.spec.wide = wide_float32_math(context);
  plan.spec.subgroups = plan.spec.workgroup && plain_combine(r.op) && context.has(runtime::Feature::Subgroup) &&
      plan.spec.can_use_subgroups();
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

// The part of the input an extent covers, from its first element.
DeviceTensorRef input_part(const ReduceProblem& r, const Extent& e) {
  DeviceTensorRef part = r.input;
  part.element_offset += e.first;
  return part;
}

bool extent_fits(runtime::DeviceContext& context, const ReduceProblem& r, const Extent& e) {
  return fits_one_binding(context, input_part(r, e), e.last - e.first + 1);
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
  if (!fits_one_binding(context, r.out, span(g, g.out_stride)) ||
      (r.indices && !fits_one_binding(context, *r.indices, span(g, g.index_stride))))
    return "an output larger than one storage binding";
  if (g.out_numel == 0 || fits_one_binding(context, r.input, input_span(g))) return "";
  // A larger input runs in dispatches over ranges of work items, each binding what its items read.
  if (plan.items > 0xFFFFFFFFull) return "more than 2^32 work items";
  for (uint64_t w : {uint64_t{0}, plan.items - 1}) {
    const auto one = items_extent(r, plan, w, w + 1);
    if (!one) return "an input larger than one storage binding, reduced over more than one strided dimension";
    if (!extent_fits(context, r, *one)) return "one output reads more than one storage binding";
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
  Launch launch(context, op_name(r.op), r.input.dtype);
  wgsl::ReduceParams p = {};
  // Bindings in reduce.wgsl's order; an operand the variant does not use is bound to `out` instead.
  p.out_offset = launch.bind(r.out, spec.stage == Stage::Partial ? plan.items : span(g, g.out_stride));
  if (windowed) {
    const Extent e = *items_extent(r, plan, w0, w1);
    p.input_offset = launch.bind(input_part(r, e), e.last - e.first + 1) - static_cast<uint32_t>(e.first);
  } else {
    p.input_offset = launch.bind(r.input, input_span(g));
  }
  if (with_indices) {
    // int64 indices are written as two u32 words, so no variant needs shader-int64 for them.
    const DeviceTensorRef words{r.indices->buffer, r.indices->buffer_size, r.indices->element_offset * 2, c10::kInt};
    p.index_offset = launch.bind(words, 2 * span(g, g.index_stride));
  } else {
    launch.bind(r.out, 1);
  }
  const bool aux_index = with_aux && is_arg(r.op), aux_value = with_aux && !is_arg(r.op);
  const uint32_t index_at = launch.bind(aux_index ? aux->ref : r.out, aux_index ? aux->count : 1);
  const uint32_t value_at = launch.bind(aux_value ? aux->ref : r.out, aux_value ? aux->count : 1);
  if (with_aux) {
    p.aux_offset = aux_index ? index_at : value_at;
    p.split_row_length = static_cast<uint32_t>(aux->row_length);
    p.split_slice_length = static_cast<uint32_t>(aux->slice);
  }
  p.first = static_cast<uint32_t>(w0);
  p.end = static_cast<uint32_t>(w1);
  p.row_length = static_cast<uint32_t>(g.red_numel);
  p.slices = static_cast<uint32_t>(plan.slices);
  p.slice_length = static_cast<uint32_t>(plan.slice);
  const Value acc_value = dtype_info(r.out.dtype)->value;
  encode_scalar(r.scale, acc_value, r.out.dtype, &p.scalars[0][0]);
  encode_scalar(r.p, acc_value, r.out.dtype, &p.scalars[0][2]);
  // Rank 0 on either side runs as rank 1 of size 1 (the kernel's index arithmetic takes at least one dim).
  for (int d = 0; d < kMaxCopyRank; ++d) {
    p.out_shape[d / 4][d % 4] = d < g.out_rank ? g.out_shape[d] : 1;
    p.red_shape[d / 4][d % 4] = d < g.red_rank ? g.red_shape[d] : 1;
    p.out_in_stride[d / 4][d % 4] = g.out_in_stride[d];
    p.out_stride[d / 4][d % 4] = g.out_stride[d];
    p.index_stride[d / 4][d % 4] = g.index_stride[d];
    p.red_in_stride[d / 4][d % 4] = g.red_in_stride[d];
  }
  const runtime::StorageBinding& input = launch.binding(1);
  Spec chosen = spec;
  chosen.vec4 = spec.stage == Stage::Partial && plain_combine(r.op) &&
      (r.input.dtype == c10::kFloat || r.input.dtype == c10::kInt) &&
      g.red_rank == 1 && g.red_in_stride[0] == 1 && g.red_numel % 4 == 0 && plan.slice % 4 == 0 &&
      (g.out_rank == 0 || (g.out_rank == 1 && g.out_in_stride[0] % 4 == 0)) && p.input_offset % 4 == 0 &&
      input.offset % 16 == 0 && input.size % 16 == 0;
  const uint64_t count = w1 - w0;
  launch.run(chosen.name(), [&] { return chosen.source(); }, p, spec.workgroup ? count : groups_for(count),
             chosen.entry().c_str());
}

// Halves the range of work items until what each part reads fits one binding.
void launch_range(runtime::DeviceContext& context, const ReduceProblem& r, const Spec& spec, const Plan& plan,
                  uint64_t w0, uint64_t w1, bool windowed, const Aux* aux = nullptr) {
  if (windowed && w1 - w0 > 1 && !extent_fits(context, r, *items_extent(r, plan, w0, w1))) {
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
  const bool windowed = !fits_one_binding(context, r.input, input_span(g));
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
