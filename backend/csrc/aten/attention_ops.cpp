// The inference fast paths of nn.MultiheadAttention (`_native_multi_head_attention`) and
// nn.TransformerEncoderLayer (`_transformer_encoder_layer_fwd`), which PyTorch takes for any
// PrivateUse1 device in eval mode and which have CPU/CUDA kernels only. Composed here from native ops:
// projections, scores, masked softmax and the feed-forward block, with PyTorch's semantics (masks as
// bool or additive, by mask_type; rows whose keys are all masked give zeros, as the fast path's
// masked softmax does, not NaN). Without need_weights attention is scaled_dot_product_attention (the
// fused kernel); with them the (L, S) weights are materialised, as the caller asked for them.
#include <ATen/ATen.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <cmath>

namespace torch_dml::aten {
namespace {

// An additive mask for scores of shape (B, H, L, S) from the fast path's mask: mask_type 0 is an
// (L, S) attention mask, 1 a (B, S) key padding mask, 2 a merged (B, H, L, S) one; bool masks are
// true where attention is not allowed.
at::Tensor additive_mask(const at::Tensor& mask, std::optional<int64_t> mask_type, int64_t batch, int64_t length,
                         const at::Tensor& like) {
  at::Tensor m = mask;
  if (m.scalar_type() == c10::kBool)
    m = at::where(m, at::full({}, -std::numeric_limits<double>::infinity(), like.options()),
                  at::zeros({}, like.options()));
  else
    m = m.to(like.scalar_type());
  const int64_t type = mask_type.value_or(m.dim() == 2 && m.size(0) == batch && m.size(1) != length ? 1 : 0);
  if (type == 1) return m.view({m.size(0), 1, 1, m.size(-1)});
  return m; // (L, S) and (B, H, L, S) broadcast as they are
}

// Multi-head attention over projected inputs (B, L, E) / (B, S, E); returns the output before the
// output projection, (B, L, E), and the attention weights (B, H, L, S) when asked for.
std::tuple<at::Tensor, at::Tensor> attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                          int64_t heads, const std::optional<at::Tensor>& mask,
                                          std::optional<int64_t> mask_type, bool need_weights) {
  const int64_t batch = q.size(0), length = q.size(1), source = k.size(1), embed = q.size(2);
  const int64_t head_dim = embed / heads;
  const auto split = [&](const at::Tensor& t, int64_t n) { return t.view({batch, n, heads, head_dim}).transpose(1, 2); };
  if (!need_weights) {
    // The fused kernel when it takes the inputs (sdpa_ops.cpp), PyTorch's math path otherwise; an
    // all -inf row gives zeros on both, as the fast path's masked softmax does.
    std::optional<at::Tensor> additive;
    if (mask && mask->defined()) additive = additive_mask(*mask, mask_type, batch, source, q);
    const at::Tensor out = at::scaled_dot_product_attention(split(q, length), split(k, source), split(v, source), additive);
    return {out.transpose(1, 2).reshape({batch, length, embed}), at::Tensor()};
  }
  at::Tensor scores = at::matmul(split(q, length) / std::sqrt(static_cast<double>(head_dim)), split(k, source).transpose(-2, -1));
  if (mask && mask->defined()) scores = scores + additive_mask(*mask, mask_type, batch, source, scores);
  const at::Tensor weights = at::_safe_softmax(scores, -1);
  const at::Tensor out = at::matmul(weights, split(v, source)).transpose(1, 2).reshape({batch, length, embed});
  return {out, need_weights ? weights : at::Tensor()};
}

std::tuple<at::Tensor, at::Tensor> multi_head_attention(
    const at::Tensor& query, const at::Tensor& key, const at::Tensor& value, int64_t embed_dim, int64_t heads,
    const at::Tensor& qkv_weight, const at::Tensor& qkv_bias, const at::Tensor& proj_weight,
    const at::Tensor& proj_bias, const std::optional<at::Tensor>& mask, bool need_weights, bool average_attn_weights,
    std::optional<int64_t> mask_type) {
  TORCH_CHECK(query.dim() == 3 && embed_dim % heads == 0, "_native_multi_head_attention: expected (B, L, E) inputs "
              "and embed_dim divisible by num_head");
  c10::DeviceGuard guard(query.device());
  const auto w = qkv_weight.chunk(3, 0);
  const auto b = qkv_bias.chunk(3, 0);
  auto [attended, weights] = attend(at::linear(query, w[0], b[0]), at::linear(key, w[1], b[1]),
                                    at::linear(value, w[2], b[2]), heads, mask, mask_type, need_weights);
  const at::Tensor out = at::linear(attended, proj_weight, proj_bias);
  if (!need_weights) return {out, at::Tensor()};
  return {out, average_attn_weights ? weights.mean(1) : weights};
}

at::Tensor encoder_layer(const at::Tensor& src, int64_t embed_dim, int64_t heads, const at::Tensor& qkv_weight,
                         const at::Tensor& qkv_bias, const at::Tensor& proj_weight, const at::Tensor& proj_bias,
                         bool use_gelu, bool norm_first, double eps, const at::Tensor& norm_weight_1,
                         const at::Tensor& norm_bias_1, const at::Tensor& norm_weight_2, const at::Tensor& norm_bias_2,
                         const at::Tensor& ffn_weight_1, const at::Tensor& ffn_bias_1, const at::Tensor& ffn_weight_2,
                         const at::Tensor& ffn_bias_2, const std::optional<at::Tensor>& mask,
                         std::optional<int64_t> mask_type) {
  TORCH_CHECK(src.dim() == 3, "_transformer_encoder_layer_fwd: expected a (B, L, E) input, got ", src.sizes());
  c10::DeviceGuard guard(src.device());
  const auto self_attention = [&](const at::Tensor& x) {
    return std::get<0>(multi_head_attention(x, x, x, embed_dim, heads, qkv_weight, qkv_bias, proj_weight, proj_bias,
                                            mask, false, false, mask_type));
  };
  const auto feed_forward = [&](const at::Tensor& x) {
    const at::Tensor hidden = at::linear(x, ffn_weight_1, ffn_bias_1);
    return at::linear(use_gelu ? at::gelu(hidden) : at::relu(hidden), ffn_weight_2, ffn_bias_2);
  };
  const auto norm1 = [&](const at::Tensor& x) { return at::layer_norm(x, {embed_dim}, norm_weight_1, norm_bias_1, eps); };
  const auto norm2 = [&](const at::Tensor& x) { return at::layer_norm(x, {embed_dim}, norm_weight_2, norm_bias_2, eps); };
  if (norm_first) {
    const at::Tensor x = src + self_attention(norm1(src));
    return x + feed_forward(norm2(x));
  }
  const at::Tensor x = norm1(src + self_attention(src));
  return norm2(x + feed_forward(x));
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_native_multi_head_attention", TORCH_FN(multi_head_attention));
  m.impl("_transformer_encoder_layer_fwd", TORCH_FN(encoder_layer));
}

} // namespace
} // namespace torch_dml::aten
