// wgpuBufferGetMappedRange: the writable view of a mapped MAP_WRITE buffer, which uploads fill
// (runtime/uploads.cpp). wgpuBufferGetConstMappedRange may not be written through (webgpu.h).
//
// It belongs in procs.h's table of entry points; it is resolved beside it only so that adding it did
// not recompile every file that includes procs.h. Move it into the table at the next change there.
#pragma once

#include <cstddef>

#include <webgpu.h>

namespace torch_dml::webgpu {

// Like the procs: resolved by load(), which fails if the library lacks it.
void* mapped_range(WGPUBuffer buffer, size_t offset, size_t size);

} // namespace torch_dml::webgpu
