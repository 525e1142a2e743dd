// The adapter features torch_dml asks for. Each is probed on the adapter and requested only when
// present; kernels check the device's set before using one.
#pragma once

#include <cstdint>
#include <string_view>

#include "webgpu/procs.h"

namespace torch_dml::runtime {

struct FeatureSpec {
  std::string_view name; // wgpu's spelling, as collect_env and the coverage report show it
  WGPUFeatureName id;
};

inline constexpr FeatureSpec kWantedFeatures[] = {
    {"shader-f16", WGPUFeatureName_ShaderF16},
    {"shader-f64", static_cast<WGPUFeatureName>(WGPUNativeFeature_ShaderF64)},
    {"shader-int64", static_cast<WGPUFeatureName>(WGPUNativeFeature_ShaderInt64)},
    {"subgroup", static_cast<WGPUFeatureName>(WGPUNativeFeature_Subgroup)},
    {"subgroup-barrier", static_cast<WGPUFeatureName>(WGPUNativeFeature_SubgroupBarrier)},
    {"timestamp-query", WGPUFeatureName_TimestampQuery},
    {"timestamp-query-inside-encoders",
     static_cast<WGPUFeatureName>(WGPUNativeFeature_TimestampQueryInsideEncoders)},
    {"timestamp-query-inside-passes",
     static_cast<WGPUFeatureName>(WGPUNativeFeature_TimestampQueryInsidePasses)},
    {"shader-float32-atomic", static_cast<WGPUFeatureName>(WGPUNativeFeature_ShaderFloat32Atomic)},
    {"immediates", static_cast<WGPUFeatureName>(WGPUNativeFeature_Immediates)},
};

enum class Feature : uint32_t {
  ShaderF16 = 0,
  ShaderF64,
  ShaderInt64,
  Subgroup,
  SubgroupBarrier,
  TimestampQuery,
  TimestampQueryInsideEncoders,
  TimestampQueryInsidePasses,
  ShaderFloat32Atomic,
  Immediates,
};

inline constexpr std::string_view feature_name(Feature feature) {
  return kWantedFeatures[static_cast<uint32_t>(feature)].name;
}

} // namespace torch_dml::runtime
