// What avg_pool2d's and adaptive_avg_pool2d's forward and backward kernels share: each output's window
// along one axis and the CPU's division of a window's sum (or of an output's gradient, which the
// backward adds into every element of the window). A window is vec3(first, end, divisor's length):
// [first, end) clipped to the image. Needs ADAPTIVE, COUNT_INCLUDE_PAD and DIVISOR_OVERRIDE.

// avg_pool2d: output o's window starts at o * stride - pad; count_include_pad divides by its length
// clipped to the padded image only.
fn avg_window(o: u32, stride: u32, pad: u32, kernel: u32, extent: u32) -> vec3<i32> {
  let start = i32(o * stride) - i32(pad);
  let padded_end = min(start + i32(kernel), i32(extent + pad));
  return vec3<i32>(max(start, 0), min(padded_end, i32(extent)), padded_end - start);
}

// adaptive: [floor(o * extent / out), ceil((o + 1) * extent / out)), in PyTorch's integer forms (the
// host keeps (out + 1) * extent below 2^32).
fn adaptive_window(o: u32, out: u32, extent: u32) -> vec3<i32> {
  let first = (o / out) * extent + ((o % out) * extent) / out;
  let end = 1u + ((o + 1u) * extent - 1u) / out;
  return vec3<i32>(i32(first), i32(end), i32(end - first));
}

fn window_h(o: u32) -> vec3<i32> {
  if (ADAPTIVE) { return adaptive_window(o, p.out_h, p.in_h); }
  return avg_window(o, p.stride_h, p.pad_h, p.kernel_h, p.in_h);
}

fn window_w(o: u32) -> vec3<i32> {
  if (ADAPTIVE) { return adaptive_window(o, p.out_w, p.in_w); }
  return avg_window(o, p.stride_w, p.pad_w, p.kernel_w, p.in_w);
}

// The CPU's division: adaptive pooling divides by the window's height, then by its width; avg_pool2d
// once, by divisor_override, the padded window's area (count_include_pad) or the clipped one's.
fn averaged(sum: real, h: vec3<i32>, w: vec3<i32>) -> real {
  if (ADAPTIVE) { return sum / real(h.z) / real(w.z); }
  if (DIVISOR_OVERRIDE != 0) { return sum / real(DIVISOR_OVERRIDE); }
  if (COUNT_INCLUDE_PAD) { return sum / real(h.z * w.z); }
  return sum / real((h.y - h.x) * (w.y - w.x));
}
