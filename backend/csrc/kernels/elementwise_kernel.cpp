#include "kernels/elementwise_kernel.h"

#include <c10/util/Exception.h>

#include <vector>

#include "kernels/dtypes.h"
#include "kernels/elementwise_math.h"
#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/launch.h"
#include "kernels/split.h"
#include "kernels/wgsl_family.h"
#include "kernels/wgsl_store.h"

namespace torch_dml::kernels {
namespace {

// elementwise.wgsl and elementwise_quad.wgsl share their uniform block (lib/elementwise_params.wgsl).
using Params = wgsl::ElementwiseParams;
static_assert(sizeof(Params) == sizeof(wgsl::ElementwiseQuadParams));
static_assert(kMaxElementwiseInputs + kMaxElementwiseParams <= static_cast<int>(sizeof(Params::scalars) / 8));

// Per input a, b, c: the names of its holes in elementwise.wgsl and elementwise_quad.wgsl.
struct InputHoles {
  const char* binding;
  const char* type;
  const char* array;   // elementwise.wgsl
  const char* load;
  const char* quad;    // elementwise_quad.wgsl
  const char* words;
  const char* lane;
};
constexpr InputHoles kInputHoles[kMaxElementwiseInputs] = {
    {"a_binding", "a_type", "a_array", "load_a", "a_quad", "words_a", "lane_a"},
    {"b_binding", "b_type", "b_array", "load_b", "b_quad", "words_b", "lane_b"},
    {"c_binding", "c_type", "c_array", "load_c", "c_quad", "words_c", "lane_c"},
};
constexpr const char* kInputArrays[kMaxElementwiseInputs] = {"in_a", "in_b", "in_c"};
constexpr const char* kInputOffsets[kMaxElementwiseInputs] = {"p.a_offset", "p.b_offset", "p.c_offset"};
constexpr const char* kParamHoles[kMaxElementwiseParams] = {"s0", "s1", "s2", "s3", "s4"};

Value value_of(c10::ScalarType type) {
  return dtype_info(type)->value;
}

// The type the expression computes in: bool tensors use the op's bool expression when it has one,
// and otherwise compute as i32 (PyTorch's bool arithmetic is integer arithmetic stored as 0/1).
Value compute_value(const ElementwiseOp& op, c10::ScalarType compute) {
  if (op.logical) return Value::Bool;
  if (compute == c10::kBool) return op.bool_expr ? Value::Bool : Value::I32;
  return value_of(compute);
}

const char* expression(const ElementwiseOp& op, Value value) {
  switch (value) {
    case Value::Bool: return op.bool_expr;
    case Value::I32:
    case Value::I64: return op.int_expr;
    default: return op.float_expr;
  }
}

Value input_value(const ElementwiseOp& op, int k, Value compute) {
  return op.inputs_as && op.inputs_as[k] == 'b' ? Value::Bool : compute;
}

// On the quad path an operand's four elements are one vec4<u32> (32-bit dtypes), one vec2<u32>
// (16-bit) or one u32 (8-bit); lib/quad_words.wgsl spreads and packs them.
const char* quad_type(c10::ScalarType type) {
  switch (c10::elementSize(type)) {
    case 4: return "vec4<u32>";
    case 2: return "vec2<u32>";
    default: return "u32";
  }
}

std::string quad_suffix(c10::ScalarType type) {
  return std::to_string(c10::elementSize(type));
}

struct KernelSpec {
  const ElementwiseProblem& pr;
  Value compute;
  Store store;
  bool quad = false; // four elements per thread, every operand dense (see quad_path)
  bool wide = false; // float32 helpers may compute in float64 (the device's, so not in code())

  // The spec packed into 64 bits, for the per-op pipeline lookup that runs on every dispatch.
  uint64_t code() const {
    uint64_t c = static_cast<uint64_t>(compute);
    c = c << 7 | static_cast<uint64_t>(pr.out.dtype);
    for (int k = 0; k < kMaxElementwiseInputs; ++k) {
      const bool used = k < pr.input_count;
      const uint64_t input = !used ? 0x7F : pr.inputs[k].is_scalar ? 0x7E : static_cast<uint64_t>(pr.inputs[k].tensor.dtype);
      c = c << 7 | input;
    }
    c = c << 4 | static_cast<uint64_t>(pr.rank);
    c = c << 2 | static_cast<uint64_t>(store);
    return c << 1 | (quad ? 1 : 0);
  }

  std::string name() const {
    std::string text = "ew/";
    text += pr.op->name;
    text += "/";
    text += wgsl_type(compute);
    text += ">";
    text += dtype_info(pr.out.dtype)->name;
    for (int k = 0; k < pr.input_count; ++k) {
      text += pr.inputs[k].is_scalar ? ",s" : ",";
      if (!pr.inputs[k].is_scalar) text += dtype_info(pr.inputs[k].tensor.dtype)->name;
    }
    text += "/r" + std::to_string(pr.rank);
    text += store == Store::Plain ? "/plain" : store == Store::Scatter ? "/scatter" : "/word";
    if (quad) text += "/v4";
    return text;
  }

  bool bound(int k) const { return k < pr.input_count && !pr.inputs[k].is_scalar; }

  // Input k as value() takes it, from `raw` (its dtype's computation type); a CPU scalar from its
  // slot; zero for an input the op does not have.
  std::string input(int k, const std::string& raw) const {
    const Value want = input_value(*pr.op, k, compute);
    if (k >= pr.input_count) return zero_literal(want);
    if (pr.inputs[k].is_scalar) return decode_scalar(k, want);
    return convert_value(raw, value_of(pr.inputs[k].tensor.dtype), want);
  }

  std::string source_code() const {
    const ElementwiseOp& op = *pr.op;
    const std::string expr = substitute_type(expression(op, compute), wgsl_type(compute));
    const Value result = op.result_bool ? Value::Bool : compute;
    std::vector<Hole> holes = {
        {"helpers", math_helpers(expr, compute, wide)},
        {"store_type", store_value_type(pr.out.dtype)},
        {"expression", expr},
        {"store", store_form(pr.out.dtype, convert_value("r", result, value_of(pr.out.dtype)))},
        {"workgroup_size", std::to_string(kWorkgroupSize)},
    };
    for (int i = 0; i < kMaxElementwiseParams; ++i)
      holes.push_back({kParamHoles[i], i < pr.param_count ? decode_scalar(kMaxElementwiseInputs + i, compute)
                                                          : zero_literal(compute)});
    // Tensor inputs bind after out in order, then Params; the others sit at binding numbers past
    // those, which the entry point never reads.
    uint32_t binding = 1, spare = 2;
    for (int k = 0; k < kMaxElementwiseInputs; ++k) spare += bound(k) ? 1 : 0;
    for (int k = 0; k < kMaxElementwiseInputs; ++k) {
      const InputHoles& h = kInputHoles[k];
      const bool tensor = bound(k);
      const c10::ScalarType type = tensor ? pr.inputs[k].tensor.dtype : c10::kInt;
      holes.push_back({h.binding, std::to_string(tensor ? binding++ : spare++)});
      holes.push_back({h.type, wgsl_type(input_value(op, k, compute))});
      if (quad) {
        holes.push_back({h.quad, quad_type(type)});
        holes.push_back({h.words, tensor ? "quad_words_" + quad_suffix(type) + "(" + kInputArrays[k] + "[(" +
                                               kInputOffsets[k] + " >> 2u) + t])"
                                         : "array<u32, 4>(0u, 0u, 0u, 0u)"});
        holes.push_back({h.lane, input(k, typed_load(type, "w", "j"))});
      } else {
        holes.push_back({h.array, typed_array_type(type)});
        holes.push_back({h.load, input(k, typed_load(type, kInputArrays[k], "strided_index(e, " + std::to_string(k + 1) +
                                                                             "u, " + kInputOffsets[k] + ")"))});
      }
    }
    holes.push_back({"params_binding", std::to_string(binding)});
    if (quad) {
      holes.push_back({"out_quad", quad_type(pr.out.dtype)});
      holes.push_back({"pack", "pack_quad_" + quad_suffix(pr.out.dtype)});
      return render(wgsl::elementwise_quad, holes);
    }
    holes.push_back({"out_array", store == Store::Scatter ? "atomic<u32>" : typed_array_type(pr.out.dtype)});
    holes.push_back({"rank", std::to_string(pr.rank)});
    holes.push_back({"lanes_log2", lanes_log2(c10::elementSize(pr.out.dtype))});
    holes.push_back({"main", std::string(store_part(store))});
    return render(wgsl::elementwise, holes);
  }
};

bool dense(const ElementwiseProblem& pr, int operand) {
  return strided_dense(pr.rank, pr.shape, pr.strides[operand]);
}

// Every operand dense and of 1, 2 or 4 bytes (the caller checks they are aligned to four elements).
bool quad_path(const ElementwiseProblem& pr, Store store) {
  auto fits = [](c10::ScalarType type) { return c10::elementSize(type) <= 4; };
  if (store == Store::Scatter || pr.numel % 4 != 0 || !fits(pr.out.dtype) || !dense(pr, 0)) return false;
  for (int k = 0; k < pr.input_count; ++k) {
    if (pr.inputs[k].is_scalar) continue;
    if (!fits(pr.inputs[k].tensor.dtype) || !dense(pr, k + 1)) return false;
  }
  return true;
}

void launch_piece(runtime::DeviceContext& context, const ElementwiseProblem& pr) {
  KernelSpec spec{pr, compute_value(*pr.op, pr.compute), store_mode(c10::elementSize(pr.out.dtype), dense(pr, 0))};
  spec.wide = wide_float32_math(context);
  Launch launch(context, pr.op->name, pr.compute);
  Params p;
  uint32_t bound = 1;
  uint32_t* offsets[kMaxElementwiseInputs] = {&p.a_offset, &p.b_offset, &p.c_offset};
  uint32_t* scalars = &p.scalars[0][0];
  p.numel = static_cast<uint32_t>(pr.numel);
  p.out_offset = launch.bind(pr.out, strided_extent(pr.rank, pr.shape, pr.strides[0]));
  set_strided_shape(p, pr.rank, pr.shape);
  set_strided_operand(p, 0, pr.rank, pr.strides[0]);
  for (int k = 0; k < pr.input_count; ++k) {
    const ElementwiseInput& in = pr.inputs[k];
    if (in.is_scalar) {
      encode_scalar(in.value, input_value(*pr.op, k, spec.compute), pr.compute, scalars + 2 * k);
      continue;
    }
    *offsets[k] = launch.bind(in.tensor, strided_extent(pr.rank, pr.shape, pr.strides[k + 1]));
    ++bound;
    set_strided_operand(p, k + 1, pr.rank, pr.strides[k + 1]);
  }
  for (int i = 0; i < pr.param_count; ++i)
    encode_scalar(pr.params[i], spec.compute, pr.compute, scalars + 2 * (kMaxElementwiseInputs + i));
  uint64_t threads = pr.numel;
  if (spec.store == Store::Word) {
    const WordSpan words = word_span(c10::elementSize(pr.out.dtype), p.out_offset, pr.numel);
    p.first_word = static_cast<uint32_t>(words.first);
    p.words = static_cast<uint32_t>(words.count);
    threads = words.count;
  }
  if (quad_path(pr, spec.store)) {
    bool aligned = p.out_offset % 4 == 0;
    for (int k = 0; k < pr.input_count; ++k) aligned = aligned && *offsets[k] % 4 == 0;
    for (uint32_t b = 0; b < bound; ++b) aligned = aligned && launch.binding(b).offset % 16 == 0;
    if (aligned) {
      spec.quad = true;
      p.numel = static_cast<uint32_t>(pr.numel / 4);
      threads = pr.numel / 4;
    }
  }
  launch.run(PipelineKey{pr.op, spec.code()}, [&] { return spec.name(); }, [&] { return spec.source_code(); }, p,
             groups_for(threads));
}

std::string needs_feature(runtime::DeviceContext& context, c10::ScalarType type) {
  const auto info = dtype_info(type);
  if (!info) return std::string("no WGSL type for ") + c10::toString(type);
  if (info->needs && !context.has(*info->needs))
    return std::string(c10::toString(type)) + " needs " + std::string(runtime::feature_name(*info->needs));
  return "";
}

// Rank 0 runs as rank 1 of one element.
void launch_checked(runtime::DeviceContext& context, const ElementwiseProblem& problem) {
  if (problem.numel == 0) return;
  const auto run = [&](const ElementwiseProblem& piece) { launch_piece(context, piece); };
  if (problem.rank == 0) {
    ElementwiseProblem scalar = problem;
    scalar.rank = 1;
    scalar.shape[0] = 1;
    run_in_pieces(context, scalar, run);
    return;
  }
  run_in_pieces(context, problem, run);
}

} // namespace

std::string elementwise_unsupported_reason(runtime::DeviceContext& context, const ElementwiseProblem& pr) {
  if (pr.rank > kMaxRank) return "rank above " + std::to_string(kMaxRank);
  for (c10::ScalarType type : {pr.compute, pr.out.dtype}) {
    std::string reason = needs_feature(context, type);
    if (!reason.empty()) return reason;
  }
  for (int k = 0; k < pr.input_count; ++k) {
    if (pr.inputs[k].is_scalar) continue;
    std::string reason = needs_feature(context, pr.inputs[k].tensor.dtype);
    if (!reason.empty()) return reason;
  }
  const Value compute = compute_value(*pr.op, pr.compute);
  if (!(pr.op->dtypes & dtype_bit(pr.compute)) || !expression(*pr.op, compute))
    return std::string("no kernel for ") + c10::toString(pr.compute);
  // f64 helpers test bits through u64.
  if (compute == Value::F64 && !context.has(runtime::Feature::ShaderInt64)) return "float64 needs shader-int64 too";
  return "";
}

void elementwise(runtime::DeviceContext& context, const ElementwiseProblem& problem) {
  const std::string reason = elementwise_unsupported_reason(context, problem);
  TORCH_CHECK(reason.empty(), "torch_dml: ", problem.op->name, " on ", problem.compute, " cannot run on ",
              context.describe(), ": ", reason);
  launch_checked(context, problem);
}

bool try_elementwise(runtime::DeviceContext& context, const ElementwiseProblem& problem) {
  if (!elementwise_unsupported_reason(context, problem).empty()) return false;
  launch_checked(context, problem);
  return true;
}

} // namespace torch_dml::kernels
