// torch.optim's fused steps on dml (Adam/AdamW/SGD with fused=True): _fused_adam_, _fused_adamw_ and
// _fused_sgd_, plain and tensor_lr. One kernel launch per chunk of parameter tensors (as many as the
// adapter's storage bindings allow), plus, when a call brings
// more than one device scalar (a dml lr tensor, GradScaler's scale, found_inf), one cat gathering them;
// nothing is read back to the host. A call with a tensor the kernels cannot take (float64, not
// contiguous, a packed tensor not starting on a u32 word, a step count not float32 on the device) runs
// whole on the counted CPU fallback, which names the reason; bad input raises before any work.
#include <ATen/ATen.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/_fused_adam_ops.h>
#include <ATen/ops/_fused_adamw_ops.h>
#include <ATen/ops/_fused_sgd_ops.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <functional>
#include <optional>
#include <type_traits>
#include <string>
#include <vector>

#include "aten/common.h"
#include "aten/cpu_round_trip.h"
#include "aten/fallback.h"
#include "kernels/optimizer_kernel.h"

namespace torch_dml::aten {
namespace {

// Why the current call was declined, for the boxed fallback below (set just before it is reached).
thread_local std::string t_decline_reason;

void declined_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const c10::OperatorName& name = op.schema().operator_name();
  enter_fallback(name.overload_name.empty() ? name.name : name.name + "." + name.overload_name, t_decline_reason);
  run_on_cpu(op, stack);
}

template <typename Op, typename... Args>
void run_declined(const std::string& reason, Args&&... args) {
  t_decline_reason = reason;
  at::native::call_fallback_fn<&declined_fallback, Op>::call(std::forward<Args>(args)...);
}

void check_list(const char* op, const char* what, at::TensorList list, size_t size) {
  TORCH_CHECK(list.size() == size, op, ": expected ", size, " ", what, " (one per parameter), got ", list.size());
}

void check_like(const char* op, const char* what, const at::Tensor& t, const at::Tensor& param) {
  TORCH_CHECK(t.device() == param.device(), op, ": ", what, " on ", t.device(), ", its parameter on ", param.device());
  TORCH_CHECK(t.sizes() == param.sizes(), op, ": ", what, " of shape ", t.sizes(), " for a parameter of shape ",
              param.sizes());
}

// The reason a tensor of the step cannot go to the kernel, or "".
std::string kernel_declines(const at::Tensor& t, const at::Tensor& param) {
  if (t.scalar_type() != param.scalar_type())
    return std::string(c10::toString(t.scalar_type())) + " state beside " + c10::toString(param.scalar_type()) +
        " parameters";
  if (!t.is_contiguous()) return "a non-contiguous tensor";
  return "";
}

// A per-parameter list of the step: its name in errors, and one element's.
struct StateList {
  const char* name;
  const char* element;
  at::TensorList tensors;
};

// Raises on malformed input (list lengths, devices, shapes); returns why the kernels decline the call,
// or "".
std::string check_step_tensors(const char* op, at::TensorList params, const std::vector<StateList>& states) {
  for (const StateList& s : states) check_list(op, s.name, s.tensors, params.size());
  std::string reason;
  for (size_t i = 0; i < params.size(); ++i) {
    const at::Tensor& param = params[i];
    TORCH_CHECK(param.device() == params[0].device(), op, ": parameters on ", params[0].device(), " and ",
                param.device());
    TORCH_CHECK(at::isFloatingType(param.scalar_type()), op, ": parameters must be floating point, got ",
                param.scalar_type());
    if (reason.empty()) reason = kernel_declines(param, param);
    for (const StateList& s : states) {
      check_like(op, s.element, s.tensors[i], param);
      if (reason.empty()) reason = kernel_declines(s.tensors[i], param);
    }
  }
  return reason;
}

// The call's scalars that live on the dml device, gathered into one float32 tensor for the kernel. A
// lr tensor on the CPU is read on the host (no device wait) and travels as a uniform.
struct Scalars {
  kernels::DeviceScalars refs;
  at::Tensor values; // keeps the gathered tensor alive until the launches are recorded
  double lr = 0;
};

Scalars gather_scalars(const char* op, const at::Tensor& param, double lr, const at::Tensor* lr_tensor,
                       const std::optional<at::Tensor>& grad_scale, const std::optional<at::Tensor>& found_inf) {
  Scalars s;
  s.lr = lr;
  std::vector<at::Tensor> parts;
  auto add = [&](const at::Tensor& t, const char* what) {
    TORCH_CHECK(t.numel() == 1, op, ": ", what, " must hold one element, got ", t.numel());
    TORCH_CHECK(at::isFloatingType(t.scalar_type()), op, ": ", what, " must be floating point, got ",
                t.scalar_type());
    parts.push_back(t.to(param.device(), c10::kFloat).reshape({1}));
    return static_cast<uint32_t>(parts.size() - 1);
  };
  if (lr_tensor != nullptr) {
    if (lr_tensor->device().is_cpu()) {
      TORCH_CHECK(lr_tensor->numel() == 1, op, ": lr must hold one element, got ", lr_tensor->numel());
      s.lr = lr_tensor->item<double>();
    } else {
      s.refs.lr = add(*lr_tensor, "lr");
    }
  }
  if (grad_scale && grad_scale->defined()) s.refs.scale = add(*grad_scale, "grad_scale");
  if (found_inf && found_inf->defined()) s.refs.found_inf = add(*found_inf, "found_inf");
  if (parts.empty()) return s;
  s.values = parts.size() == 1 ? parts[0].contiguous() : at::cat(parts);
  s.refs.values = device_ref(s.values);
  return s;
}

// ---- Adam / AdamW ----

struct AdamArgs {
  at::TensorList params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps;
  double lr, beta1, beta2, weight_decay, eps;
  bool amsgrad, maximize;
  const std::optional<at::Tensor>& grad_scale;
  const std::optional<at::Tensor>& found_inf;
};

// Returns "" once every parameter's step is recorded, or why the kernel declined (nothing recorded).
std::string adam(const char* op, bool adamw, const AdamArgs& a, const at::Tensor* lr_tensor) {
  const size_t n = a.params.size();
  std::vector<StateList> states{{"gradients", "a gradient", a.grads},
                                {"exp_avgs", "an exp_avg", a.exp_avgs},
                                {"exp_avg_sqs", "an exp_avg_sq", a.exp_avg_sqs}};
  if (a.amsgrad) states.push_back({"max_exp_avg_sqs", "a max_exp_avg_sq", a.max_exp_avg_sqs});
  check_list(op, "state_steps", a.state_steps, n);
  std::string reason = check_step_tensors(op, a.params, states);
  if (n == 0) return "";
  const at::Tensor& first = a.params[0];
  for (const at::Tensor& step : a.state_steps) {
    TORCH_CHECK(step.numel() == 1, op, ": a step count must hold one element, got ", step.numel());
    if (reason.empty() && (step.device() != first.device() || step.scalar_type() != c10::kFloat))
      reason = "a step count that is not a float32 tensor on the parameters' device";
  }
  if (!reason.empty()) return reason;
  c10::DeviceGuard guard(first.device());
  runtime::DeviceContext& context = context_of(first);
  const Scalars scalars = gather_scalars(op, first, a.lr, lr_tensor, a.grad_scale, a.found_inf);
  std::vector<kernels::AdamStep> steps(n);
  for (size_t i = 0; i < n; ++i) {
    kernels::AdamStep& s = steps[i];
    s.count = static_cast<uint64_t>(a.params[i].numel());
    if (s.count == 0) continue; // an empty tensor has no buffer to bind
    s.param = device_ref(a.params[i]);
    s.grad = device_ref(a.grads[i]);
    s.exp_avg = device_ref(a.exp_avgs[i]);
    s.exp_avg_sq = device_ref(a.exp_avg_sqs[i]);
    if (a.amsgrad) s.max_exp_avg_sq = device_ref(a.max_exp_avg_sqs[i]);
    s.step = device_ref(a.state_steps[i]);
    s.scalars = scalars.refs;
    s.lr = scalars.lr;
    s.beta1 = a.beta1;
    s.beta2 = a.beta2;
    s.weight_decay = a.weight_decay;
    s.eps = a.eps;
    s.maximize = a.maximize;
    s.adamw = adamw;
  }
  return kernels::adam_steps(context, steps);
}

// What a declined call tells the fallback: "(Double on <adapter>: <reason>)".
std::string declined(at::TensorList params, const std::string& reason) {
  return std::string("(") + c10::toString(params[0].scalar_type()) + " on " + context_of(params[0]).describe() +
      ": " + reason + ")";
}

// The lr of the plain overloads is a double, of the tensor_lr ones a tensor.
template <bool TensorLr>
using LrArg = std::conditional_t<TensorLr, const at::Tensor&, double>;

template <bool TensorLr>
const at::Tensor* lr_tensor(LrArg<TensorLr> lr) {
  if constexpr (TensorLr) return &lr;
  else return nullptr;
}

template <bool TensorLr>
double lr_value(LrArg<TensorLr> lr) {
  if constexpr (TensorLr) return 0.0;
  else return lr;
}

template <bool AdamW, bool TensorLr>
void fused_adam(at::TensorList params, at::TensorList grads, at::TensorList exp_avgs, at::TensorList exp_avg_sqs,
                at::TensorList max_exp_avg_sqs, at::TensorList state_steps, LrArg<TensorLr> lr, double beta1,
                double beta2, double weight_decay, double eps, bool amsgrad, bool maximize,
                const std::optional<at::Tensor>& grad_scale, const std::optional<at::Tensor>& found_inf) {
  using Plain = std::conditional_t<AdamW, at::_ops::_fused_adamw_, at::_ops::_fused_adam_>;
  using WithTensorLr = std::conditional_t<AdamW, at::_ops::_fused_adamw__tensor_lr, at::_ops::_fused_adam__tensor_lr>;
  const AdamArgs args{params,       grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr_value<TensorLr>(lr),
                      beta1,        beta2, weight_decay, eps,     amsgrad,         maximize,    grad_scale,
                      found_inf};
  const std::string reason = adam(AdamW ? "_fused_adamw_" : "_fused_adam_", AdamW, args, lr_tensor<TensorLr>(lr));
  if (reason.empty()) return;
  run_declined<std::conditional_t<TensorLr, WithTensorLr, Plain>>(
      declined(params, reason), params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1, beta2,
      weight_decay, eps, amsgrad, maximize, grad_scale, found_inf);
}

// ---- SGD ----

struct SgdArgs {
  at::TensorList params, grads, momentum_buffers;
  double weight_decay, momentum, lr, dampening;
  bool nesterov, maximize, first_step;
  const std::optional<at::Tensor>& grad_scale;
  const std::optional<at::Tensor>& found_inf;
};

std::string sgd(const SgdArgs& a, const at::Tensor* lr_tensor) {
  const char* op = "_fused_sgd_";
  const size_t n = a.params.size();
  const bool has_momentum = a.momentum != 0;
  std::vector<StateList> states{{"gradients", "a gradient", a.grads}};
  if (has_momentum) states.push_back({"momentum buffers", "a momentum buffer", a.momentum_buffers});
  const std::string reason = check_step_tensors(op, a.params, states);
  if (n == 0 || !reason.empty()) return reason;
  const at::Tensor& first = a.params[0];
  c10::DeviceGuard guard(first.device());
  runtime::DeviceContext& context = context_of(first);
  const Scalars scalars = gather_scalars(op, first, a.lr, lr_tensor, a.grad_scale, a.found_inf);
  std::vector<kernels::SgdStep> steps(n);
  for (size_t i = 0; i < n; ++i) {
    kernels::SgdStep& s = steps[i];
    s.count = static_cast<uint64_t>(a.params[i].numel());
    if (s.count == 0) continue; // an empty tensor has no buffer to bind
    s.param = device_ref(a.params[i]);
    s.grad = device_ref(a.grads[i]);
    if (has_momentum) s.momentum_buffer = device_ref(a.momentum_buffers[i]);
    s.scalars = scalars.refs;
    s.lr = scalars.lr;
    s.weight_decay = a.weight_decay;
    s.momentum = a.momentum;
    s.dampening = a.dampening;
    s.nesterov = a.nesterov;
    s.maximize = a.maximize;
    s.first_step = a.first_step;
  }
  return kernels::sgd_steps(context, steps);
}

template <bool TensorLr>
void fused_sgd(at::TensorList params, at::TensorList grads, at::TensorList momentum_buffers, double weight_decay,
               double momentum, LrArg<TensorLr> lr, double dampening, bool nesterov, bool maximize,
               bool is_first_step, const std::optional<at::Tensor>& grad_scale,
               const std::optional<at::Tensor>& found_inf) {
  const SgdArgs args{params,   grads,    momentum_buffers, weight_decay, momentum, lr_value<TensorLr>(lr), dampening,
                     nesterov, maximize, is_first_step,    grad_scale,   found_inf};
  const std::string reason = sgd(args, lr_tensor<TensorLr>(lr));
  if (reason.empty()) return;
  run_declined<std::conditional_t<TensorLr, at::_ops::_fused_sgd__tensor_lr, at::_ops::_fused_sgd_>>(
      declined(params, reason), params, grads, momentum_buffers, weight_decay, momentum, lr, dampening, nesterov,
      maximize, is_first_step, grad_scale, found_inf);
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/optimizer_ops.inc"

} // namespace
} // namespace torch_dml::aten
