// The fused optimizer steps (Adam/AdamW and SGD): one launch per chunk of parameter tensors (as many as
// the adapter's bindings allow, kernels/tensor_slots.h) updating each parameter, its state and (with a
// GradScaler) its gradient in one pass. Every tensor operand of one
// launch is contiguous, of one dtype (float32, float16 or bfloat16) and starts on a u32 word.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
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

// Every parameter's step, recorded once all are planned: "", or why the kernel declines them (nothing
// recorded). The options and scalars are the first step's: one call's steps share them.
std::string adam_steps(runtime::DeviceContext& context, std::span<const AdamStep> steps);
std::string sgd_steps(runtime::DeviceContext& context, std::span<const SgdStep> steps);

} // namespace torch_dml::kernels
