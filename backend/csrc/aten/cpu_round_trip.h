// Running one boxed aten op on the CPU for dml arguments: copy the arguments to the CPU, call the CPU
// kernel, copy every argument the op wrote back into the dml tensor it came from, and move the
// returns to the op's device. The fallback's bookkeeping (counts, warnings, strict mode) lives in
// fallback.h; this is only the data movement.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

namespace torch_dml::aten {

// A view op cannot run on the CPU: its result would not alias the dml memory it must share.
bool returns_view(const c10::FunctionSchema& schema);

// Refuses view ops. Arguments the schema marks as written (in-place self, out=, Tensor(a!)[] lists)
// and the few an op writes without saying so (native_batch_norm's running stats) are copied back.
void run_on_cpu(const c10::OperatorHandle& op, torch::jit::Stack* stack);

} // namespace torch_dml::aten
