// A pool of the elementwise helper library: each item (a run of lines between blank lines) is one
// helper, named by its first `fn`; its leading comment lines are for the reader and are not emitted.
// `T` is the computation type and `BITS` its width; kernels/elementwise_math.cpp takes only the
// helpers an expression reaches. Embedded by backend/codegen/gen_wgsl_math.py.
//
// float32 bit-level tests: WGSL implementations may assume NaN and infinities never occur, so
// comparisons cannot be trusted to detect them.

fn isnan_(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }

fn isinf_(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }

fn signbit_(x: f32) -> bool { return bitcast<u32>(x) >= 0x80000000u; }

fn nan_() -> f32 { return bitcast<f32>(0x7fc00000u); }

fn inf_() -> f32 { return bitcast<f32>(0x7f800000u); }

fn copysign_(x: f32, y: f32) -> f32 {
  return bitcast<f32>((bitcast<u32>(x) & 0x7fffffffu) | (bitcast<u32>(y) & 0x80000000u));
}

// Below this, exp(x) is finite: sinh and cosh take e^x / 2 directly.
fn exp_max_() -> f32 { return 88.0; }

fn nextafter_(x: f32, y: f32) -> f32 {
  if (isnan_(x) || isnan_(y)) { return nan_(); }
  let ux = bitcast<u32>(x);
  let uy = bitcast<u32>(y);
  if (ux == uy || ((ux | uy) & 0x7fffffffu) == 0u) { return y; }
  if ((ux & 0x7fffffffu) == 0u) { return bitcast<f32>((uy & 0x80000000u) | 1u); }
  // Away from zero when y is beyond x on x's side, from the bits (a driver that flushes subnormals
  // compares two subnormals equal).
  let away = ((ux ^ uy) & 0x80000000u) == 0u && (uy & 0x7fffffffu) > (ux & 0x7fffffffu);
  return bitcast<f32>(select(ux - 1u, ux + 1u, away));
}
