// The global CPU fallback: every aten op without a dml kernel runs on the CPU (a copy each way),
// counted per op, warned about once per op, and refused in strict mode.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace torch_dml::aten {

std::map<std::string, uint64_t> fallback_counts();
void reset_fallback_counts();
void set_strict(bool enabled);
bool strict();

// How strict mode reports a refused op. The Python binding installs one that raises
// torch_dml.FallbackError; the default throws c10::NotImplementedError.
using StrictViolation = void (*)(const std::string& message);
void set_strict_violation_handler(StrictViolation handler);

} // namespace torch_dml::aten
