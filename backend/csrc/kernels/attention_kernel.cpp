#include "kernels/attention_kernel.h"

#include <algorithm>
#include <cstdlib>

#include "kernels/dtypes.h"
#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/launch.h"

namespace torch_dml::kernels {
namespace {

constexpr uint64_t kLanes = 64; // LANES in attention.wgsl
// WebGPU's guaranteed maxComputeWorkgroupStorageSize: the two tiles, the per-row lse and delta, and
// the merge arrays.
constexpr uint64_t kWorkgroupBytes = 16384;
// Workgroups a pass should have for a GPU to run them side by side (an H200 has 132 SMs): below that,
// SPLIT threads share each row.
constexpr uint64_t kWantedWorkgroups = 1024;
constexpr uint64_t kMaxSplit = 8;

// attention.wgsl's entry point of each AttentionPass, in its order.
constexpr const char* kEntryPoints[] = {"forward", "backward_query", "backward_key_value"};

uint64_t vec4s(uint64_t dim) { return (dim + 3) / 4; }

uint64_t rows_of(const AttentionProblem& s) { return s.pass == AttentionPass::BackwardKeyValue ? s.k_len : s.q_len; }

// Threads per row (SPLIT): the fewest that give kWantedWorkgroups, as each doubling halves the serial
// work per thread but adds a merge. A CPU adapter runs a workgroup's threads as SIMD lanes, where one
// thread per row reads the tiles at one address for all lanes and more workgroups buy nothing.
uint64_t split_of(runtime::DeviceContext& context, const AttentionProblem& s) {
  if (const char* forced = std::getenv("TORCH_DML_ATTENTION_SPLIT")) {
    const uint64_t split = std::strtoull(forced, nullptr, 10);
    if (split == 1 || split == 2 || split == 4 || split == 8) return split;
  }
  if (context.adapter().adapter_type == "cpu") return 1;
  const uint64_t row_blocks = s.batch * s.heads * ((rows_of(s) + kLanes - 1) / kLanes);
  uint64_t split = 1;
  while (split < kMaxSplit && row_blocks * split < kWantedWorkgroups) split *= 2;
  return split;
}

// Rows per tile: as many as workgroup memory holds beside the merge arrays, at most a workgroup's worth.
uint64_t tile_rows(const AttentionProblem& s, uint64_t split) {
  const uint64_t row_bytes = (vec4s(s.qk_dim) + vec4s(s.v_dim)) * 16 + 8;
  const uint64_t merge_bytes = kLanes * split * 16 + kLanes * 8;
  return std::min(kLanes, (kWorkgroupBytes - merge_bytes) / row_bytes);
}

std::string source(const AttentionProblem& s, uint64_t split) {
  const c10::ScalarType type = s.q.ref.dtype;
  const uint64_t tile = tile_rows(s, split);
  std::string mask = "0.0";
  if (s.mask.defined()) {
    const std::string load = typed_load(s.mask.ref.dtype, "mask", "m");
    mask = s.mask.ref.dtype == c10::kBool ? "select(negative_infinity(), 0.0, " + load + ")" : load;
  }
  return render(wgsl::attention, {{"qk_vec4s", std::to_string(vec4s(s.qk_dim))},
                                  {"v_vec4s", std::to_string(vec4s(s.v_dim))},
                                  {"split", std::to_string(split)},
                                  {"tile_rows", std::to_string(tile)},
                                  {"tile_a_size", std::to_string(tile * vec4s(s.qk_dim))},
                                  {"tile_b_size", std::to_string(tile * vec4s(s.v_dim))},
                                  {"load_q", typed_load(type, "q", "i")},
                                  {"load_k", typed_load(type, "k", "i")},
                                  {"load_v", typed_load(type, "v", "i")},
                                  {"load_dout", typed_load(type, "dout", "i")},
                                  {"mask_value", mask}});
}

std::string kernel_name(const AttentionProblem& s, uint64_t split) {
  const std::string mask = s.mask.defined() ? dtype_info(s.mask.ref.dtype)->name : "none";
  return std::string("attention/") + name_of(s.pass, kEntryPoints) + "/" + dtype_info(s.q.ref.dtype)->name +
         "/mask-" + mask + "/qk" + std::to_string(vec4s(s.qk_dim)) + "v" + std::to_string(vec4s(s.v_dim)) + "/split" +
         std::to_string(split);
}

// Binds `o` and stores its window offset and strides in the four Params fields given.
uint32_t bind_strided(Launch& launch, const AttentionOperand& o, uint32_t& batch, uint32_t& head, uint32_t& row) {
  launch.require_u32(o.extent, "elements an attention operand spans");
  batch = static_cast<uint32_t>(o.batch);
  head = static_cast<uint32_t>(o.head);
  row = static_cast<uint32_t>(o.row);
  return launch.bind(o.ref, std::max<uint64_t>(o.extent, 1));
}

LaunchPlan<wgsl::AttentionParams> plan(runtime::DeviceContext& context, const AttentionProblem& s) {
  const c10::ScalarType type = s.q.ref.dtype;
  LaunchPlan<wgsl::AttentionParams> plan(context, "scaled_dot_product_attention", type);
  Launch& launch = plan.launch;
  wgsl::AttentionParams& p = plan.params;
  launch.require(is_float_family(type) && s.k.ref.dtype == type && s.v.ref.dtype == type,
                 "fused attention takes float32, float16 or bfloat16 query, key and value of one dtype");
  launch.require(!s.mask.defined() || s.mask.ref.dtype == c10::kBool || is_float_family(s.mask.ref.dtype),
                 "fused attention takes a bool or floating attn_mask");
  launch.require(s.qk_dim >= 1 && s.qk_dim <= kAttentionMaxHeadDim && s.v_dim >= 1 && s.v_dim <= kAttentionMaxHeadDim,
                 "fused attention takes head dims from 1 to 128");
  const uint64_t batch_heads = s.batch * s.heads;
  launch.require_u32(batch_heads * s.q_len * std::max(s.qk_dim, s.v_dim) + batch_heads * s.k_len * (s.qk_dim + s.v_dim),
                     "attention elements");
  if (!launch.ok()) return plan;
  p.heads = static_cast<uint32_t>(s.heads);
  p.batch_heads = static_cast<uint32_t>(batch_heads);
  p.q_len = static_cast<uint32_t>(s.q_len);
  p.k_len = static_cast<uint32_t>(s.k_len);
  p.qk_dim = static_cast<uint32_t>(s.qk_dim);
  p.v_dim = static_cast<uint32_t>(s.v_dim);
  p.scale = s.scale;
  p.causal = s.causal ? 1 : 0;
  p.has_mask = s.mask.defined() ? 1 : 0;
  const uint64_t lse_count = batch_heads * s.q_len;
  // @binding(0): what the pass writes.
  if (s.pass == AttentionPass::Forward) {
    p.out_offset = bind_strided(launch, s.out, p.out_batch, p.out_head, p.out_row);
  } else if (s.pass == AttentionPass::BackwardQuery) {
    p.result_offset = launch.bind(s.result, lse_count * s.qk_dim + lse_count);
    p.result2_offset = p.result_offset + static_cast<uint32_t>(lse_count * s.qk_dim);
  } else {
    const uint64_t keys = batch_heads * s.k_len;
    p.result_offset = launch.bind(s.result, keys * (s.qk_dim + s.v_dim));
    p.result2_offset = p.result_offset + static_cast<uint32_t>(keys * s.qk_dim);
  }
  p.lse_offset = launch.bind(s.lse, lse_count); // @binding(1)
  p.q_offset = bind_strided(launch, s.q, p.q_batch, p.q_head, p.q_row);
  p.k_offset = bind_strided(launch, s.k, p.k_batch, p.k_head, p.k_row);
  p.v_offset = bind_strided(launch, s.v, p.v_batch, p.v_head, p.v_row);
  if (s.mask.defined()) {
    p.mask_offset = bind_strided(launch, s.mask, p.mask_batch, p.mask_head, p.mask_row);
    p.mask_col = static_cast<uint32_t>(s.mask.col);
  } else {
    launch.bind(s.q.ref, 1);
  }
  if (s.pass == AttentionPass::Forward) {
    launch.bind(s.q.ref, 1); // @binding(6), (7): unread
    launch.bind(s.q.ref, 1);
  } else {
    p.dout_offset = bind_strided(launch, s.dout, p.dout_batch, p.dout_head, p.dout_row);
    if (s.pass == AttentionPass::BackwardQuery)
      launch.bind(s.q.ref, 1); // @binding(7): unread
    else
      p.delta_offset = launch.bind(s.delta, lse_count);
  }
  return plan;
}

uint64_t workgroups(const AttentionProblem& s, uint64_t split) {
  const uint64_t rows = kLanes / split;
  return s.batch * s.heads * ((rows_of(s) + rows - 1) / rows);
}

} // namespace

std::string attention_unsupported_reason(runtime::DeviceContext& context, const AttentionProblem& problem) {
  return plan(context, problem).reason();
}

void attention(runtime::DeviceContext& context, const AttentionProblem& s) {
  const uint64_t split = split_of(context, s);
  if (workgroups(s, split) == 0) return;
  plan(context, s).run(kernel_name(s, split), [&] { return source(s, split); }, workgroups(s, split),
                       name_of(s.pass, kEntryPoints));
}

} // namespace torch_dml::kernels
