// A WebGPU map request as the staging buffers of both transfer directions wait on it
// (runtime/transfers.cpp, runtime/uploads.cpp): wgpu-native answers it inside a device poll
// (runtime/device_wait.h), so the answer is kept where the waiting code can look at it.
#pragma once

#include <string>

#include "webgpu/procs.h"

namespace torch_dml::runtime {

struct MapRequest {
  bool done = false;
  WGPUMapAsyncStatus status = WGPUMapAsyncStatus_Error;
  std::string message;

  void reset() {
    done = false;
    status = WGPUMapAsyncStatus_Error;
    message.clear();
  }

  // The callback info for wgpuBufferMapAsync; AllowProcessEvents, since WaitAny aborts in wgpu-native.
  WGPUBufferMapCallbackInfo callback() {
    WGPUBufferMapCallbackInfo info = WGPU_BUFFER_MAP_CALLBACK_INFO_INIT;
    info.mode = WGPUCallbackMode_AllowProcessEvents;
    info.callback = [](WGPUMapAsyncStatus status, WGPUStringView message, void* userdata1, void*) {
      auto* request = static_cast<MapRequest*>(userdata1);
      request->done = true;
      request->status = status;
      request->message = webgpu::to_string(message);
    };
    info.userdata1 = this;
    return info;
  }

  // Why a request that did not give a mapping failed, in words.
  std::string failure() const {
    if (!done) return "the map request never completed";
    return status == WGPUMapAsyncStatus_Success ? "no mapped range" : message;
  }
};

} // namespace torch_dml::runtime
