// The readback buffers behind CommandStream::read (runtime/transfers.cpp), as far as anything outside
// the command stream needs to know them.
//
// CommandStream::read takes any byte offset and size: it copies the whole words around them and hands
// back only the bytes asked for (the words must lie inside the buffer, as every allocation's do).
#pragma once

namespace torch_dml::runtime {

// Test hook: the next readback map on `device` asks for a range past its buffer, so wgpu refuses it
// and the read raises.
void fail_next_staging_map(int device);

} // namespace torch_dml::runtime
