#include "aten/fallback.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <set>
#include <sstream>

#include "aten/cpu_round_trip.h"
#include "runtime/device.h"
#include "runtime/generator.h"

namespace torch_dml::aten {
namespace {

std::mutex g_mutex;
std::map<std::string, uint64_t> g_counts;
std::set<std::string> g_warned;
std::atomic<bool> g_strict{false};
std::atomic<StrictViolation> g_violation{nullptr};

bool warnings_enabled() {
  static const bool enabled = [] {
    const char* value = std::getenv("TORCH_DML_FALLBACK_WARN");
    return !value || std::string(value) != "0";
  }();
  return enabled;
}

std::string op_name(const c10::OperatorHandle& op) {
  const auto& name = op.schema().operator_name();
  return name.overload_name.empty() ? name.name : name.name + "." + name.overload_name;
}

// "(float32 on adapter 'llvmpipe ...' (Vulkan, dml:0))": what the op was asked to run on.
std::string describe_arguments(const c10::OperatorHandle& op, const torch::jit::Stack& stack) {
  const size_t count = op.schema().arguments().size();
  std::set<std::string> dtypes;
  int device = -1;
  for (size_t i = stack.size() - count; i < stack.size(); ++i) {
    const c10::IValue& value = stack[i];
    auto note = [&](const at::Tensor& t) {
      if (!t.defined()) return;
      dtypes.insert(std::string(c10::toString(t.scalar_type())));
      if (device < 0 && t.device().type() == c10::DeviceType::PrivateUse1) device = t.device().index();
    };
    if (value.isTensor()) note(value.toTensor());
    else if (value.isTensorList())
      for (const at::Tensor& t : value.toTensorList().vec()) note(t);
  }
  std::ostringstream text;
  text << "(";
  bool first = true;
  for (const auto& dtype : dtypes) {
    text << (first ? "" : ", ") << dtype;
    first = false;
  }
  if (device >= 0) text << (first ? "" : " ") << "on " << runtime::device_context(device).describe();
  text << ")";
  return text.str();
}

int first_dml_device(const c10::OperatorHandle& op, const torch::jit::Stack& stack) {
  const size_t count = op.schema().arguments().size();
  for (size_t i = stack.size() - count; i < stack.size(); ++i) {
    const c10::IValue& value = stack[i];
    if (value.isTensor() && value.toTensor().defined() &&
        value.toTensor().device().type() == c10::DeviceType::PrivateUse1)
      return value.toTensor().device().index();
    if (value.isDevice() && value.toDevice().type() == c10::DeviceType::PrivateUse1)
      return std::max<int>(value.toDevice().index(), 0);
  }
  return -1;
}

uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// A random op on the CPU draws from a CPU generator derived from the dml generator's (seed, offset),
// so dml results follow torch.dml.manual_seed rather than the CPU's seed.
void substitute_generators(const c10::OperatorHandle& op, torch::jit::Stack& stack) {
  const auto& arguments = op.schema().arguments();
  const size_t base = stack.size() - arguments.size();
  for (size_t i = 0; i < arguments.size(); ++i) {
    const c10::TypePtr& type = arguments[i].type();
    const bool generator_arg = type->kind() == c10::TypeKind::GeneratorType ||
        (type->kind() == c10::TypeKind::OptionalType &&
         type->castRaw<c10::OptionalType>()->getElementType()->kind() == c10::TypeKind::GeneratorType);
    if (!generator_arg) continue;
    c10::IValue& value = stack[base + i];
    at::Generator source;
    if (value.isGenerator() && value.toGenerator().device().type() == c10::DeviceType::PrivateUse1) {
      source = value.toGenerator();
    } else if (value.isNone()) {
      const int device = first_dml_device(op, stack);
      if (device < 0) continue;
      source = runtime::default_generator(device);
    } else {
      continue;
    }
    uint64_t seed, offset;
    {
      std::lock_guard<std::mutex> lock(source.mutex());
      auto* philox = source.get<runtime::PhiloxGenerator>();
      seed = philox->current_seed();
      offset = philox->advance(1);
    }
    value = c10::IValue(at::detail::createCPUGenerator(mix(seed ^ mix(offset))));
  }
}

void fallback_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const std::string name = op_name(op);
  enter_fallback(name, describe_arguments(op, *stack));
  TORCH_CHECK(!returns_view(op.schema()), "torch_dml: ", name, " is a view op with no dml kernel ",
              describe_arguments(op, *stack), "; a view cannot fall back to the CPU, whose result would not "
              "share the dml tensor's memory.");
  substitute_generators(op, *stack);
  run_on_cpu(op, stack);
}

} // namespace

void enter_fallback(const std::string& name, const std::string& arguments) {
  if (g_strict.load()) {
    const std::string message = "torch_dml strict mode: " + name + " has no native dml kernel " + arguments +
        "; outside strict mode it runs on the CPU fallback.";
    if (auto handler = g_violation.load()) handler(message);
    TORCH_CHECK_NOT_IMPLEMENTED(false, message);
  }
  bool warn = false;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    ++g_counts[name];
    warn = warnings_enabled() && g_warned.insert(name).second;
  }
  if (warn) {
    TORCH_WARN("torch_dml: ", name, " has no native dml kernel yet and runs on the CPU (a copy each way). "
               "Set TORCH_DML_FALLBACK_WARN=0 to silence this warning.");
  }
}

namespace {

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&fallback_kernel>());
}

} // namespace

void cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  fallback_kernel(op, stack);
}

std::map<std::string, uint64_t> fallback_counts() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_counts;
}

void reset_fallback_counts() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_counts.clear();
}

void set_strict(bool enabled) {
  g_strict.store(enabled);
}

bool strict() {
  return g_strict.load();
}

void set_strict_violation_handler(StrictViolation handler) {
  g_violation.store(handler);
}

} // namespace torch_dml::aten
