// WGSL helper functions the elementwise expressions of backend/ops.yaml may call (the pools of
// kernels/wgsl/math/). A kernel includes only the helpers its expression reaches, specialised to its
// computation type, so an f64 kernel never sees a transcendental it cannot compile.
#pragma once

#include <string>

#include "kernels/dtypes.h"

namespace torch_dml::runtime {
class DeviceContext;
}

namespace torch_dml::kernels {

// The WGSL definitions of every helper `expression` calls (directly or through other helpers), for
// computation type `value`; `T` in the result is already replaced by the WGSL type. `wide`: the
// adapter runs float64 and int64, so float32 helpers with a float64 form (wgsl/math/f32_wide.wgsl)
// take it.
std::string math_helpers(const std::string& expression, Value value, bool wide = false);

// Whether math_helpers may give `context`'s float32 kernels their float64 forms.
bool wide_float32_math(runtime::DeviceContext& context);

// `text` with every standalone identifier `T` replaced by `type`.
std::string substitute_type(const std::string& text, const char* type);

} // namespace torch_dml::kernels
