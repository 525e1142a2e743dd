// A pool of the elementwise helper library: each item (a run of lines between blank lines) is one
// helper, named by its first `fn`; its leading comment lines are for the reader and are not emitted.
// `T` is the computation type and `BITS` its width; kernels/elementwise_math.cpp takes only the
// helpers an expression reaches. Embedded by backend/codegen/gen_wgsl_math.py.
//
// floating.wgsl helpers that float64 replaces (same names): the float32 forms stop at float32's
// precision.

fn tan_(x: T) -> T {
  return tan(x);
}

fn erf_(x: T) -> T {
  if (isnan_(x)) { return x; }
  let a = abs(x);
  if (a < T(0.5)) { return erf_series_d(x); }
  if (a > T(6)) { return copysign_(T(1), x); }
  return copysign_(T(1) - erfc_pos_d(a), x);
}

fn erfc_(x: T) -> T {
  if (isnan_(x)) { return x; }
  let a = abs(x);
  if (a < T(0.5)) { return T(1) - erf_series_d(x); }
  let r = erfc_pos_d(a);
  return select(r, T(2) - r, x < T(0));
}

// Giles' single-precision start, then Newton steps: on erf up to 0.5, beyond on log erfc against
// 1 - |x| (exact there), which keeps the tail's relative precision and converges from afar.
fn erfinv_(x: T) -> T {
  let a = abs(x);
  if (isnan_(x) || a > T(1)) { return nan_(); }
  if (a == T(1)) { return copysign_(inf_(), x); }
  var y = erfinv_giles_(a);
  if (a <= T(0.5)) {
    for (var i = 0; i < 2; i++) { y = y - (erf_(y) - a) / (T(1.1283791670955126) * exp_neg_sq_d(y)); }
  } else {
    let c = T(1) - a;
    for (var i = 0; i < 4; i++) {
      let e = erfc_(y);
      y = y + log(e / c) * e / (T(1.1283791670955126) * exp_neg_sq_d(y));
    }
  }
  return copysign_(y, x);
}
