// What the convolution kernels' two files share: the GEMM kernels (conv_kernel.cpp) and the depthwise
// ones (conv_depthwise.cpp). Internal to them; the rest of the backend includes conv_kernel.h.
#pragma once

#include <c10/core/ScalarType.h>

#include <cstdint>
#include <optional>
#include <string>

#include "kernels/conv_kernel.h"
#include "kernels/launch.h"

// In a namespace of their own, since generic names such as load() would otherwise sit
// in kernels:: beside every other kernel file's.
namespace torch_dml::kernels::conv {

// The most of K one workgroup walks: on lavapipe a workgroup walking 59424 or 60000 of K summed wrong
// (one walking 56416 or 50000 was right; the cause is not known), so deeper reductions are split
// (grad_weight) or take the im2col route (forward, grad_input).
constexpr uint64_t kMaxDepth = 32768;

// The op of each ConvPass, in its order.
inline constexpr const char* kPassOps[] = {"conv2d", "conv2d_grad_input", "conv2d_grad_weight"};

// The WGSL expression loading element `i` of `array` of `type` as float32.
std::string load(c10::ScalarType type, const char* array);
// The kernels compute spatial positions in i32: every extent must stay far below 2^31.
void require_spatial(Launch& launch, const Conv2dGeometry& g);
// grad_weight's partials [slice][o][column] summed in slice order into the output.
void sum_slices(runtime::DeviceContext& context, const Conv2dProblem& c, const DeviceTensorRef& partials,
                uint64_t slices);

// The depthwise kernels (conv_depthwise.cpp): forward and grad_input whenever the problem is depthwise,
// grad_weight where its plan takes it. nullopt when none serves `c` (the GEMM kernels do); otherwise
// why it cannot run, "" when it can.
std::optional<std::string> depthwise_unsupported_reason(runtime::DeviceContext& context, const Conv2dProblem& c);
// Runs `c` on the depthwise kernel serving it (throwing its reason when it cannot run); false, having
// run nothing, when none serves it.
bool run_depthwise_conv2d(runtime::DeviceContext& context, const Conv2dProblem& c);

} // namespace torch_dml::kernels::conv
