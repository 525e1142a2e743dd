// A pool of the elementwise helper library: each item (a run of lines between blank lines) is one
// helper, named by its first `fn`; its leading comment lines are for the reader and are not emitted.
// `T` is the computation type and `BITS` its width; kernels/elementwise_math.cpp takes only the
// helpers an expression reaches. Embedded by backend/codegen/gen_wgsl_math.py.
//
// float64 bit-level tests (as f32_bits.wgsl, on u64 bits).

fn isnan_(x: f64) -> bool { return (bitcast<u64>(x) & 0x7ffffffffffffffflu) > 0x7ff0000000000000lu; }

fn isinf_(x: f64) -> bool { return (bitcast<u64>(x) & 0x7ffffffffffffffflu) == 0x7ff0000000000000lu; }

fn signbit_(x: f64) -> bool { return bitcast<u64>(x) >= 0x8000000000000000lu; }

fn nan_() -> f64 { return bitcast<f64>(0x7ff8000000000000lu); }

fn inf_() -> f64 { return bitcast<f64>(0x7ff0000000000000lu); }

fn copysign_(x: f64, y: f64) -> f64 {
  return bitcast<f64>((bitcast<u64>(x) & 0x7ffffffffffffffflu) | (bitcast<u64>(y) & 0x8000000000000000lu));
}

fn exp_max_() -> f64 { return 709.0; }

fn nextafter_(x: f64, y: f64) -> f64 {
  if (isnan_(x) || isnan_(y)) { return nan_(); }
  let ux = bitcast<u64>(x);
  let uy = bitcast<u64>(y);
  if (ux == uy || ((ux | uy) & 0x7ffffffffffffffflu) == 0lu) { return y; }
  if ((ux & 0x7ffffffffffffffflu) == 0lu) { return bitcast<f64>((uy & 0x8000000000000000lu) | 1lu); }
  let away = ((ux ^ uy) & 0x8000000000000000lu) == 0lu && (uy & 0x7ffffffffffffffflu) > (ux & 0x7ffffffffffffffflu);
  return bitcast<f64>(select(ux - 1lu, ux + 1lu, away));
}
