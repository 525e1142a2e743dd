// The fused LSTM and GRU cells (+ backward). aten's LSTM/GRU cell code calls `_thnn_fused_*_cell` on
// every accelerator (PrivateUse1 included), and those have no CPU kernel, so without these nn.LSTM and
// nn.GRU could not run at all. Each is one kernel (kernels/rnn_cell_kernel), plus a rounding per output
// for a 16-bit dtype and the batch sums of a bias gradient. What the kernels decline (float64 without
// shader-f64, more gate elements than 32-bit indices reach) is composed here from dml ops instead
// (about fifteen dispatches a cell, each op native or falling back on its own).
//
// The workspace is private to a forward/backward pair (autograd saves it): the LSTM keeps its four
// activated gates [i, f, g, o]; the GRU keeps [r, z, n, hx, hn] with hn = the hidden part of the new
// gate (its bias included), which its backward needs. float16/bfloat16 compute in float32, as CUDA's
// cells do, and the results return in the input dtype.
#include <ATen/ATen.h>
#include <ATen/native/Resize.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "aten/common.h"
#include "aten/widen.h"
#include "kernels/rnn_cell_kernel.h"

namespace torch_dml::aten {
namespace {

at::Tensor with_bias(const at::Tensor& gates, const std::optional<at::Tensor>& bias) {
  const at::Tensor wide = widened(gates);
  return bias && bias->defined() ? wide + widened(*bias) : wide;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> composed_lstm_cell(
    const at::Tensor& input_gates, const at::Tensor& hidden_gates, const at::Tensor& cx,
    const std::optional<at::Tensor>& input_bias, const std::optional<at::Tensor>& hidden_bias) {
  c10::DeviceGuard guard(input_gates.device());
  const at::Tensor gates = with_bias(input_gates, input_bias) + with_bias(hidden_gates, hidden_bias);
  const auto chunks = gates.chunk(4, 1);
  const at::Tensor i = chunks[0].sigmoid(), f = chunks[1].sigmoid(), g = chunks[2].tanh(), o = chunks[3].sigmoid();
  const at::Tensor cy = f * widened(cx) + i * g;
  const at::Tensor hy = o * cy.tanh();
  const auto type = input_gates.scalar_type();
  return {hy.to(type), cy.to(type), at::cat({i, f, g, o}, 1).to(type)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> composed_lstm_cell_backward(
    const std::optional<at::Tensor>& grad_hy, const std::optional<at::Tensor>& grad_cy, const at::Tensor& cx,
    const at::Tensor& cy, const at::Tensor& workspace, bool has_bias) {
  const bool has_hy = grad_hy && grad_hy->defined(), has_cy = grad_cy && grad_cy->defined();
  if (!has_hy && !has_cy) return {};
  c10::DeviceGuard guard(workspace.device());
  const auto gates = widened(workspace).chunk(4, 1);
  const at::Tensor &i = gates[0], &f = gates[1], &g = gates[2], &o = gates[3];
  const at::Tensor tanh_cy = widened(cy).tanh();
  at::Tensor grad_c = has_cy ? widened(*grad_cy) : at::zeros_like(tanh_cy);
  at::Tensor grad_o = at::zeros_like(tanh_cy);
  if (has_hy) {
    const at::Tensor dh = widened(*grad_hy);
    grad_c = grad_c + dh * o * (1 - tanh_cy * tanh_cy);
    grad_o = dh * tanh_cy * o * (1 - o);
  }
  const at::Tensor grad_i = grad_c * g * i * (1 - i);
  const at::Tensor grad_f = grad_c * widened(cx) * f * (1 - f);
  const at::Tensor grad_g = grad_c * i * (1 - g * g);
  const auto type = workspace.scalar_type();
  const at::Tensor grad_gates = at::cat({grad_i, grad_f, grad_g, grad_o}, 1);
  return {grad_gates.to(type), (grad_c * f).to(type), has_bias ? grad_gates.sum(0).to(type) : at::Tensor()};
}

std::tuple<at::Tensor, at::Tensor> composed_gru_cell(
    const at::Tensor& input_gates, const at::Tensor& hidden_gates, const at::Tensor& hx,
    const std::optional<at::Tensor>& input_bias, const std::optional<at::Tensor>& hidden_bias) {
  c10::DeviceGuard guard(input_gates.device());
  const auto in = with_bias(input_gates, input_bias).chunk(3, 1);
  const auto hidden = with_bias(hidden_gates, hidden_bias).chunk(3, 1);
  const at::Tensor r = (in[0] + hidden[0]).sigmoid(), z = (in[1] + hidden[1]).sigmoid();
  const at::Tensor& hn = hidden[2];
  const at::Tensor n = (in[2] + r * hn).tanh();
  const at::Tensor h = widened(hx);
  const at::Tensor hy = n + z * (h - n);
  const auto type = input_gates.scalar_type();
  return {hy.to(type), at::cat({r, z, n, h, hn}, 1).to(type)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> composed_gru_cell_backward(
    const at::Tensor& grad_hy, const at::Tensor& workspace, bool has_bias) {
  c10::DeviceGuard guard(workspace.device());
  const auto saved = widened(workspace).chunk(5, 1);
  const at::Tensor &r = saved[0], &z = saved[1], &n = saved[2], &h = saved[3], &hn = saved[4];
  const at::Tensor dh = widened(grad_hy);
  const at::Tensor grad_z = dh * (h - n) * (1 - z) * z;
  const at::Tensor grad_n = dh * (1 - z) * (1 - n * n);
  const at::Tensor grad_r = grad_n * hn * (1 - r) * r;
  const auto type = workspace.scalar_type();
  const at::Tensor grad_input = at::cat({grad_r, grad_z, grad_n}, 1);
  const at::Tensor grad_hidden = at::cat({grad_r, grad_z, grad_n * r}, 1);
  return {grad_input.to(type), grad_hidden.to(type), (dh * z).to(type),
          has_bias ? grad_input.sum(0).to(type) : at::Tensor(), has_bias ? grad_hidden.sum(0).to(type) : at::Tensor()};
}

// ---- The kernels -----------------------------------------------------------------------------------

std::optional<kernels::DeviceTensorRef> operand(const std::optional<at::Tensor>& t) {
  if (!t || !t->defined()) return std::nullopt;
  return device_ref(*t);
}

bool defined(const std::optional<at::Tensor>& t) {
  return t && t->defined();
}

// Contiguous, and of the cell's dtype (a bias or gradient of another float dtype is converted).
at::Tensor dense(const at::Tensor& t, c10::ScalarType type) {
  return t.to(type).contiguous();
}

std::optional<at::Tensor> dense(const std::optional<at::Tensor>& t, c10::ScalarType type) {
  return defined(t) ? std::optional<at::Tensor>(dense(*t, type)) : std::nullopt;
}

// What the kernel writes for a result of `type`: float32 or float64 as they are, a 16-bit dtype in
// float32 (rounded by the caller).
at::Tensor written(at::IntArrayRef sizes, const at::Tensor& like) {
  const auto type = like.scalar_type() == c10::kDouble ? c10::kDouble : c10::kFloat;
  return at::empty(sizes, like.options().dtype(type));
}

bool runs(runtime::DeviceContext& context, const kernels::RnnCellProblem& r) {
  std::lock_guard<std::recursive_mutex> lock(context.mutex());
  return kernels::rnn_cell(context, r);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> lstm_cell(const at::Tensor& input_gates, const at::Tensor& hidden_gates,
                                                         const at::Tensor& cx,
                                                         const std::optional<at::Tensor>& input_bias,
                                                         const std::optional<at::Tensor>& hidden_bias) {
  c10::DeviceGuard guard(input_gates.device());
  const auto type = input_gates.scalar_type();
  const int64_t batch = cx.size(0), hidden = cx.size(1);
  // The kernel adds both biases or neither.
  const bool biased = defined(input_bias) && defined(hidden_bias);
  // An empty batch has no buffer to bind: the composition returns its empty results.
  if (defined(input_bias) != defined(hidden_bias) || input_gates.dim() != 2 || cx.dim() != 2 || cx.numel() == 0)
    return composed_lstm_cell(input_gates, hidden_gates, cx, input_bias, hidden_bias);
  const at::Tensor ig = dense(input_gates, type), hg = dense(hidden_gates, type), c = dense(cx, type);
  const auto ib = biased ? dense(input_bias, type) : std::nullopt;
  const auto hb = biased ? dense(hidden_bias, type) : std::nullopt;
  const at::Tensor hy = written({batch, hidden}, input_gates), cy = written({batch, hidden}, input_gates);
  const at::Tensor workspace = written({batch, 4 * hidden}, input_gates);
  kernels::RnnCellProblem r{kernels::RnnCellPass::LstmForward, type, static_cast<uint64_t>(batch),
                            static_cast<uint64_t>(hidden),
                            {device_ref(ig), device_ref(hg), device_ref(c), operand(ib), operand(hb), device_ref(hy),
                             device_ref(cy), device_ref(workspace)}};
  if (!runs(context_of(input_gates), r))
    return composed_lstm_cell(input_gates, hidden_gates, cx, input_bias, hidden_bias);
  return {hy.to(type), cy.to(type), workspace.to(type)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> lstm_cell_backward(const std::optional<at::Tensor>& grad_hy,
                                                                  const std::optional<at::Tensor>& grad_cy,
                                                                  const at::Tensor& cx, const at::Tensor& cy,
                                                                  const at::Tensor& workspace, bool has_bias) {
  if (!defined(grad_hy) && !defined(grad_cy)) return {};
  if (cx.numel() == 0) return composed_lstm_cell_backward(grad_hy, grad_cy, cx, cy, workspace, has_bias);
  c10::DeviceGuard guard(workspace.device());
  const auto type = workspace.scalar_type();
  const int64_t batch = cx.size(0), hidden = cx.size(1);
  const auto dh = dense(grad_hy, type), dc = dense(grad_cy, type);
  const at::Tensor c = dense(cx, type), c_out = dense(cy, type), saved = dense(workspace, type);
  const at::Tensor grad_gates = written({batch, 4 * hidden}, workspace), grad_cx = written({batch, hidden}, workspace);
  kernels::RnnCellProblem r{kernels::RnnCellPass::LstmBackward, type, static_cast<uint64_t>(batch),
                            static_cast<uint64_t>(hidden),
                            {operand(dh), operand(dc), device_ref(c), device_ref(c_out), device_ref(saved),
                             device_ref(grad_gates), device_ref(grad_cx)}};
  if (!runs(context_of(workspace), r))
    return composed_lstm_cell_backward(grad_hy, grad_cy, cx, cy, workspace, has_bias);
  return {grad_gates.to(type), grad_cx.to(type), has_bias ? grad_gates.sum(0).to(type) : at::Tensor()};
}

std::tuple<at::Tensor, at::Tensor> gru_cell(const at::Tensor& input_gates, const at::Tensor& hidden_gates,
                                            const at::Tensor& hx, const std::optional<at::Tensor>& input_bias,
                                            const std::optional<at::Tensor>& hidden_bias) {
  c10::DeviceGuard guard(input_gates.device());
  const auto type = input_gates.scalar_type();
  const int64_t batch = hx.size(0), hidden = hx.size(1);
  const bool biased = defined(input_bias) && defined(hidden_bias);
  if (defined(input_bias) != defined(hidden_bias) || input_gates.dim() != 2 || hx.dim() != 2 || hx.numel() == 0)
    return composed_gru_cell(input_gates, hidden_gates, hx, input_bias, hidden_bias);
  const at::Tensor ig = dense(input_gates, type), hg = dense(hidden_gates, type), h = dense(hx, type);
  const auto ib = biased ? dense(input_bias, type) : std::nullopt;
  const auto hb = biased ? dense(hidden_bias, type) : std::nullopt;
  const at::Tensor hy = written({batch, hidden}, input_gates), workspace = written({batch, 5 * hidden}, input_gates);
  kernels::RnnCellProblem r{kernels::RnnCellPass::GruForward, type, static_cast<uint64_t>(batch),
                            static_cast<uint64_t>(hidden),
                            {device_ref(ig), device_ref(hg), device_ref(h), operand(ib), operand(hb), device_ref(hy),
                             device_ref(workspace)}};
  if (!runs(context_of(input_gates), r))
    return composed_gru_cell(input_gates, hidden_gates, hx, input_bias, hidden_bias);
  return {hy.to(type), workspace.to(type)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> gru_cell_backward(const at::Tensor& grad_hy,
                                                                                        const at::Tensor& workspace,
                                                                                        bool has_bias) {
  if (grad_hy.numel() == 0) return composed_gru_cell_backward(grad_hy, workspace, has_bias);
  c10::DeviceGuard guard(workspace.device());
  const auto type = workspace.scalar_type();
  const int64_t batch = grad_hy.size(0), hidden = grad_hy.size(1);
  const at::Tensor dh = dense(grad_hy, type), saved = dense(workspace, type);
  const at::Tensor grad_input = written({batch, 3 * hidden}, workspace);
  const at::Tensor grad_hidden = written({batch, 3 * hidden}, workspace), grad_hx = written({batch, hidden}, workspace);
  kernels::RnnCellProblem r{kernels::RnnCellPass::GruBackward, type, static_cast<uint64_t>(batch),
                            static_cast<uint64_t>(hidden),
                            {device_ref(dh), device_ref(saved), device_ref(grad_input), device_ref(grad_hidden),
                             device_ref(grad_hx)}};
  if (!runs(context_of(workspace), r)) return composed_gru_cell_backward(grad_hy, workspace, has_bias);
  return {grad_input.to(type), grad_hidden.to(type), grad_hx.to(type),
          has_bias ? grad_input.sum(0).to(type) : at::Tensor(), has_bias ? grad_hidden.sum(0).to(type) : at::Tensor()};
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/rnn_cell_ops.inc"

} // namespace
} // namespace torch_dml::aten
