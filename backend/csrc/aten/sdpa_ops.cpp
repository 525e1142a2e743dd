// scaled_dot_product_attention on the fused kernel, reached as PyTorch routes a PrivateUse1 device:
// `_fused_sdp_choice` (the op and the dispatch stub scaled_dot_product_attention consults) answers
// "overrideable" for inputs the kernel takes and "math" (exact, native matmul + softmax) for the rest;
// `_scaled_dot_product_fused_attention_overrideable` and its backward run the kernel.
//
// Cost: the forward is one dispatch (plus one conversion for float16/bfloat16 outputs); the backward
// two (plus a conversion or copy per gradient for float16/bfloat16 or non-contiguous inputs). No
// (L, S) matrix is ever materialised.
#include <ATen/Context.h>
#include <ATen/ExpandUtils.h>
#include <ATen/SDPBackend.h>
#include <ATen/native/transformers/attention.h>
#include <ATen/ops/empty.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <cmath>
#include <numeric>

#include "aten/common.h"
#include "kernels/attention_kernel.h"
#include "kernels/dtypes.h"

namespace torch_dml::aten {
namespace {

using kernels::AttentionOperand;
using kernels::AttentionPass;
using kernels::AttentionProblem;

bool floating(c10::ScalarType type) {
  return kernels::is_float_family(type);
}

// Elements from the first that `t`'s indices reach.
uint64_t extent(const at::Tensor& t) {
  uint64_t last = 0;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) == 0) return 0;
    last += static_cast<uint64_t>(t.size(d) - 1) * static_cast<uint64_t>(t.stride(d));
  }
  return last + 1;
}

// A (B, H, rows, dim) tensor as the kernel reads it.
AttentionOperand operand(const at::Tensor& t) {
  AttentionOperand o;
  o.ref = device_ref(t);
  o.batch = static_cast<uint64_t>(t.stride(0));
  o.head = static_cast<uint64_t>(t.stride(1));
  o.row = static_cast<uint64_t>(t.stride(2));
  o.col = static_cast<uint64_t>(t.stride(3));
  o.extent = extent(t);
  return o;
}

// The kernel reads rows whose last dimension is contiguous.
at::Tensor rows_contiguous(const at::Tensor& t) {
  return t.size(-1) == 1 || t.stride(-1) == 1 ? t : t.contiguous();
}

// Whether the inputs are ones the kernel takes: what `_fused_sdp_choice` asks before answering
// "overrideable". Everything else takes the math path.
bool qualifies(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const std::optional<at::Tensor>& mask,
               double dropout_p, bool enable_gqa) {
  if (q.is_nested() || k.is_nested() || v.is_nested()) return false;
  if (dropout_p > 0.0 || enable_gqa) return false;
  if (q.dim() != k.dim() || q.dim() != v.dim() || (q.dim() != 3 && q.dim() != 4)) return false;
  if (!floating(q.scalar_type()) || k.scalar_type() != q.scalar_type() || v.scalar_type() != q.scalar_type()) return false;
  for (int64_t d = 0; d < q.dim() - 2; ++d)
    if (k.size(d) != q.size(d) || v.size(d) != q.size(d)) return false;
  if (q.size(-1) != k.size(-1) || k.size(-2) != v.size(-2)) return false;
  if (q.size(-1) > kernels::kAttentionMaxHeadDim || v.size(-1) > kernels::kAttentionMaxHeadDim) return false;
  if (q.size(-1) == 0 || v.size(-1) == 0) return false;
  if (q.device().type() != c10::DeviceType::PrivateUse1 || k.device() != q.device() || v.device() != q.device()) return false;
  if (mask && mask->defined()) {
    if (mask->requires_grad() || mask->dim() > 4 || mask->device() != q.device()) return false;
    if (mask->scalar_type() != c10::kBool && !floating(mask->scalar_type())) return false;
    std::vector<int64_t> shape(q.sizes().begin(), q.sizes().end());
    shape.back() = k.size(-2);
    if (!at::is_expandable_to(mask->sizes(), shape)) return false;
  }
  return true;
}

int64_t fused_sdp_choice(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                         const std::optional<at::Tensor>& mask, double dropout_p, bool /*is_causal*/,
                         std::optional<double> /*scale*/, bool enable_gqa) {
  const auto& context = at::globalContext();
  const bool fused = context.userEnabledOverrideableSDP() && qualifies(q, k, v, mask, dropout_p, enable_gqa);
  return static_cast<int64_t>(fused ? at::SDPBackend::overrideable : at::SDPBackend::math);
}

// The 4-D view the kernel takes of a 3-D (H, L, E) or 4-D input.
at::Tensor four_d(const at::Tensor& t) {
  return t.dim() == 3 ? t.unsqueeze(0) : t;
}

// A (B, H, L, Ev) tensor laid out in q's dimension order, as the op's meta function allocates it.
at::Tensor like_query(const at::Tensor& q, int64_t v_dim, c10::ScalarType dtype) {
  std::vector<int64_t> order(4);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return q.stride(a) > q.stride(b); });
  std::vector<int64_t> sizes(q.sizes().begin(), q.sizes().end());
  sizes[3] = v_dim;
  std::vector<int64_t> permuted(4), inverse(4);
  for (int64_t i = 0; i < 4; ++i) {
    permuted[i] = sizes[order[i]];
    inverse[order[i]] = i;
  }
  return at::empty(permuted, q.options().dtype(dtype)).permute(inverse);
}

AttentionProblem problem_for(AttentionPass pass, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                             const at::Tensor& mask, bool is_causal, std::optional<double> scale) {
  AttentionProblem s;
  s.pass = pass;
  s.batch = static_cast<uint64_t>(q.size(0));
  s.heads = static_cast<uint64_t>(q.size(1));
  s.q_len = static_cast<uint64_t>(q.size(2));
  s.k_len = static_cast<uint64_t>(k.size(2));
  s.qk_dim = static_cast<uint64_t>(q.size(3));
  s.v_dim = static_cast<uint64_t>(v.size(3));
  s.scale = static_cast<float>(scale.value_or(1.0 / std::sqrt(static_cast<double>(q.size(3)))));
  s.causal = is_causal;
  s.q = operand(q);
  s.k = operand(k);
  s.v = operand(v);
  if (mask.defined()) s.mask = operand(mask);
  return s;
}

// The mask as a (B, H, L, S) view with broadcast (zero) strides; undefined without one.
at::Tensor expanded_mask(const std::optional<at::Tensor>& mask, const at::Tensor& q, const at::Tensor& k) {
  if (!mask || !mask->defined()) return at::Tensor();
  return mask->expand({q.size(0), q.size(1), q.size(2), k.size(2)});
}

// Throws, naming the dtype and adapter, when the kernel declines (an operand past one binding).
void run(runtime::DeviceContext& context, const AttentionProblem& s) {
  std::lock_guard<std::recursive_mutex> lock(context.mutex());
  kernels::attention(context, s);
}

void check_inputs(const char* op, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                  const std::optional<at::Tensor>& mask, double dropout_p) {
  TORCH_CHECK(qualifies(q, k, v, mask, 0.0, false), op, ": the fused dml kernel takes 3-D or 4-D float32, float16 or "
              "bfloat16 query, key and value with equal batch and head sizes and head dims up to ",
              kernels::kAttentionMaxHeadDim, ", and a bool or float attn_mask broadcastable to (..., L, S); got query ",
              q.sizes(), " ", q.scalar_type(), ", key ", k.sizes(), ", value ", v.sizes(),
              ". F.scaled_dot_product_attention sends such inputs to the math path");
  TORCH_CHECK(dropout_p == 0.0, op, ": the fused dml kernel has no dropout (dropout_p=", dropout_p,
              "); F.scaled_dot_product_attention takes the math path for it");
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, c10::SymInt, c10::SymInt, at::Tensor, at::Tensor, at::Tensor>
fused_attention(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                const std::optional<at::Tensor>& attn_bias, double dropout_p, bool is_causal, bool return_debug_mask,
                std::optional<double> scale) {
  constexpr const char* op = "_scaled_dot_product_fused_attention_overrideable";
  check_inputs(op, query, key, value, attn_bias, dropout_p);
  TORCH_CHECK(!return_debug_mask, op, ": return_debug_mask is not supported on dml");
  c10::DeviceGuard guard(query.device());
  const at::Tensor q = rows_contiguous(four_d(query)), k = rows_contiguous(four_d(key)), v = rows_contiguous(four_d(value));
  const c10::ScalarType type = q.scalar_type();
  at::Tensor out = like_query(q, v.size(3), type);
  // The kernel writes float32: other dtypes get a float32 twin with out's layout, then a conversion.
  at::Tensor written = type == c10::kFloat ? out : like_query(q, v.size(3), c10::kFloat);
  at::Tensor lse = at::empty({q.size(0), q.size(1), q.size(2)}, q.options().dtype(c10::kFloat));
  AttentionProblem s = problem_for(AttentionPass::Forward, q, k, v, expanded_mask(attn_bias, q, k), is_causal, scale);
  s.out = operand(written);
  s.lse = device_ref(lse);
  run(context_of(q), s);
  if (type != c10::kFloat) out.copy_(written);
  if (query.dim() == 3) {
    out = out.squeeze(0);
  }
  const at::Tensor seed = at::empty({}, q.options().dtype(c10::kLong));
  const at::Tensor offset = at::empty({}, q.options().dtype(c10::kLong));
  return {out, lse, at::Tensor(), at::Tensor(), c10::SymInt(q.size(2)), c10::SymInt(k.size(2)), seed, offset,
          at::Tensor()};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> fused_attention_backward(
    const at::Tensor& grad_out, const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
    const at::Tensor& attn_bias, std::array<bool, 4> grad_input_mask, const at::Tensor& /*out*/, const at::Tensor& logsumexp,
    const at::Tensor& /*cum_seq_q*/, const at::Tensor& /*cum_seq_k*/, c10::SymInt /*max_q*/, c10::SymInt /*max_k*/,
    double dropout_p, bool is_causal, const at::Tensor& /*philox_seed*/, const at::Tensor& /*philox_offset*/,
    std::optional<double> scale) {
  constexpr const char* op = "_scaled_dot_product_fused_attention_overrideable_backward";
  const std::optional<at::Tensor> bias = attn_bias.defined() ? std::optional<at::Tensor>(attn_bias) : std::nullopt;
  check_inputs(op, query, key, value, bias, dropout_p);
  TORCH_CHECK(!(grad_input_mask[3] && attn_bias.defined()), op, ": no gradient for attn_mask on dml; "
              "F.scaled_dot_product_attention takes the math path when attn_mask requires grad");
  c10::DeviceGuard guard(query.device());
  const at::Tensor q = rows_contiguous(four_d(query)), k = rows_contiguous(four_d(key)), v = rows_contiguous(four_d(value));
  const at::Tensor dout = rows_contiguous(four_d(grad_out).to(q.scalar_type()));
  const at::Tensor lse = logsumexp.contiguous();
  const int64_t B = q.size(0), H = q.size(1), L = q.size(2), S = k.size(2), E = q.size(3), Ev = v.size(3);
  const at::TensorOptions f32 = q.options().dtype(c10::kFloat);
  const at::Tensor query_side = at::empty({B * H * L * (E + 1)}, f32);  // dQ, then delta
  const at::Tensor key_side = at::empty({B * H * S * (E + Ev)}, f32);   // dK, then dV
  const at::Tensor mask = expanded_mask(bias, q, k);
  runtime::DeviceContext& context = context_of(q);

  AttentionProblem s = problem_for(AttentionPass::BackwardQuery, q, k, v, mask, is_causal, scale);
  s.dout = operand(dout);
  s.lse = device_ref(lse);
  s.result = device_ref(query_side);
  run(context, s);
  s.pass = AttentionPass::BackwardKeyValue;
  s.result = device_ref(key_side);
  s.delta = device_ref(query_side.narrow(0, B * H * L * E, B * H * L));
  run(context, s);

  // Each gradient in its input's dtype and layout (the meta function's empty_like, which compiled
  // graphs check): the float32 result itself when that is what it already is.
  const auto result = [&](const at::Tensor& flat, int64_t from, int64_t rows, int64_t dim, const at::Tensor& like) {
    at::Tensor g = flat.narrow(0, from, B * H * rows * dim).view({B, H, rows, dim});
    if (like.dim() == 3) g = g.squeeze(0);
    if (like.scalar_type() == c10::kFloat && like.strides() == g.strides()) return g;
    return at::empty_like(like).copy_(g);
  };
  return {result(query_side, 0, L, E, query), result(key_side, 0, S, E, key), result(key_side, B * H * S * E, S, Ev, value),
          at::Tensor()};
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/sdpa_ops.inc"

} // namespace
} // namespace torch_dml::aten

namespace at::native {
// scaled_dot_product_attention asks the stub, not the op, which backend to take.
REGISTER_PRIVATEUSE1_DISPATCH(_fused_sdp_choice_stub, &torch_dml::aten::fused_sdp_choice)
} // namespace at::native
