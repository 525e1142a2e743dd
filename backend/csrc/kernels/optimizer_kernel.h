// The fused optimizer steps (Adam/AdamW and SGD): one launch per parameter tensor updating the
// parameter, its state and (with a GradScaler) its gradient in one pass. Every tensor operand of one
// launch is contiguous, of one dtype (float32, float16 or bfloat16) and starts on a u32 word.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "kernels/tensor_ref.h"

namespace torch_dml::kernels {

// The group's scalars that live on the device, in one float32 tensor (`values`), each at its index or
// absent: a tensor lr, GradScaler's scale (gradients are divided by it) and found_inf (1 skips the step).
struct DeviceScalars {
  std::optional<DeviceTensorRef> values;
  std::optional<uint32_t> lr, scale, found_inf;
};

struct AdamStep {
  uint64_t count = 0; // elements of the parameter
  DeviceTensorRef param, grad, exp_avg, exp_avg_sq;
  std::optional<DeviceTensorRef> max_exp_avg_sq; // amsgrad
  DeviceTensorRef step;                          // float32, one element, already incremented
  DeviceScalars scalars;
  double lr = 0, beta1 = 0, beta2 = 0, weight_decay = 0, eps = 0; // lr unless scalars.lr
  bool maximize = false;
  bool adamw = false;
};

struct SgdStep {
  uint64_t count = 0;
  DeviceTensorRef param, grad;
  std::optional<DeviceTensorRef> momentum_buffer; // momentum != 0
  DeviceScalars scalars;
  double lr = 0, weight_decay = 0, momentum = 0, dampening = 0; // lr unless scalars.lr
  bool nesterov = false, maximize = false, first_step = false;
};

std::string adam_step_unsupported_reason(runtime::DeviceContext& context, const AdamStep& step);
void adam_step(runtime::DeviceContext& context, const AdamStep& step);

std::string sgd_step_unsupported_reason(runtime::DeviceContext& context, const SgdStep& step);
void sgd_step(runtime::DeviceContext& context, const SgdStep& step);

} // namespace torch_dml::kernels
