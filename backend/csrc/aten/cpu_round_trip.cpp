#include "aten/cpu_round_trip.h"

#include <ATen/MemoryOverlap.h>
#include <ATen/core/List.h>
#include <ATen/core/Tensor.h>
#include <c10/util/irange.h>

#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace torch_dml::aten {
namespace {

// Arguments an op writes although its schema does not mark them. native_batch_norm predates alias
// annotations and updates its running statistics in training mode (torch/_decomp calls its schema
// "wrong"); BatchNorm in training reaches it on every device without its own batch norm kernel.
struct UnannotatedWrite {
  const char* op; // every overload of it
  const char* argument;
  const char* only_if; // a bool argument that must be true for the write to happen
};
constexpr UnannotatedWrite kUnannotatedWrites[] = {
    {"aten::native_batch_norm", "running_mean", "training"},
    {"aten::native_batch_norm", "running_var", "training"},
};

bool is_written(const c10::FunctionSchema& schema, size_t index, c10::ArrayRef<c10::IValue> arguments) {
  const c10::Argument& argument = schema.arguments()[index];
  if (argument.alias_info() && argument.alias_info()->isWrite()) return true;
  for (const UnannotatedWrite& write : kUnannotatedWrites) {
    if (schema.name() != write.op || argument.name() != write.argument) continue;
    const std::optional<int> gate = schema.argumentIndexWithName(write.only_if);
    return gate && arguments[*gate].isBool() && arguments[*gate].toBool();
  }
  return false;
}

// One CPU copy per TensorImpl, so an op given the same tensor twice (x.add_(x), a foreach list that
// repeats a tensor) sees it aliased on the CPU as it would natively, and it is written back once.
class CpuCopies {
 public:
  at::Tensor of(const at::Tensor& tensor) {
    if (!tensor.defined()) return tensor;
    auto [entry, fresh] = copies_.try_emplace(tensor.unsafeGetTensorImpl());
    if (fresh) entry->second = tensor.cpu(); // a CPU tensor stays itself: the kernel writes it directly
    return entry->second;
  }

  // original <- its CPU copy, in place: the dml tensor keeps its identity, strides and the views that
  // share its storage. An out= argument the CPU kernel resized is resized the same way first.
  void write_back(const at::Tensor& original) {
    if (!original.defined()) return;
    const c10::TensorImpl* impl = original.unsafeGetTensorImpl();
    if (!written_.insert(impl).second) return;
    const at::Tensor& cpu = copies_.at(impl);
    if (cpu.unsafeGetTensorImpl() == impl) return;
    if (original.sizes() != cpu.sizes()) original.resize_(cpu.sizes(), cpu.suggest_memory_format());
    original.copy_(cpu);
  }

 private:
  std::unordered_map<const c10::TensorImpl*, at::Tensor> copies_;
  std::unordered_set<const c10::TensorImpl*> written_;
};

// Writing through a CPU copy would hide what the CPU refuses: a destination whose elements share
// memory (an expanded tensor) cannot receive one value per element.
void check_writable(const c10::OperatorHandle& op, const at::Tensor& tensor) {
  TORCH_CHECK(!tensor.defined() || at::has_internal_overlap(tensor) != at::MemOverlap::Yes, "torch_dml: ",
              op.schema().operator_name(), " would write a tensor in which several elements share one memory "
              "location (an expanded tensor); clone() it first.");
}

template <typename Visit>
void for_each_tensor(const c10::IValue& value, Visit&& visit) {
  if (value.isTensor()) {
    visit(value.toTensor());
  } else if (value.isTensorList()) {
    for (const at::Tensor& tensor : value.toTensorVector()) visit(tensor);
  } else if (value.isOptionalTensorList()) {
    for (const std::optional<at::Tensor>& tensor : value.toOptionalTensorVector())
      if (tensor) visit(*tensor);
  }
}

c10::IValue to_cpu(const c10::IValue& value, CpuCopies& copies) {
  if (value.isTensor()) return copies.of(value.toTensor());
  if (value.isTensorList()) {
    c10::List<at::Tensor> list;
    for (const at::Tensor& tensor : value.toTensorVector()) list.push_back(copies.of(tensor));
    return list;
  }
  if (value.isOptionalTensorList()) {
    c10::List<std::optional<at::Tensor>> list;
    for (const std::optional<at::Tensor>& tensor : value.toOptionalTensorVector())
      list.push_back(tensor ? std::optional<at::Tensor>(copies.of(*tensor)) : std::nullopt);
    return list;
  }
  if (value.isDevice()) return c10::Device(c10::kCPU);
  return value;
}

c10::IValue to_device(const c10::IValue& value, c10::Device device) {
  if (value.isTensor()) {
    const at::Tensor& tensor = value.toTensor();
    return tensor.defined() ? tensor.to(device) : tensor;
  }
  if (value.isTensorList()) {
    c10::List<at::Tensor> list;
    for (const at::Tensor& tensor : value.toTensorVector()) list.push_back(tensor.defined() ? tensor.to(device) : tensor);
    return list;
  }
  return value;
}

// Where the results go: an explicit device argument (a factory op), else the first dml tensor's device
// (the first tensor may be a CPU scalar, as in torch.where(cpu_scalar, x, y)).
std::optional<c10::Device> target_device(c10::ArrayRef<c10::IValue> arguments) {
  for (const c10::IValue& value : arguments)
    if (value.isDevice()) return value.toDevice();
  std::optional<c10::Device> device;
  for (const c10::IValue& value : arguments) {
    for_each_tensor(value, [&](const at::Tensor& tensor) {
      if (!device && tensor.defined() && tensor.device().type() == c10::DeviceType::PrivateUse1)
        device = tensor.device();
    });
    if (device) break;
  }
  return device;
}

// The argument a mutable return aliases: an in-place op returns self, an out= op its out arguments.
std::optional<size_t> aliased_argument(const c10::FunctionSchema& schema, const c10::AliasInfo& alias) {
  const auto& arguments = schema.arguments();
  for (const auto i : c10::irange(arguments.size()))
    if (arguments[i].alias_info() && *arguments[i].alias_info() == alias) return i;
  return std::nullopt;
}

} // namespace

bool returns_view(const c10::FunctionSchema& schema) {
  for (const c10::Argument& value : schema.returns())
    if (value.alias_info() && !value.alias_info()->isWrite()) return true;
  return false;
}

void run_on_cpu(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const c10::FunctionSchema& schema = op.schema();
  TORCH_CHECK(!returns_view(schema), "torch_dml: ", schema.operator_name(), " is a view op with no dml kernel");
  const size_t argument_count = schema.arguments().size();
  const size_t arguments_begin = stack->size() - argument_count;
  const std::vector<c10::IValue> originals(stack->begin() + arguments_begin, stack->end());
  const std::optional<c10::Device> device = target_device(originals);

  CpuCopies copies;
  for (const auto i : c10::irange(argument_count)) {
    if (is_written(schema, i, originals)) for_each_tensor(originals[i], [&](const at::Tensor& t) { check_writable(op, t); });
    (*stack)[arguments_begin + i] = to_cpu(originals[i], copies);
  }

  op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), stack);

  for (const auto i : c10::irange(argument_count))
    if (is_written(schema, i, originals))
      for_each_tensor(originals[i], [&](const at::Tensor& tensor) { copies.write_back(tensor); });

  const auto& returns = schema.returns();
  const size_t returns_begin = stack->size() - returns.size();
  for (const auto i : c10::irange(returns.size())) {
    c10::IValue& value = (*stack)[returns_begin + i];
    if (const c10::AliasInfo* alias = returns[i].alias_info()) {
      const std::optional<size_t> argument = aliased_argument(schema, *alias);
      TORCH_CHECK(argument, "torch_dml: ", schema.operator_name(), " returns a mutable alias (", returns[i],
                  ") of no argument; its schema is inconsistent");
      value = originals[*argument];
    } else if (device) {
      value = to_device(value, *device);
    }
  }
}

} // namespace torch_dml::aten
