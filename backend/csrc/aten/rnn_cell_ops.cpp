// The fused LSTM and GRU cells (+ backward). aten's LSTM/GRU cell code calls `_thnn_fused_*_cell` on
// every accelerator (PrivateUse1 included), and those have no CPU kernel, so without these nn.LSTM and
// nn.GRU could not run at all. They are composed here from native dml ops (about fifteen dispatches a
// cell instead of one fused kernel: correct and fallback-free, not yet fast).
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

namespace torch_dml::aten {
namespace {

at::Tensor with_bias(const at::Tensor& gates, const std::optional<at::Tensor>& bias) {
  const at::Tensor wide = widened(gates);
  return bias && bias->defined() ? wide + widened(*bias) : wide;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> lstm_cell(const at::Tensor& input_gates, const at::Tensor& hidden_gates,
                                                         const at::Tensor& cx,
                                                         const std::optional<at::Tensor>& input_bias,
                                                         const std::optional<at::Tensor>& hidden_bias) {
  c10::DeviceGuard guard(input_gates.device());
  const at::Tensor gates = with_bias(input_gates, input_bias) + with_bias(hidden_gates, hidden_bias);
  const auto chunks = gates.chunk(4, 1);
  const at::Tensor i = chunks[0].sigmoid(), f = chunks[1].sigmoid(), g = chunks[2].tanh(), o = chunks[3].sigmoid();
  const at::Tensor cy = f * widened(cx) + i * g;
  const at::Tensor hy = o * cy.tanh();
  const auto type = input_gates.scalar_type();
  return {hy.to(type), cy.to(type), at::cat({i, f, g, o}, 1).to(type)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> lstm_cell_backward(const std::optional<at::Tensor>& grad_hy,
                                                                  const std::optional<at::Tensor>& grad_cy,
                                                                  const at::Tensor& cx, const at::Tensor& cy,
                                                                  const at::Tensor& workspace, bool has_bias) {
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

std::tuple<at::Tensor, at::Tensor> gru_cell(const at::Tensor& input_gates, const at::Tensor& hidden_gates,
                                            const at::Tensor& hx, const std::optional<at::Tensor>& input_bias,
                                            const std::optional<at::Tensor>& hidden_bias) {
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

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> gru_cell_backward(const at::Tensor& grad_hy,
                                                                                        const at::Tensor& workspace,
                                                                                        bool has_bias) {
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

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/rnn_cell_ops.inc"

} // namespace
} // namespace torch_dml::aten
