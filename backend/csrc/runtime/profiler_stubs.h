// torch.profiler support for dml: the device stubs of the legacy path (runtime/profiler_stubs.cpp) and
// the Kineto activity profiler that times each kernel (runtime/activity_profiler.cpp).
#pragma once

namespace torch_dml::runtime {

// Both called once, at module import.
void register_profiler_stubs();
// False when this torch has no PrivateUse1 Kineto registry (then only the legacy path has device times).
bool register_activity_profiler();

} // namespace torch_dml::runtime
