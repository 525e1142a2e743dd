#include "kernels/matmul_kernel.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <functional>

#include "kernels/dtypes.h"
#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/launch.h"
#include "kernels/split_k.h"
#include "kernels/wide_tile.h"
#include "runtime/allocator.h"

namespace torch_dml::kernels {
namespace {

// Two kernels, both indexing every operand through its strides (any layout works unchanged):
// wgsl/gemm.wgsl, a 64x64 tile for every dtype, and wgsl/gemm128.wgsl, a 128x128 register-blocked tile
// in float32 for outputs of at least 128x128 with enough of its workgroups (kernels/wide_tile.h).
// Either runs K whole or, for few tiles over a long K, in slices (split-K, below) that
// wgsl/gemm_split_sum.wgsl adds up.
constexpr uint32_t kTile = kNarrowTile;
// Both kernels include lib/gemm_params.wgsl; one C++ struct fills either.
static_assert(sizeof(wgsl::GemmParams) == sizeof(wgsl::Gemm128Params) &&
              offsetof(wgsl::GemmParams, scalars) == offsetof(wgsl::Gemm128Params, scalars) &&
              offsetof(wgsl::GemmParams, split) == offsetof(wgsl::Gemm128Params, split));
constexpr uint32_t kLargeTile = kWideTile;
constexpr uint32_t kLargeSlice = 8;

// Split-K (kernels/split_k.h): a slice at least this deep (eight K steps of gemm.wgsl, sixteen of
// gemm128.wgsl), as each slice's workgroup also stores a whole partial tile, which costs about what 64
// of K do on lavapipe.
constexpr uint64_t kMinSliceDepth = 128;
// Below this K one workgroup's walk costs about what a second dispatch does: no split.
constexpr uint64_t kMinSplitDepth = 512;
// Slices start on a K step of both kernels (16 and 8).
constexpr uint64_t kSliceStep = 16;

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

std::string split_sum_source(c10::ScalarType type, bool with_addend) {
  const bool wide = type == c10::kDouble || type == c10::kLong;
  const std::string acc = wgsl_type(accumulator_value(type));
  return render(wgsl::gemm_split_sum,
                {{"acc", acc},
                 {"operand_array", wide ? "array<" + acc + ">" : "array<u32>"},
                 {"load_addend", wide ? std::string("addend[i]") : typed_load(type, "addend", "i")},
                 {"alpha", decode_scalar(0, accumulator_value(type))},
                 {"beta", decode_scalar(1, accumulator_value(type))},
                 {"with_addend", with_addend ? "true" : "false"},
                 {"workgroup_size", std::to_string(kWorkgroupSize)}});
}

// A quad-bound operand (gemm128.wgsl's A_VEC / B_VEC): four consecutive elements are one vec4<u32> of
// float32 or one vec2<u32> of float16/bfloat16 (two elements per word, the lower first).
std::string quad_array(c10::ScalarType type) {
  return type == c10::kFloat ? "array<vec4<u32>>" : "array<vec2<u32>>";
}

std::string quad_load(c10::ScalarType type, const std::string& array) {
  const std::string at = array + "[i / 4u]";
  if (type == c10::kFloat) return "bitcast<vec4<f32>>(" + at + ")";
  if (type == c10::kHalf) return "vec4<f32>(unpack2x16float(" + at + ".x), unpack2x16float(" + at + ".y))";
  return "vec4<f32>(bitcast<f32>(" + at + ".x << 16u), bitcast<f32>(" + at + ".x & 0xffff0000u), bitcast<f32>(" + at +
      ".y << 16u), bitcast<f32>(" + at + ".y & 0xffff0000u))";
}

// gemm128.wgsl's variant: which dimension of each operand its loads follow (A_ROWS_FAST, B_K_FAST), and
// whether they load quads (A_VEC, B_VEC).
struct LargeVariant {
  bool a_rows_fast = false, b_k_fast = false, a_vec = false, b_vec = false;
};

std::string large_source(c10::ScalarType type, bool with_addend, const LargeVariant& v) {
  auto holes = shared_holes(type, with_addend, false);
  // A quad-bound operand's scalar load is never called, and could not index a vector array: a stand-in
  // keeps the module valid; likewise the quad load of a scalar-bound one.
  for (auto& hole : holes) {
    if ((hole.name == "load_a" && v.a_vec) || (hole.name == "load_b" && v.b_vec)) hole.value = "0.0f";
  }
  holes.push_back({"a_rows_fast", v.a_rows_fast ? "true" : "false"});
  holes.push_back({"b_k_fast", v.b_k_fast ? "true" : "false"});
  holes.push_back({"a_vec", v.a_vec ? "true" : "false"});
  holes.push_back({"b_vec", v.b_vec ? "true" : "false"});
  holes.push_back({"a_array", v.a_vec ? quad_array(type) : "array<u32>"});
  holes.push_back({"b_array", v.b_vec ? quad_array(type) : "array<u32>"});
  holes.push_back({"load4_a", v.a_vec ? quad_load(type, "a") : "vec4<f32>(0.0f)"});
  holes.push_back({"load4_b", v.b_vec ? quad_load(type, "b") : "vec4<f32>(0.0f)"});
  return render(wgsl::gemm128, holes);
}

// Elements from the operand's first to the last one its strides reach.
uint64_t span_of(const MatrixOperand& op, uint64_t batch, uint64_t rows, uint64_t cols) {
  return 1 + (batch ? batch - 1 : 0) * op.batch_stride + (rows ? rows - 1 : 0) * op.row_stride +
      (cols ? cols - 1 : 0) * op.col_stride;
}

bool fits_binding(runtime::DeviceContext& context, const MatrixOperand& op, uint64_t batch, uint64_t rows,
                  uint64_t cols) {
  return fits_one_binding(context, op.ref, span_of(op, batch, rows, cols));
}

SplitPlan split_plan(runtime::DeviceContext& context, const GemmProblem& g, uint64_t tile) {
  const SplitPlan whole{1, g.k};
  // Beyond 2^31 a slice's end could wrap in the kernel's u32 arithmetic.
  if (g.k >= (1ull << 31)) return whole;
  const uint64_t slices = split_k_slices(
      context, {.tiles = ((g.m + tile - 1) / tile) * ((g.n + tile - 1) / tile) * g.batch,
                .k = g.k,
                .batches = g.batch,
                .bytes_per_slice = g.batch * g.m * g.n * c10::elementSize(gemm_accumulator(g.a.ref.dtype)),
                .min_slice_depth = kMinSliceDepth,
                .min_split_depth = kMinSplitDepth});
  if (slices < 2) return whole;
  const SplitPlan plan = round_slices(g.k, slices, kSliceStep);
  return plan.slices < 2 ? whole : plan;
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
  if (!fits_binding(context, g.a, g.batch, g.m, g.k) || !fits_binding(context, g.b, g.batch, g.k, g.n) ||
      !fits_binding(context, g.out, g.batch, g.m, g.n) ||
      (g.addend && !fits_binding(context, *g.addend, g.batch, g.m, g.n)))
    return "an operand larger than one storage binding";
  return "";
}

namespace {

// An operand's uniform fields, as every GEMM kernel declares them: bound over the span its strides
// reach, its offset in that window, then its strides.
void bind_operand(Launch& launch, uint32_t* slot, const MatrixOperand& op, uint64_t batches, uint64_t rows,
                  uint64_t cols) {
  slot[0] = launch.bind(op.ref, span_of(op, batches, rows, cols));
  slot[1] = static_cast<uint32_t>(op.batch_stride);
  slot[2] = static_cast<uint32_t>(op.row_stride);
  slot[3] = static_cast<uint32_t>(op.col_stride);
}

// Whether gemm128.wgsl can load `op` (bound as operand `binding`, its first element `first` in the
// window) in quads along its unit-stride dimension, rows when `rows_fast`, of extent `fast_extent`:
// then every quad a slice reads starts a multiple of 4 elements into a 16-byte-aligned window and lies
// wholly inside or wholly outside the matrix (split-K slices start on multiples of 16 of K).
bool loads_quads(const Launch& launch, uint32_t binding, uint32_t first, const MatrixOperand& op, bool rows_fast,
                 uint64_t fast_extent, uint64_t batches) {
  const uint64_t unit = rows_fast ? op.row_stride : op.col_stride;
  const uint64_t other = rows_fast ? op.col_stride : op.row_stride;
  return unit == 1 && fast_extent % 4 == 0 && other % 4 == 0 && (batches < 2 || op.batch_stride % 4 == 0) &&
      first % 4 == 0 && launch.binding(binding).offset % 16 == 0;
}

// The tile kernel a problem runs (gemm.wgsl or gemm128.wgsl), without or with its addend.
struct TileKernel {
  bool large = false;
  LargeVariant layout; // the large kernel's; run() sets the quad loads per dispatch
  uint64_t groups_x = 0, groups_y = 0;

  std::string name(c10::ScalarType type, bool addend, const LargeVariant& v) const {
    return std::string(large ? "gemm128/" : "gemm/") + dtype_info(type)->name + (addend ? "/addend" : "") +
        (large && v.a_rows_fast ? "/a_t" : "") + (large && v.b_k_fast ? "/b_t" : "") + (large && v.a_vec ? "/a_v" : "") +
        (large && v.b_vec ? "/b_v" : "");
  }

  // One dispatch over `batches` of A and B (z: batch * slices + slice), writing `out` (and reading the
  // addend) at that z.
  void run(runtime::DeviceContext& context, const GemmProblem& g, uint64_t batches, const SplitPlan& plan,
           const MatrixOperand& a, const MatrixOperand& b, const MatrixOperand& out,
           const std::optional<MatrixOperand>& addend, const c10::Scalar& alpha, const c10::Scalar& beta) const {
    const c10::ScalarType type = g.a.ref.dtype;
    const uint64_t slots = batches * plan.slices;
    Launch launch(context, "matmul", type);
    wgsl::GemmParams params = {};
    params.dims[0] = static_cast<uint32_t>(g.m);
    params.dims[1] = static_cast<uint32_t>(g.n);
    params.dims[2] = static_cast<uint32_t>(g.k);
    params.dims[3] = static_cast<uint32_t>(batches);
    bind_operand(launch, params.out, out, slots, g.m, g.n);
    bind_operand(launch, params.a, a, batches, g.m, g.k);
    bind_operand(launch, params.b, b, batches, g.k, g.n);
    // Without an addend, `out` is bound in its place (unread), keeping the layout.
    bind_operand(launch, params.addend, addend ? *addend : out, slots, g.m, g.n);
    LargeVariant v = layout;
    if (large) {
      v.a_vec = loads_quads(launch, 1, params.a[0], a, v.a_rows_fast, v.a_rows_fast ? g.m : g.k, batches);
      v.b_vec = loads_quads(launch, 2, params.b[0], b, v.b_k_fast, v.b_k_fast ? g.k : g.n, batches);
    }
    const bool with = addend.has_value();
    const Value value = accumulator_value(type);
    encode_scalar(alpha, value, type, &params.scalars[0][0]);
    encode_scalar(beta, value, type, &params.scalars[0][2]);
    params.split[0] = static_cast<uint32_t>(plan.slices);
    params.split[1] = static_cast<uint32_t>(plan.depth);
    launch.run3d(name(type, with, v),
                 [=, large = large] { return large ? large_source(type, with, v) : small_source(type, with); }, params,
                 static_cast<uint32_t>(groups_x), static_cast<uint32_t>(groups_y), static_cast<uint32_t>(slots));
  }
};

// Split-K: the slices' partial tiles into a scratch buffer, then gemm_split_sum.wgsl. False, having
// run nothing, when the scratch the allocator gave cannot be bound whole.
bool run_split(runtime::DeviceContext& context, const GemmProblem& g, const TileKernel& kernel,
               const SplitPlan& plan, bool with_addend) {
  const c10::ScalarType type = g.a.ref.dtype;
  const c10::ScalarType accumulator = gemm_accumulator(type);
  const size_t size = c10::elementSize(accumulator);
  // [batch][slice][row][col] in the accumulator's type: freed (back to the pool) on return, which is
  // safe because later work reusing the memory is recorded after these dispatches.
  const uint64_t per_slice = g.m * g.n;
  const uint64_t count = g.batch * plan.slices * per_slice;
  c10::DataPtr holder = runtime::device_allocator().allocate_on(context.index(), count * size);
  const runtime::BufferSpan span = runtime::device_allocator().resolve(holder.get());
  const MatrixOperand partials{{span.buffer, span.buffer_size, span.offset / size, accumulator}, per_slice, g.n, 1};
  if (!fits_one_binding(context, partials.ref, count)) return false;
  // alpha 1 and no addend: each slice's sum is stored unchanged.
  kernel.run(context, g, g.batch, plan, g.a, g.b, partials, std::nullopt, 1, 0);

  Launch launch(context, "matmul", type);
  wgsl::GemmSplitSumParams params = {};
  params.dims[0] = static_cast<uint32_t>(g.m);
  params.dims[1] = static_cast<uint32_t>(g.n);
  params.dims[2] = static_cast<uint32_t>(plan.slices);
  params.dims[3] = static_cast<uint32_t>(g.batch * per_slice);
  bind_operand(launch, params.out, g.out, g.batch, g.m, g.n);
  params.partials[0] = launch.bind(partials.ref, count);
  params.partials[1] = static_cast<uint32_t>(per_slice);
  params.partials[2] = static_cast<uint32_t>(plan.slices * per_slice);
  bind_operand(launch, params.addend, with_addend ? *g.addend : g.out, g.batch, g.m, g.n);
  const Value value = accumulator_value(type);
  encode_scalar(g.alpha, value, type, &params.scalars[0][0]);
  encode_scalar(g.beta, value, type, &params.scalars[0][2]);
  const std::string name = std::string("gemm_split_sum/") + dtype_info(type)->name + (with_addend ? "/addend" : "");
  launch.run(name, [=] { return split_sum_source(type, with_addend); }, params, groups_for(g.batch * per_slice));
  return true;
}

} // namespace

void gemm(runtime::DeviceContext& context, const GemmProblem& g) {
  const std::string reason = gemm_unsupported_reason(context, g);
  TORCH_CHECK(reason.empty(), "torch_dml: matmul of ", g.a.ref.dtype, " cannot run on ", context.describe(), ": ",
              reason);
  if (g.batch == 0 || g.m == 0 || g.n == 0) return;
  const bool with_addend = g.addend.has_value() && g.beta.toDouble() != 0.0;
  TileKernel kernel;
  kernel.large = tile_for(context, g.m, g.n, g.batch) == kLargeTile && g.k >= kLargeSlice &&
      gemm_accumulator(g.a.ref.dtype) == c10::kFloat;
  // The large kernel's global loads follow each operand's unit-stride dimension.
  kernel.layout.a_rows_fast = g.a.row_stride == 1 && g.a.col_stride != 1;
  kernel.layout.b_k_fast = g.b.row_stride == 1 && g.b.col_stride != 1;
  const uint32_t max_groups = context.limits().maxComputeWorkgroupsPerDimension;
  const uint64_t tile = kernel.large ? kLargeTile : kTile;
  kernel.groups_x = (g.n + tile - 1) / tile;
  kernel.groups_y = (g.m + tile - 1) / tile;
  TORCH_CHECK(kernel.groups_x <= max_groups && kernel.groups_y <= max_groups, "torch_dml: matmul of ", g.m, "x", g.k,
              " by ", g.k, "x", g.n, " needs more workgroups than ", context.describe(), " dispatches");

  const SplitPlan plan = split_plan(context, g, tile);
  if (plan.slices > 1 && run_split(context, g, kernel, plan, with_addend)) return;
  // Batches beyond the dispatch limit run as successive dispatches over batch ranges.
  for (uint64_t first = 0; first < g.batch; first += max_groups) {
    const uint64_t count = std::min<uint64_t>(g.batch - first, max_groups);
    auto shifted = [&](const MatrixOperand& op) {
      MatrixOperand moved = op;
      moved.ref.element_offset += first * op.batch_stride;
      return moved;
    };
    std::optional<MatrixOperand> addend;
    if (with_addend) addend = shifted(*g.addend);
    kernel.run(context, g, count, SplitPlan{1, g.k}, shifted(g.a), shifted(g.b), shifted(g.out), addend, g.alpha,
               g.beta);
  }
}

} // namespace torch_dml::kernels
