#include "webgpu/error_scope.h"

namespace torch_dml::webgpu {
namespace {

struct PopResult {
  bool fired = false;
  WGPUErrorType type = WGPUErrorType_NoError;
  std::string message;
};

void on_pop(WGPUPopErrorScopeStatus status, WGPUErrorType type, WGPUStringView message, void* userdata1, void*) {
  auto* result = static_cast<PopResult*>(userdata1);
  result->fired = true;
  result->type = status == WGPUPopErrorScopeStatus_Success ? type : WGPUErrorType_Unknown;
  result->message = to_string(message);
}

PopResult pop_one(WGPUDevice device) {
  PopResult result;
  WGPUPopErrorScopeCallbackInfo info = WGPU_POP_ERROR_SCOPE_CALLBACK_INFO_INIT;
  info.mode = WGPUCallbackMode_AllowProcessEvents;
  info.callback = on_pop;
  info.userdata1 = &result;
  wgpu().DevicePopErrorScope(device, info);
  return result;
}

} // namespace

ErrorScope::ErrorScope(WGPUDevice device) : device_(device) {
  wgpu().DevicePushErrorScope(device_, WGPUErrorFilter_OutOfMemory);
  wgpu().DevicePushErrorScope(device_, WGPUErrorFilter_Validation);
}

ErrorScope::~ErrorScope() {
  if (open_) pop();
}

std::optional<ScopedError> ErrorScope::pop() {
  if (!open_) return std::nullopt;
  open_ = false;
  const PopResult validation = pop_one(device_);
  const PopResult memory = pop_one(device_);
  for (const PopResult* result : {&memory, &validation}) {
    if (result->fired && result->type != WGPUErrorType_NoError)
      return ScopedError{result->type, result->message};
  }
  return std::nullopt;
}

} // namespace torch_dml::webgpu
