// The device guard (current device per thread, streams, events) PyTorch core reaches through
// c10::impl::getDeviceGuardImpl(PrivateUse1): DeviceGuard, torch.Stream, torch.Event, torch.accelerator.
#pragma once

#include <c10/core/impl/DeviceGuardImplInterface.h>

namespace torch_dml::runtime {

int current_device_index() noexcept;
void set_current_device_index(int index);

} // namespace torch_dml::runtime
