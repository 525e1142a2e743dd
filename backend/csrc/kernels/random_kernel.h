// Random numbers from Philox 4x32-10 (counter-based: thread t of a call draws counter (t, 0, offset),
// key = seed), so results depend only on (seed, offset, position) and are reproducible for any launch
// shape. Each thread fills four consecutive float32 elements of a contiguous output.
#pragma once

#include "kernels/tensor_ref.h"

namespace torch_dml::kernels {

enum class RandomKind { Uniform, Normal, Bernoulli, Dropout };

struct RandomProblem {
  RandomKind kind = RandomKind::Uniform;
  uint64_t numel = 0;
  uint64_t seed = 0, offset = 0;
  float a = 0.0f, b = 1.0f;    // uniform [a, b); normal mean a, std b; bernoulli / dropout: keep or p = a, scale b
  DeviceTensorRef out;         // float32, contiguous
  DeviceTensorRef mask;        // Dropout only: int32 keep-mask, contiguous
  DeviceTensorRef input;       // Dropout only: float32 / float16 / bfloat16, contiguous
};

void random_fill(runtime::DeviceContext& context, const RandomProblem& problem);

} // namespace torch_dml::kernels
