// Batch normalisation on the batch-norm kernels: every overload nn.BatchNorm*, F.batch_norm,
// torch.compile and export reach (native_batch_norm and its backward from eager autograd;
// _native_batch_norm_legit, _batch_norm_with_update and batch_norm_backward from the decompositions),
// with their out= forms. Training updates the caller's running statistics in place. Inputs the
// kernels do not take (other dtypes, a parameter dtype the CPU would refuse, count 1 with running
// statistics, evaluation with eps <= 0) go to the CPU fallback, which counts and honours strict mode.
// native_group_norm's forward runs on the same kernels: its statistics are batch norm's over each
// sample's groups (what they do not take stays on PyTorch's composite math, as before).
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/_batch_norm_with_update_ops.h>
#include <ATen/ops/_native_batch_norm_legit_ops.h>
#include <ATen/ops/batch_norm_backward_ops.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/native_batch_norm_backward_ops.h>
#include <ATen/ops/native_batch_norm_ops.h>
#include <ATen/ops/native_group_norm_native.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "aten/common.h"
#include "aten/fallback.h"
#include "kernels/batch_norm_kernel.h"

namespace torch_dml::aten {
namespace {

using Triple = std::tuple<at::Tensor, at::Tensor, at::Tensor>;
using OptionalTensor = std::optional<at::Tensor>;

bool given(const OptionalTensor& t) {
  return t.has_value() && t->defined();
}

bool reduced(c10::ScalarType type) {
  return type == c10::kHalf || type == c10::kBFloat16;
}

c10::ScalarType accumulation(c10::ScalarType input) {
  return input == c10::kDouble ? c10::kDouble : c10::kFloat;
}

// A per-channel tensor the kernels take: `channels` elements of the input's dtype, or float32 beside a
// 16-bit input (AMP's float32 parameters), as the CPU kernel accepts them.
bool per_channel(const OptionalTensor& t, const at::Tensor& input) {
  if (!given(t)) return true;
  const c10::ScalarType type = t->scalar_type();
  return t->device() == input.device() && t->numel() == input.size(1) &&
         (type == input.scalar_type() || (type == c10::kFloat && reduced(input.scalar_type())));
}

// The dtype of save_mean / save_invstd and of the weight and bias gradients, as the CPU gives them:
// float32 when a 16-bit input meets a float32 parameter, the input's dtype otherwise.
c10::ScalarType statistics_dtype(const at::Tensor& input, std::initializer_list<const OptionalTensor*> params) {
  if (reduced(input.scalar_type()))
    for (const OptionalTensor* t : params)
      if (given(*t) && (*t)->scalar_type() == c10::kFloat) return c10::kFloat;
  return input.scalar_type();
}

bool computable(const at::Tensor& input) {
  const c10::ScalarType type = input.scalar_type();
  return input.dim() >= 2 && input.numel() > 0 && input.size(1) > 0 &&
         (type == c10::kFloat || type == c10::kHalf || type == c10::kBFloat16 || type == c10::kDouble);
}

// The input's memory order when the kernels read it in place: NCHW (any rank) or channels_last.
std::optional<at::MemoryFormat> dense_format(const at::Tensor& t) {
  if (t.is_contiguous()) return at::MemoryFormat::Contiguous;
  if (t.dim() == 4 && t.is_contiguous(at::MemoryFormat::ChannelsLast)) return at::MemoryFormat::ChannelsLast;
  if (t.dim() == 5 && t.is_contiguous(at::MemoryFormat::ChannelsLast3d)) return at::MemoryFormat::ChannelsLast3d;
  return std::nullopt;
}

kernels::BatchNormShape shape_of(const at::Tensor& input, at::MemoryFormat format) {
  kernels::BatchNormShape shape;
  shape.channels = static_cast<uint64_t>(input.size(1));
  shape.count = static_cast<uint64_t>(input.numel()) / shape.channels;
  shape.inner = 1;
  if (format == at::MemoryFormat::Contiguous)
    for (int64_t d = 2; d < input.dim(); ++d) shape.inner *= static_cast<uint64_t>(input.size(d));
  return shape;
}

// `t` as a dense tensor of the accumulation dtype: itself when it already is one, else a copy that
// write_back() returns to it.
at::Tensor accumulation_copy(const at::Tensor& t, c10::ScalarType acc) {
  if (t.scalar_type() == acc && t.is_contiguous()) return t;
  return t.to(acc).contiguous();
}

void write_back(const at::Tensor& target, const at::Tensor& copy) {
  if (!copy.is_same(target)) target.copy_(copy);
}

// Forward on the kernels, or nullopt when they do not take the problem (the caller falls back).
std::optional<Triple> forward(const at::Tensor& input, const OptionalTensor& weight, const OptionalTensor& bias,
                              const OptionalTensor& running_mean, const OptionalTensor& running_var, bool training,
                              double momentum, double eps) {
  if (!computable(input) || !per_channel(weight, input) || !per_channel(bias, input) ||
      !per_channel(running_mean, input) || !per_channel(running_var, input) ||
      (given(weight) && given(bias) && weight->scalar_type() != bias->scalar_type()) ||
      given(running_mean) != given(running_var))
    return std::nullopt;
  const bool running = given(running_mean);
  const int64_t channels = input.size(1);
  const int64_t count = input.numel() / channels;
  // An unbiased variance of one value is 0 / 0; the CPU's evaluation divides by zero when eps <= 0.
  if (training ? (running && count < 2) : (!running || !(eps > 0))) return std::nullopt;
  runtime::DeviceContext& context = context_of(input);
  c10::DeviceGuard guard(input.device());
  const std::optional<at::MemoryFormat> dense = dense_format(input);
  const at::MemoryFormat format = dense.value_or(at::MemoryFormat::Contiguous);
  const at::Tensor x = dense ? input : input.contiguous();
  const c10::ScalarType acc = accumulation(input.scalar_type());
  const at::TensorOptions acc_options = input.options().dtype(acc);
  const c10::ScalarType stats = statistics_dtype(input, {&weight, &bias, &running_mean, &running_var});

  kernels::BatchNormForward problem;
  problem.shape = shape_of(x, format);
  problem.training = training;
  problem.eps = eps;
  problem.momentum = momentum;
  problem.input = device_ref(x);
  at::Tensor w, b, mean_acc, var_acc, save_mean, save_invstd;
  if (given(weight)) problem.weight = device_ref(w = weight->contiguous());
  if (given(bias)) problem.bias = device_ref(b = bias->contiguous());
  if (running) {
    problem.running_mean = device_ref(mean_acc = accumulation_copy(*running_mean, acc));
    problem.running_var = device_ref(var_acc = accumulation_copy(*running_var, acc));
  }
  if (training) {
    problem.save_mean = device_ref(save_mean = at::empty({channels}, acc_options));
    problem.save_invstd = device_ref(save_invstd = at::empty({channels}, acc_options));
  }
  const at::Tensor coef = at::empty({channels * 4}, acc_options);
  problem.coef = device_ref(coef);
  at::Tensor out = at::empty_like(x, format);
  problem.out = device_ref(out);
  {
    std::lock_guard<std::recursive_mutex> lock(context.mutex());
    if (!kernels::batch_norm_forward_unsupported_reason(context, problem).empty()) return std::nullopt;
    kernels::batch_norm_forward(context, problem);
  }
  if (training && running) {
    write_back(*running_mean, mean_acc);
    write_back(*running_var, var_acc);
  }
  if (!training) {
    save_mean = at::empty({0}, input.options().dtype(stats));
    save_invstd = at::empty({0}, input.options().dtype(stats));
  }
  return Triple{out, save_mean.to(stats), save_invstd.to(stats)};
}

// Backward on the kernels, or nullopt. Training reads save_mean / save_invstd, evaluation the running
// statistics (grad_input = grad * weight / sqrt(running_var + eps)).
std::optional<Triple> backward(const at::Tensor& grad_out, const at::Tensor& input, const OptionalTensor& weight,
                               const OptionalTensor& running_mean, const OptionalTensor& running_var,
                               const OptionalTensor& save_mean, const OptionalTensor& save_invstd, bool training,
                               double eps, std::array<bool, 3> output_mask) {
  const OptionalTensor& mean = training ? save_mean : running_mean;
  const OptionalTensor& spread = training ? save_invstd : running_var;
  if (!computable(input) || grad_out.scalar_type() != input.scalar_type() || !grad_out.sizes().equals(input.sizes()) ||
      grad_out.device() != input.device() || !given(mean) || !given(spread) || !per_channel(mean, input) ||
      !per_channel(spread, input) || !per_channel(weight, input) || (!training && !(eps > 0)))
    return std::nullopt;
  runtime::DeviceContext& context = context_of(input);
  c10::DeviceGuard guard(input.device());
  const std::optional<at::MemoryFormat> dense = dense_format(input);
  const at::MemoryFormat format = dense.value_or(at::MemoryFormat::Contiguous);
  const at::Tensor x = dense ? input : input.contiguous();
  const at::Tensor g = grad_out.contiguous(format);
  const c10::ScalarType acc = accumulation(input.scalar_type());
  const at::TensorOptions acc_options = input.options().dtype(acc);
  const int64_t channels = input.size(1);
  // The kernel reads mean and spread as one dtype.
  const bool same = mean->scalar_type() == spread->scalar_type();
  const at::Tensor mean_t = same ? mean->contiguous() : mean->to(acc).contiguous();
  const at::Tensor spread_t = same ? spread->contiguous() : spread->to(acc).contiguous();

  kernels::BatchNormBackward problem;
  problem.shape = shape_of(x, format);
  problem.training = training;
  problem.eps = eps;
  problem.grad = device_ref(g);
  problem.input = device_ref(x);
  problem.mean = device_ref(mean_t);
  problem.spread = device_ref(spread_t);
  at::Tensor w;
  if (given(weight)) problem.weight = device_ref(w = weight->contiguous());
  const at::Tensor grad_weight = at::empty({channels}, acc_options), grad_bias = at::empty({channels}, acc_options);
  const at::Tensor coef = at::empty({channels * 4}, acc_options);
  problem.grad_weight = device_ref(grad_weight);
  problem.grad_bias = device_ref(grad_bias);
  problem.coef = device_ref(coef);
  at::Tensor grad_input;
  if (output_mask[0]) problem.grad_input = device_ref(grad_input = at::empty_like(x, format));
  {
    std::lock_guard<std::recursive_mutex> lock(context.mutex());
    if (!kernels::batch_norm_backward_unsupported_reason(context, problem).empty()) return std::nullopt;
    kernels::batch_norm_backward(context, problem);
  }
  const c10::ScalarType params = statistics_dtype(input, {&weight, &running_mean, &running_var, &save_mean, &save_invstd});
  return Triple{grad_input, output_mask[1] ? grad_weight.to(params) : at::Tensor(),
                output_mask[2] ? grad_bias.to(params) : at::Tensor()};
}

// The reserve output is cuDNN's workspace; everywhere else it is an empty byte tensor.
at::Tensor empty_reserve(const at::Tensor& input) {
  return at::empty({0}, input.options().dtype(c10::kByte));
}

// _batch_norm_with_update: training statistics, running ones updated, and the reserve.
std::optional<std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor>> with_update(
    const at::Tensor& input, const OptionalTensor& weight, const OptionalTensor& bias, const at::Tensor& running_mean,
    const at::Tensor& running_var, double momentum, double eps) {
  auto result = forward(input, weight, bias, running_mean, running_var, true, momentum, eps);
  if (!result) return std::nullopt;
  return std::tuple_cat(*result, std::make_tuple(empty_reserve(input)));
}

// The backward of _batch_norm_with_update (update = true: the saved batch statistics) and of
// _batch_norm_no_update (update = false: the running ones).
std::optional<Triple> update_backward(const at::Tensor& grad_out, const at::Tensor& input, const at::Tensor& weight,
                                          const OptionalTensor& running_mean, const OptionalTensor& running_var,
                                          const OptionalTensor& save_mean, const OptionalTensor& save_var, bool update,
                                          double eps, std::array<bool, 3> output_mask, const at::Tensor& /*reserve*/) {
  const OptionalTensor w = weight.defined() ? OptionalTensor(weight) : std::nullopt;
  return backward(grad_out, input, w, running_mean, running_var, save_mean, save_var, update, eps, output_mask);
}

// What the kernels do not take runs as before they existed: PyTorch's composite math_group_norm on dml
// ops, not the CPU fallback, so native_group_norm is registered as it is (no rule in native.yaml).
// Group normalisation forward: mean and rstd per (sample, group) as batch-norm training statistics
// over channels = N * group of the group's C / group * HxW contiguous elements, then each (sample,
// channel) normalised with its group's statistics and its own weight and bias.
Triple native_group_norm(const at::Tensor& input, const OptionalTensor& weight, const OptionalTensor& bias,
                         c10::SymInt n_sym, c10::SymInt c_sym, c10::SymInt hxw_sym, int64_t group, double eps) {
  const int64_t n = n_sym.expect_int(), c = c_sym.expect_int(), hxw = hxw_sym.expect_int();
  // eps <= 0 is one case the kernels do not take: rstd = 1 / sqrt(var + eps) may be infinite or NaN there, and
  // batch norm's InvStd gives 0 where group norm's is 1 / sqrt(0).
  if (!computable(input) || group <= 0 || c != input.size(1) || c % group != 0 || n * c * hxw != input.numel() ||
      !per_channel(weight, input) || !per_channel(bias, input) ||
      (given(weight) && given(bias) && weight->scalar_type() != bias->scalar_type()) || !(eps > 0))
    return at::native::math_group_norm(input, weight, bias, n, c, hxw, group, eps);
  runtime::DeviceContext& context = context_of(input);
  c10::DeviceGuard guard(input.device());
  const at::Tensor x = input.contiguous();
  const c10::ScalarType acc = accumulation(input.scalar_type());
  const at::TensorOptions acc_options = input.options().dtype(acc);
  const int64_t per_group = c / group;
  kernels::BatchNormForward problem;
  problem.shape = {static_cast<uint64_t>(n * group), static_cast<uint64_t>(per_group * hxw),
                   static_cast<uint64_t>(per_group * hxw)};
  problem.affine = kernels::BatchNormShape{static_cast<uint64_t>(n * c), static_cast<uint64_t>(hxw),
                                           static_cast<uint64_t>(hxw)};
  problem.group_channels = static_cast<uint64_t>(per_group);
  problem.groups = static_cast<uint64_t>(group);
  problem.eps = eps;
  problem.input = device_ref(x);
  at::Tensor w, b;
  if (given(weight)) problem.weight = device_ref(w = weight->contiguous());
  if (given(bias)) problem.bias = device_ref(b = bias->contiguous());
  const at::Tensor mean = at::empty({n, group}, acc_options), rstd = at::empty({n, group}, acc_options);
  problem.save_mean = device_ref(mean);
  problem.save_invstd = device_ref(rstd);
  const at::Tensor coef = at::empty({n * c * 4}, acc_options);
  problem.coef = device_ref(coef);
  at::Tensor out = at::empty_like(x, at::MemoryFormat::Contiguous);
  problem.out = device_ref(out);
  bool native = false;
  {
    std::lock_guard<std::recursive_mutex> lock(context.mutex());
    native = kernels::batch_norm_forward_unsupported_reason(context, problem).empty();
    if (native) kernels::batch_norm_forward(context, problem);
  }
  if (!native) return at::native::math_group_norm(input, weight, bias, n, c, hxw, group, eps);
  const c10::ScalarType stats = statistics_dtype(input, {&weight, &bias});
  return Triple{out.view(input.sizes()), mean.to(stats), rstd.to(stats)};
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/batch_norm_ops.inc"

} // namespace
} // namespace torch_dml::aten
