// torch's headers that most sources include, precompiled once per build where the compiler is GCC
// (backend/build_pch.py `-include`s this into every source). Only torch's headers belong here: the
// precompiled header records no dependencies, so a project header here would not trigger rebuilds.
// Sources still include what they use; this file only makes that faster.
#include <ATen/ATen.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Resize.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>
