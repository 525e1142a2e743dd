#include "kernels/elementwise_kernel.h"

#include <c10/util/Exception.h>

#include <cmath>
#include <cstring>
#include <sstream>

#include "kernels/binding_window.h"
#include "kernels/dtypes.h"
#include "kernels/elementwise_math.h"
#include "kernels/pipeline_cache.h"
#include "kernels/wgsl_store.h"
#include "runtime/stream.h"

namespace torch_dml::kernels {
namespace {

constexpr uint32_t kWorkgroup = 256;
constexpr int kScalarSlots = kMaxElementwiseInputs + kMaxElementwiseParams; // 64-bit each

struct Params {
  uint32_t head[4];  // numel, out element offset, unused, words (Store::Word)
  uint32_t extra[4]; // first word (Store::Word)
  uint32_t offsets[4]; // input element offsets
  uint32_t shape[kMaxCopyRank];
  uint32_t strides[1 + kMaxElementwiseInputs][kMaxCopyRank];
  uint32_t scalars[kScalarSlots * 2]; // slot i: words 2i (low) and 2i + 1 (high)
};
static_assert(sizeof(Params) % 16 == 0);

const char* kInputNames[] = {"a", "b", "c"};

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

// A scalar's two 32-bit words in the uniform block, for decoding as `value` in WGSL. Narrow integer
// computations first wrap the scalar to their dtype, as a CPU kernel's static_cast would (-3 is 253
// in a uint8 clamp).
void encode_scalar(const c10::Scalar& s, Value value, c10::ScalarType compute, uint32_t* words) {
  switch (value) {
    case Value::F32: {
      const float f = s.to<float>();
      std::memcpy(&words[0], &f, 4);
      break;
    }
    case Value::F64: {
      // The double's own bits (a float64 kernel always has shader-int64 to reassemble them).
      const double d = s.to<double>();
      std::memcpy(&words[0], &d, 8);
      break;
    }
    case Value::I64: {
      const int64_t v = s.to<int64_t>();
      words[0] = static_cast<uint32_t>(static_cast<uint64_t>(v));
      words[1] = static_cast<uint32_t>(static_cast<uint64_t>(v) >> 32);
      break;
    }
    case Value::I32: {
      const int64_t v = s.to<int64_t>();
      int32_t wrapped = static_cast<int32_t>(v);
      if (compute == c10::kByte) wrapped = static_cast<uint8_t>(v);
      if (compute == c10::kChar) wrapped = static_cast<int8_t>(v);
      if (compute == c10::kShort) wrapped = static_cast<int16_t>(v);
      words[0] = static_cast<uint32_t>(wrapped);
      break;
    }
    case Value::Bool: words[0] = s.to<bool>() ? 1u : 0u; break;
  }
}

std::string decode_scalar(int slot, Value value) {
  static const char* lanes[] = {"x", "y", "z", "w"};
  const std::string vec = "p.scalars[" + std::to_string(slot / 2) + "].";
  const std::string lo = vec + lanes[(slot % 2) * 2], hi = vec + lanes[(slot % 2) * 2 + 1];
  switch (value) {
    case Value::F32: return "bitcast<f32>(" + lo + ")";
    case Value::F64: return "bitcast<f64>((u64(" + hi + ") << 32u) | u64(" + lo + "))";
    case Value::I64: return "((i64(bitcast<i32>(" + hi + ")) << 32u) | i64(" + lo + "))";
    case Value::I32: return "bitcast<i32>(" + lo + ")";
    case Value::Bool: return "(" + lo + " != 0u)";
  }
  return "?";
}

// Whether an operand's elements lie in iteration order with no gaps (TensorIterator coalesces such
// operands to rank 1).
bool dense(const ElementwiseProblem& pr, int operand) {
  uint64_t expected = 1;
  for (int d = 0; d < pr.rank; ++d) {
    if (pr.shape[d] != 1 && pr.strides[operand][d] != expected) return false;
    expected *= pr.shape[d];
  }
  return true;
}

Store store_mode(const ElementwiseProblem& pr) {
  if (!is_packed(c10::elementSize(pr.out.dtype))) return Store::Plain;
  return dense(pr, 0) ? Store::Word : Store::Scatter;
}

// On the four-elements-per-thread path an operand's four elements are one vec4<u32> (32-bit dtypes),
// one vec2<u32> (16-bit) or one u32 (8-bit).
const char* quad_type(c10::ScalarType type) {
  switch (c10::elementSize(type)) {
    case 4: return "vec4<u32>";
    case 2: return "vec2<u32>";
    default: return "u32";
  }
}

// WGSL that spreads a loaded quad_type value `v` into an array<u32> named `name`, for typed_load().
std::string quad_words(c10::ScalarType type, const std::string& name, const std::string& v) {
  switch (c10::elementSize(type)) {
    case 4: return "  let " + name + " = array<u32, 4>(" + v + ".x, " + v + ".y, " + v + ".z, " + v + ".w);\n";
    case 2: return "  let " + name + " = array<u32, 2>(" + v + ".x, " + v + ".y);\n";
    default: return "  let " + name + " = array<u32, 1>(" + v + ");\n";
  }
}

struct KernelSpec {
  const ElementwiseProblem& pr;
  Value compute;
  Store store;
  bool vec4 = false; // four elements per thread, every operand dense (see vec4_path)

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
    return c << 1 | (vec4 ? 1 : 0);
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
    if (vec4) text += "/v4";
    return text;
  }

  std::string source_code() const {
    const ElementwiseOp& op = *pr.op;
    const std::string expr = substitute_type(expression(op, compute), wgsl_type(compute));
    const Value result = op.result_bool ? Value::Bool : compute;
    std::ostringstream wgsl;
    wgsl << "// generated by torch_dml kernels/elementwise_kernel.cpp from backend/ops.yaml: " << name() << "\n";
    wgsl << "struct Params {\n  head: vec4<u32>,\n  extra: vec4<u32>,\n  offsets: vec4<u32>,\n"
            "  shape: array<vec4<u32>, 2>,\n";
    for (int k = 0; k <= kMaxElementwiseInputs; ++k) wgsl << "  stride" << k << ": array<vec4<u32>, 2>,\n";
    wgsl << "  scalars: array<vec4<u32>, " << kScalarSlots / 2 << ">,\n}\n";
    // Every storage binding is read_write: in-place ops bind one buffer as output and input, and a
    // read-only plus read-write binding of one buffer in one dispatch is a validation error.
    const char* out_type = vec4 ? quad_type(pr.out.dtype) : store == Store::Scatter ? "atomic<u32>" : typed_array_type(pr.out.dtype);
    wgsl << "@group(0) @binding(0) var<storage, read_write> dst: array<" << out_type << ">;\n";
    uint32_t binding = 1;
    for (int k = 0; k < pr.input_count; ++k) {
      if (pr.inputs[k].is_scalar) continue;
      wgsl << "@group(0) @binding(" << binding++ << ") var<storage, read_write> in" << k << ": array<"
           << (vec4 ? quad_type(pr.inputs[k].tensor.dtype) : typed_array_type(pr.inputs[k].tensor.dtype)) << ">;\n";
    }
    wgsl << "@group(0) @binding(" << binding << ") var<uniform> p: Params;\n";
    wgsl << store_helpers(pr.out.dtype);
    wgsl << math_helpers(expr, compute);
    static const char* offset_lanes[] = {"p.offsets.x", "p.offsets.y", "p.offsets.z"};
    if (!vec4) {
      for (int k = 0; k < pr.input_count; ++k) {
        if (!pr.inputs[k].is_scalar)
          wgsl << index_function("index" + std::to_string(k), "shape", "stride" + std::to_string(k + 1),
                                 offset_lanes[k], pr.rank);
      }
      if (store != Store::Word) wgsl << index_function("dst_index", "shape", "stride0", "p.head.y", pr.rank);
    }

    // value(): the stored form of one result, from the element position (or, on the vec4 path, from
    // the 32-bit words of the tensor inputs).
    wgsl << "fn value(";
    wgsl << "e: u32";
    for (int k = 0; vec4 && k < pr.input_count; ++k)
      if (!pr.inputs[k].is_scalar)
        wgsl << ", x" << k << ": " << wgsl_type(value_of(pr.inputs[k].tensor.dtype));
    wgsl << ") -> " << store_value_type(pr.out.dtype) << " {\n";
    for (int k = 0; k < pr.input_count; ++k) {
      const Value want = input_value(op, k, compute);
      std::string v;
      if (pr.inputs[k].is_scalar) {
        v = decode_scalar(k, want);
      } else {
        const c10::ScalarType type = pr.inputs[k].tensor.dtype;
        const std::string raw = vec4 ? "x" + std::to_string(k)
                                     : typed_load(type, "in" + std::to_string(k), "index" + std::to_string(k) + "(e)");
        v = convert_value(raw, value_of(type), want);
      }
      wgsl << "  let " << kInputNames[k] << " = " << v << ";\n";
    }
    for (int i = 0; i < pr.param_count; ++i)
      wgsl << "  let s" << i << " = " << decode_scalar(kMaxElementwiseInputs + i, compute) << ";\n";
    wgsl << "  let r = " << expr << ";\n";
    wgsl << "  return " << store_form(pr.out.dtype, convert_value("r", result, value_of(pr.out.dtype))) << ";\n}\n";

    wgsl << "@compute @workgroup_size(" << kWorkgroup << ")\n"
         << "fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {\n"
         << "  let t = gid.x + gid.y * groups.x * " << kWorkgroup << "u;\n";
    if (!vec4) {
      wgsl << store_body(store, c10::elementSize(pr.out.dtype)) << "}\n";
      return wgsl.str();
    }
    // p.head.x counts groups of four here; element offsets are multiples of 4.
    wgsl << "  if (t >= p.head.x) { return; }\n";
    std::string args[4] = {"4u * t", "4u * t + 1u", "4u * t + 2u", "4u * t + 3u"};
    for (int k = 0; k < pr.input_count; ++k) {
      if (pr.inputs[k].is_scalar) continue;
      const c10::ScalarType type = pr.inputs[k].tensor.dtype;
      const std::string v = "v" + std::to_string(k), w = "w" + std::to_string(k);
      wgsl << "  let " << v << " = in" << k << "[(" << offset_lanes[k] << " >> 2u) + t];\n" << quad_words(type, w, v);
      for (int lane = 0; lane < 4; ++lane) args[lane] += ", " + typed_load(type, w, std::to_string(lane) + "u");
    }
    std::string r[4];
    for (int lane = 0; lane < 4; ++lane) r[lane] = "value(" + args[lane] + ")";
    wgsl << "  dst[(p.head.y >> 2u) + t] = ";
    switch (c10::elementSize(pr.out.dtype)) {
      case 4: wgsl << "vec4<u32>(" << r[0] << ", " << r[1] << ", " << r[2] << ", " << r[3] << ");\n}\n"; break;
      case 2:
        wgsl << "vec2<u32>(" << r[0] << " | (" << r[1] << " << 16u), " << r[2] << " | (" << r[3] << " << 16u));\n}\n";
        break;
      default:
        wgsl << r[0] << " | (" << r[1] << " << 8u) | (" << r[2] << " << 16u) | (" << r[3] << " << 24u);\n}\n";
    }
    return wgsl.str();
  }
};

Window window_of(runtime::DeviceContext& context, const DeviceTensorRef& t, const uint32_t* strides,
                 const ElementwiseProblem& pr) {
  uint64_t last = t.element_offset;
  for (int d = 0; d < pr.rank; ++d) last += static_cast<uint64_t>(pr.shape[d] - 1) * strides[d];
  return binding_window(context, t.buffer_size, c10::elementSize(t.dtype), t.element_offset, last);
}

// Every operand dense, of 1, 2 or 4 bytes, and (checked by the caller) aligned to four elements: each
// thread then moves four elements of every operand in one load (a vec4, vec2 or single word) and
// computes no index, the path memory-bound ops need to reach a GPU's bandwidth; packed outputs are
// written as whole words, which only this thread's elements occupy.
bool vec4_path(const ElementwiseProblem& pr, Store store) {
  auto fits = [](c10::ScalarType type) { return c10::elementSize(type) <= 4; };
  if (store == Store::Scatter || pr.numel % 4 != 0 || !fits(pr.out.dtype) || !dense(pr, 0)) return false;
  for (int k = 0; k < pr.input_count; ++k) {
    if (pr.inputs[k].is_scalar) continue;
    if (!fits(pr.inputs[k].tensor.dtype) || !dense(pr, k + 1)) return false;
  }
  return true;
}

void launch(runtime::DeviceContext& context, const ElementwiseProblem& pr) {
  KernelSpec spec{pr, compute_value(*pr.op, pr.compute), store_mode(pr)};
  Params params = {};
  runtime::StorageBinding bindings[1 + kMaxElementwiseInputs];
  uint32_t storage_count = 0;
  const Window out_window = window_of(context, pr.out, pr.strides[0], pr);
  bindings[storage_count++] = {pr.out.buffer, out_window.offset, out_window.size};
  params.head[0] = static_cast<uint32_t>(pr.numel);
  params.head[1] = static_cast<uint32_t>(out_window.element_offset);
  for (int k = 0; k < pr.input_count; ++k) {
    const ElementwiseInput& in = pr.inputs[k];
    if (in.is_scalar) {
      encode_scalar(in.value, input_value(*pr.op, k, spec.compute), pr.compute, &params.scalars[2 * k]);
      continue;
    }
    const Window w = window_of(context, in.tensor, pr.strides[k + 1], pr);
    params.offsets[k] = static_cast<uint32_t>(w.element_offset);
    bindings[storage_count++] = {in.tensor.buffer, w.offset, w.size};
  }
  for (int i = 0; i < pr.param_count; ++i)
    encode_scalar(pr.params[i], spec.compute, pr.compute, &params.scalars[2 * (kMaxElementwiseInputs + i)]);
  for (int d = 0; d < pr.rank; ++d) {
    params.shape[d] = pr.shape[d];
    for (int k = 0; k <= pr.input_count; ++k) params.strides[k][d] = pr.strides[k][d];
  }
  uint64_t threads = pr.numel;
  if (spec.store == Store::Word) {
    const uint64_t lanes = c10::elementSize(pr.out.dtype) == 1 ? 4 : 2;
    const uint64_t first = out_window.element_offset / lanes;
    const uint64_t end = (out_window.element_offset + pr.numel + lanes - 1) / lanes;
    params.extra[0] = static_cast<uint32_t>(first);
    params.head[3] = static_cast<uint32_t>(end - first);
    threads = end - first;
  }
  if (vec4_path(pr, spec.store)) {
    bool aligned = out_window.element_offset % 4 == 0 && out_window.offset % 16 == 0;
    for (int k = 0; k < pr.input_count; ++k) aligned = aligned && params.offsets[k] % 4 == 0;
    for (uint32_t b = 1; b < storage_count; ++b) aligned = aligned && bindings[b].offset % 16 == 0;
    if (aligned) {
      spec.vec4 = true;
      params.head[0] = static_cast<uint32_t>(pr.numel / 4);
      threads = pr.numel / 4;
    }
  }
  const Grid grid = grid_for(context, (threads + kWorkgroup - 1) / kWorkgroup);
  WGPUComputePipeline compiled = pipeline(context, PipelineKey{pr.op, spec.code()}, storage_count,
                                         [&] { return spec.name(); }, [&] { return spec.source_code(); });
  context.stream().dispatch(compiled, storage_count, bindings, &params, sizeof(params), grid.x, grid.y);
}

// Splits the slowest-varying dimension in halves until every operand's window fits one binding and
// the element count fits 32 bits. The pieces run as successive dispatches.
void launch_split(runtime::DeviceContext& context, const ElementwiseProblem& pr) {
  if (pr.numel == 0) return;
  bool fits = pr.numel <= 0xFFFFFFFFull && fits_binding(context, window_of(context, pr.out, pr.strides[0], pr));
  for (int k = 0; fits && k < pr.input_count; ++k)
    if (!pr.inputs[k].is_scalar)
      fits = fits_binding(context, window_of(context, pr.inputs[k].tensor, pr.strides[k + 1], pr));
  int d = pr.rank - 1;
  while (d >= 0 && pr.shape[d] <= 1) --d;
  if (fits || d < 0) {
    launch(context, pr);
    return;
  }
  const uint32_t head = pr.shape[d] / 2;
  ElementwiseProblem first = pr, second = pr;
  first.shape[d] = head;
  second.shape[d] = pr.shape[d] - head;
  first.numel = pr.numel / pr.shape[d] * head;
  second.numel = pr.numel - first.numel;
  second.out.element_offset += static_cast<uint64_t>(head) * pr.strides[0][d];
  for (int k = 0; k < pr.input_count; ++k)
    second.inputs[k].tensor.element_offset += static_cast<uint64_t>(head) * pr.strides[k + 1][d];
  launch_split(context, first);
  launch_split(context, second);
}

void launch_checked(runtime::DeviceContext& context, const ElementwiseProblem& problem);

std::string needs_feature(runtime::DeviceContext& context, c10::ScalarType type) {
  const auto info = dtype_info(type);
  if (!info) return std::string("no WGSL type for ") + c10::toString(type);
  if (info->needs && !context.has(*info->needs))
    return std::string(c10::toString(type)) + " needs " + std::string(runtime::feature_name(*info->needs));
  return "";
}

} // namespace

std::string elementwise_unsupported_reason(runtime::DeviceContext& context, const ElementwiseProblem& pr) {
  if (pr.rank > kMaxCopyRank) return "rank above " + std::to_string(kMaxCopyRank);
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

namespace {

void launch_checked(runtime::DeviceContext& context, const ElementwiseProblem& problem) {
  if (problem.numel == 0) return;
  if (problem.rank == 0) {
    ElementwiseProblem scalar = problem;
    scalar.rank = 1;
    scalar.shape[0] = 1;
    launch_split(context, scalar);
    return;
  }
  launch_split(context, problem);
}

} // namespace

} // namespace torch_dml::kernels
