// The fused LSTM and GRU cells, forward and backward, one kernel each (wgsl/lstm_cell*.wgsl,
// wgsl/gru_cell*.wgsl): one thread per (batch row, hidden unit) over contiguous tensors whose gates are
// laid out [batch][gate * hidden + unit]. Inputs are read in their dtype; outputs are written in the
// computation type (float32, or float64 for a float64 cell): the caller rounds to a 16-bit dtype.
#pragma once

#include <c10/core/ScalarType.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/tensor_ref.h"
#include "runtime/device.h"

namespace torch_dml::kernels {

enum class RnnCellPass { LstmForward, LstmBackward, GruForward, GruBackward };

struct RnnCellProblem {
  RnnCellPass pass = RnnCellPass::LstmForward;
  c10::ScalarType dtype = c10::kFloat; // of the inputs
  uint64_t batch = 0, hidden = 0;
  // The tensors in the order of the pass's storage bindings (the .wgsl file's), nullopt for an optional
  // input that is absent (a bias, grad_hy or grad_cy): its binding gets a stand-in never read.
  // LstmForward: input_gates, hidden_gates, cx, input_bias, hidden_bias | hy, cy, workspace
  // LstmBackward: grad_hy, grad_cy, cx, cy, workspace | grad_gates, grad_cx
  // GruForward: input_gates, hidden_gates, hx, input_bias, hidden_bias | hy, workspace
  // GruBackward: grad_hy, workspace | grad_input_gates, grad_hidden_gates, grad_hx
  std::vector<std::optional<DeviceTensorRef>> operands;
};

// Runs the cell (planned once: it runs every time step); false, with nothing recorded, where the kernel
// does not take the problem. The caller holds the device lock.
bool rnn_cell(runtime::DeviceContext& context, const RnnCellProblem& r);

} // namespace torch_dml::kernels
