#include "kernels/matmul_kernel.h"

#include <c10/util/Exception.h>

#include <algorithm>

#include "kernels/binding_window.h"
#include "kernels/dtypes.h"
#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/launch.h"

namespace torch_dml::kernels {
namespace {

// Two kernels, both indexing every operand through its strides (any layout works unchanged):
// wgsl/gemm.wgsl, a 64x64 tile for every dtype, and wgsl/gemm128.wgsl, a 128x128 register-blocked tile
// in float32 for outputs of at least 128x128.
constexpr uint32_t kTile = 64;
// Both kernels declare the same uniform block; one C++ struct fills either.
static_assert(sizeof(wgsl::GemmParams) == sizeof(wgsl::Gemm128Params) &&
              offsetof(wgsl::GemmParams, scalars) == offsetof(wgsl::Gemm128Params, scalars));
constexpr uint32_t kLargeTile = 128;
constexpr uint32_t kLargeSlice = 8;

Value accumulator_value(c10::ScalarType type) {
  return dtype_info(gemm_accumulator(type))->value;
}

// The holes both kernels share: operand loads (the addend's, unread without one) and alpha / beta.
std::vector<Hole> shared_holes(c10::ScalarType type, bool with_addend, bool wide) {
  const Value value = accumulator_value(type);
  const auto load = [&](const char* array) { return wide ? std::string(array) + "[i]" : typed_load(type, array, "i"); };
  return {{"load_a", load("a")},
          {"load_b", load("b")},
          {"load_addend", load("addend")},
          {"alpha", decode_scalar(0, value)},
          {"beta", decode_scalar(1, value)},
          {"with_addend", with_addend ? "true" : "false"}};
}

// float64 and int64 run in their own type throughout; the narrower ints accumulate in int32 (wrapping,
// so the result cast back equals the CPU's wrapping arithmetic), the other floats in float32.
std::string small_source(c10::ScalarType type, bool with_addend) {
  const bool wide = type == c10::kDouble || type == c10::kLong;
  const std::string acc = wgsl_type(accumulator_value(type));
  auto holes = shared_holes(type, with_addend, wide);
  holes.push_back({"acc", acc});
  holes.push_back({"operand_array", wide ? "array<" + acc + ">" : "array<u32>"});
  return render(wgsl::gemm, holes);
}

std::string large_source(c10::ScalarType type, bool with_addend, bool a_rows_fast, bool b_k_fast) {
  auto holes = shared_holes(type, with_addend, false);
  holes.push_back({"a_rows_fast", a_rows_fast ? "true" : "false"});
  holes.push_back({"b_k_fast", b_k_fast ? "true" : "false"});
  return render(wgsl::gemm128, holes);
}

// Elements from the operand's first to the last one its strides reach.
uint64_t span_of(const MatrixOperand& op, uint64_t batch, uint64_t rows, uint64_t cols) {
  return 1 + (batch ? batch - 1 : 0) * op.batch_stride + (rows ? rows - 1 : 0) * op.row_stride +
      (cols ? cols - 1 : 0) * op.col_stride;
}

Window window_of(runtime::DeviceContext& context, const MatrixOperand& op, uint64_t batch, uint64_t rows,
                 uint64_t cols) {
  const uint64_t last = op.ref.element_offset + span_of(op, batch, rows, cols) - 1;
  return binding_window(context, op.ref.buffer_size, c10::elementSize(op.ref.dtype), op.ref.element_offset, last);
}

bool strides_fit(const MatrixOperand& op) {
  return op.batch_stride <= 0xFFFFFFFFull && op.row_stride <= 0xFFFFFFFFull && op.col_stride <= 0xFFFFFFFFull;
}

} // namespace

c10::ScalarType gemm_accumulator(c10::ScalarType type) {
  if (type == c10::kDouble || type == c10::kLong) return type;
  return c10::isIntegralType(type, /*includeBool=*/false) ? c10::kInt : c10::kFloat;
}

bool gemm_supports(runtime::DeviceContext& context, c10::ScalarType type) {
  const auto info = dtype_info(type);
  return type != c10::kBool && info && (!info->needs || context.has(*info->needs));
}

std::string gemm_unsupported_reason(runtime::DeviceContext& context, const GemmProblem& g) {
  if (!gemm_supports(context, g.a.ref.dtype) || g.b.ref.dtype != g.a.ref.dtype ||
      (g.addend && g.addend->ref.dtype != g.a.ref.dtype))
    return std::string("no native GEMM for ") + c10::toString(g.a.ref.dtype) + " on this adapter";
  if (g.out.ref.dtype != gemm_accumulator(g.a.ref.dtype)) return "GEMM writes its accumulator's dtype";
  if (g.m > 0xFFFFFFFFull || g.n > 0xFFFFFFFFull || g.k > 0xFFFFFFFFull) return "a dimension above 2^32";
  for (const MatrixOperand* op : {&g.a, &g.b, &g.out})
    if (!strides_fit(*op)) return "a stride above 2^32";
  if (g.addend && !strides_fit(*g.addend)) return "a stride above 2^32";
  const Window windows[] = {window_of(context, g.a, g.batch, g.m, g.k), window_of(context, g.b, g.batch, g.k, g.n),
                            window_of(context, g.out, g.batch, g.m, g.n)};
  for (const Window& w : windows)
    if (!fits_binding(context, w)) return "an operand larger than one storage binding";
  if (g.addend && !fits_binding(context, window_of(context, *g.addend, g.batch, g.m, g.n)))
    return "an operand larger than one storage binding";
  return "";
}

void gemm(runtime::DeviceContext& context, const GemmProblem& g) {
  const std::string reason = gemm_unsupported_reason(context, g);
  TORCH_CHECK(reason.empty(), "torch_dml: matmul of ", g.a.ref.dtype, " cannot run on ", context.describe(), ": ",
              reason);
  if (g.batch == 0 || g.m == 0 || g.n == 0) return;
  const c10::ScalarType type = g.a.ref.dtype;
  const bool with_addend = g.addend.has_value() && g.beta.toDouble() != 0.0;
  const bool large = g.m >= kLargeTile && g.n >= kLargeTile && g.k >= kLargeSlice &&
      gemm_accumulator(type) == c10::kFloat;
  // The large kernel's global loads follow each operand's unit-stride dimension.
  const bool a_rows_fast = g.a.row_stride == 1 && g.a.col_stride != 1;
  const bool b_k_fast = g.b.row_stride == 1 && g.b.col_stride != 1;
  const std::string name = std::string(large ? "gemm128/" : "gemm/") + dtype_info(type)->name +
      (with_addend ? "/addend" : "") + (large && a_rows_fast ? "/a_t" : "") + (large && b_k_fast ? "/b_t" : "");
  const auto make_source = [&] {
    return large ? large_source(type, with_addend, a_rows_fast, b_k_fast) : small_source(type, with_addend);
  };

  const uint32_t max_groups = context.limits().maxComputeWorkgroupsPerDimension;
  const uint64_t tile = large ? kLargeTile : kTile;
  const uint64_t groups_x = (g.n + tile - 1) / tile, groups_y = (g.m + tile - 1) / tile;
  TORCH_CHECK(groups_x <= max_groups && groups_y <= max_groups, "torch_dml: matmul of ", g.m, "x", g.k, " by ",
              g.k, "x", g.n, " needs more workgroups than ", context.describe(), " dispatches");
  // Batches beyond the dispatch limit run as successive dispatches over batch ranges.
  for (uint64_t first = 0; first < g.batch; first += max_groups) {
    const uint64_t count = std::min<uint64_t>(g.batch - first, max_groups);
    auto shifted = [&](const MatrixOperand& op) {
      MatrixOperand moved = op;
      moved.ref.element_offset += first * op.batch_stride;
      return moved;
    };
    const MatrixOperand a = shifted(g.a), b = shifted(g.b), out = shifted(g.out);
    Launch launch(context, "matmul", type);
    wgsl::GemmParams params = {};
    params.dims[0] = static_cast<uint32_t>(g.m);
    params.dims[1] = static_cast<uint32_t>(g.n);
    params.dims[2] = static_cast<uint32_t>(g.k);
    params.dims[3] = static_cast<uint32_t>(count);
    // Each operand is bound over the span its strides reach; offset, then the strides, per operand.
    auto bind = [&](uint32_t* slot, const MatrixOperand& op, uint64_t rows, uint64_t cols) {
      slot[0] = launch.bind(op.ref, span_of(op, count, rows, cols));
      slot[1] = static_cast<uint32_t>(op.batch_stride);
      slot[2] = static_cast<uint32_t>(op.row_stride);
      slot[3] = static_cast<uint32_t>(op.col_stride);
    };
    bind(params.out, out, g.m, g.n);
    bind(params.a, a, g.m, g.k);
    bind(params.b, b, g.k, g.n);
    // Without an addend, `out` is bound in its place (unread), keeping the layout.
    bind(params.addend, with_addend ? shifted(*g.addend) : out, g.m, g.n);
    const Value value = accumulator_value(type);
    encode_scalar(g.alpha, value, type, &params.scalars[0][0]);
    encode_scalar(g.beta, value, type, &params.scalars[0][2]);
    launch.run3d(name, make_source, params, static_cast<uint32_t>(groups_x), static_cast<uint32_t>(groups_y),
                 static_cast<uint32_t>(count));
  }
}

} // namespace torch_dml::kernels
