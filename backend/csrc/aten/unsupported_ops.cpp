// Where PyTorch has nothing for a dml tensor and would fail obscurely, a clear route: the CPU
// fallback for ops whose composite kernel calls a DispatchStub for the input's device (with no dml
// stub that is an INTERNAL ASSERT) or names the devices it accepts, and a plain error for sparse
// layouts, which dml does not hold.
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/Layout.h>
#include <torch/library.h>

#include <string>

#include "aten/fallback.h"

namespace torch_dml::aten {
namespace {

// Any sparse layout reaching a kernel: the dispatcher found no sparse kernel for the device.
[[noreturn]] void sparse_unsupported(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  // The layout of the first sparse tensor argument, or the `layout=` a factory function was given.
  std::string layout = "sparse";
  const auto& arguments = op.schema().arguments();
  const size_t first = stack->size() - arguments.size();
  for (size_t i = 0; i < arguments.size(); ++i) {
    const c10::IValue& value = (*stack)[first + i];
    if (value.isTensor() && value.toTensor().defined() && value.toTensor().layout() != c10::kStrided) {
      layout = c10::str(value.toTensor().layout());
      break;
    }
    if (arguments[i].name() == "layout" && value.isInt()) {
      layout = c10::str(static_cast<c10::Layout>(value.toInt()));
      break;
    }
  }
  TORCH_CHECK_NOT_IMPLEMENTED(false, "torch_dml: ", op.schema().operator_name(), " with layout ", layout,
                              " on dml: sparse tensors are not supported on dml. Keep them on the CPU (or use a "
                              "strided tensor: .to_dense()).");
}

// conj_physical_ (CompositeExplicitAutograd) calls conj_physical_stub for the tensor's device type, so
// complex conj_physical_ (and torch.svd(out=), which conjugates in place) hit "DispatchStub: missing
// kernel for dml". Real tensors stay the no-op they are; complex ones take the CPU fallback.
at::Tensor& conj_physical_(at::Tensor& self) {
  if (!self.is_complex()) return self;
  static const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("aten::conj_physical_", "");
  torch::jit::Stack stack{self};
  cpu_fallback(op, &stack);
  return self;
}

} // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("conj_physical_", &conj_physical_);
  // mode.values' composite kernel refuses every device but CPU, CUDA and XPU before it calls mode;
  // the CPU runs it whole instead.
  m.impl("mode.values", torch::CppFunction::makeFromBoxedFunction<&cpu_fallback>());
}

TORCH_LIBRARY_IMPL(_, SparsePrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&sparse_unsupported>());
}

TORCH_LIBRARY_IMPL(_, SparseCsrPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&sparse_unsupported>());
}

} // namespace torch_dml::aten
