// The global CPU fallback: every aten op without a dml kernel runs on the CPU (a copy each way),
// counted per op, warned about once per op, and refused in strict mode.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

#include <cstdint>
#include <map>
#include <string>

namespace torch_dml::aten {

// The boxed fallback itself, for native kernels that meet an input they cannot take (a dtype without
// a kernel): calling it counts, warns and honours strict mode exactly like an unregistered op.
void cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);

// The bookkeeping of the fallback for an op that routes to the CPU by hand (one whose CPU kernel is not
// registered under its own name, like convolution_overrideable): refuses in strict mode, counts, warns
// once. `arguments` describes dtypes and adapter for the message.
void enter_fallback(const std::string& name, const std::string& arguments);

std::map<std::string, uint64_t> fallback_counts();
void reset_fallback_counts();
void set_strict(bool enabled);
bool strict();

// How strict mode reports a refused op. The Python binding installs one that raises
// torch_dml.FallbackError; the default throws c10::NotImplementedError.
using StrictViolation = void (*)(const std::string& message);
void set_strict_violation_handler(StrictViolation handler);

} // namespace torch_dml::aten
