// A pool of the elementwise helper library: each item (a run of lines between blank lines) is one
// helper, named by its first `fn`; its leading comment lines are for the reader and are not emitted.
// `T` is the computation type and `BITS` its width; kernels/elementwise_math.cpp takes only the
// helpers an expression reaches. Embedded by backend/codegen/gen_wgsl_math.py.
//
// float64 versions of the WGSL builtins that have none for f64 (exp, exp2, log, log2, sin, cos, tan,
// ldexp, trunc, round): kernels/elementwise_math.cpp renames the builtin calls in f64 kernels to
// these. Range reduction plus a polynomial, accurate to a few ulp across the whole range (pow through
// exp2/log2 loses about |y log2 x| ulp; sin and cos are within an ulp, tan two). The 2/pi table,
// ln2_fixed_d and erfcx_poly_d are generated (backend/codegen/gen_f64_math.py) and join this pool at
// build time.

fn ldexp_d(x: T, k: i32) -> T {
  var y = x;
  var e = k;
  if (e > 1023) {
    y = y * bitcast<f64>(0x7fe0000000000000lu);
    e = min(e - 1023, 1023);
  }
  if (e < -1022) {
    y = y * bitcast<f64>(0x0010000000000000lu);
    e = e + 1022;
    if (e < -1022) {
      y = y * bitcast<f64>(0x0010000000000000lu);
      e = max(e + 1022, -1022);
    }
  }
  return y * bitcast<f64>(u64(u32(e + 1023)) << 52u);
}

// trunc and round from the bits: lavapipe's float64 trunc and round return their argument
// unchanged from 2^31 up (as if every such value were integral, true of float32 only).
fn trunc_d(x: T) -> T {
  let u = bitcast<u64>(x);
  let e = i32(u32(u >> 52u) & 0x7ffu) - 1023;
  if (e >= 52) { return x; }
  if (e < 0) { return copysign_(T(0), x); }
  return bitcast<f64>(u & ~(0x000ffffffffffffflu >> u32(e)));
}

// Halves to even, as WGSL's round.
fn round_d(x: T) -> T {
  let a = abs(x);
  if (!(a < T(4503599627370496.0))) { return x; }
  let t = trunc_d(a);
  let d = a - t;
  let up = d > T(0.5) || (d == T(0.5) && trunc_d(t * T(0.5)) * T(2) != t);
  return copysign_(select(t, t + T(1), up), x);
}

// n ln 2 for n < 2^21, in units of 2^-96 as (high word, low word): the integer product with
// round(ln 2 2^96), k times whose rounding error stays below 2^-75.
fn ln2_times_d(n: u64) -> vec2<u64> {
  let l = ln2_fixed_d();
  let p0 = n * u64(l.z);
  let p1 = n * u64(l.y);
  let low = p0 + (p1 << 32u);
  return vec2<u64>(n * u64(l.x) + (p1 >> 32u) + select(0lu, 1lu, low < p0), low);
}

// h 2^-32 + l 2^-96 (a 128-bit integer in units of 2^-96) as a pair hi + lo, hi its leading 53 bits
// (truncated) and lo the next 43, both converted exactly.
fn fixed_pair_d(h: u64, l: u64) -> vec2<f64> {
  if ((h | l) == 0lu) { return vec2<f64>(T(0), T(0)); }
  var dh = h;
  var dl = l;
  var e = -32;
  if (dh == 0lu) {
    dh = dl;
    dl = 0lu;
    e = e - 64;
  }
  let top = u32(dh >> 32u);
  let z = select(countLeadingZeros(top), 32u + countLeadingZeros(u32(dh & 0xfffffffflu)), top == 0u);
  if (z != 0u) {
    dh = (dh << z) | (dl >> (64u - z));
    dl = dl << z;
  }
  e = e - i32(z);
  let hi = ldexp_d(T(dh & 0xfffffffffffff800lu), e);
  let lo = ldexp_d(T(dh & 0x7fflu) * T(4294967296.0) + T(dl >> 32u), e - 32);
  return vec2<f64>(hi, lo);
}

// x - k ln 2 for an integral k = round(x / ln 2) != 0 (so 0.34 < |x| < 746), as a pair hi + lo,
// from the integer |x| 2^96 - |k| round(ln 2 2^96). Cody and Waite's float form (x - k hi) - k lo,
// with k hi exact, is not safe: NVIDIA's compiler (H100 and H200, Vulkan) turned it in the sinh, cosh
// and erfc kernels into x - k (hi + lo) with one rounding, k times float64 ln 2's error off
// (2.3e-17 k: erfc 177 ulp off, sinh and cosh 2.3e-14 at 700; lavapipe reproduces both figures to
// the digit when given that form). An explicit fma would not do either: lavapipe does not fuse
// float64 fma. Integer arithmetic leaves a compiler nothing to reassociate.
fn exp_reduce_d(x: T, k: T) -> vec2<f64> {
  let u = bitcast<u64>(x);
  // |x| 2^96 = m 2^s with s = exponent + 96, from 42 to 53 here.
  let s = (u32(u >> 52u) & 0x7ffu) - 979u;
  let m = (u & 0x000ffffffffffffflu) | 0x0010000000000000lu;
  let xl = m << s;
  let xh = m >> (64u - s);
  let p = ln2_times_d(u64(u32(abs(k))));
  var dl = xl - p.y;
  var dh = xh - p.x - select(0lu, 1lu, xl < p.y);
  // |x| - |k| ln 2 is below 0.35 in magnitude (2^95 of these units), so the top bit is its sign.
  let below = (dh >> 63u) != 0lu;
  if (below) {
    dl = ~dl + 1lu;
    dh = ~dh + select(0lu, 1lu, dl == 0lu);
  }
  let r = fixed_pair_d(dh, dl);
  return select(r, -r, below != (x < T(0)));
}

fn exp_d(x: T) -> T {
  if (isnan_(x)) { return x; }
  if (x > T(709.782712893384)) { return inf_(); }
  if (x < T(-745.1332191019412)) { return T(0); }
  let k = round(x * T(1.4426950408889634));
  if (k == T(0)) { return T(1) + x * expm1_poly_(x); }
  let q = exp_reduce_d(x, k);
  let r = q.x + q.y;
  return ldexp_d(T(1) + r * expm1_poly_(r), i32(k));
}

fn exp2_d(x: T) -> T {
  if (isnan_(x)) { return x; }
  if (x >= T(1024)) { return inf_(); }
  if (x < T(-1075)) { return T(0); }
  let k = round(x);
  let r = (x - k) * T(0.6931471805599453);
  return ldexp_d(T(1) + r * expm1_poly_(r), i32(k));
}

// x = 2^e m with m in [sqrt(1/2), sqrt(2)), for finite positive x: (e, log m), log m from the
// atanh series of (m - 1) / (m + 1).
fn log_parts_d(x: T) -> vec2<f64> {
  var y = x;
  var e = 0;
  if (y < T(2.2250738585072014e-308)) {
    y = y * T(18014398509481984.0);
    e = -54;
  }
  let u = bitcast<u64>(y);
  e = e + i32(u32(u >> 52u)) - 1023;
  var m = bitcast<f64>((u & 0x000ffffffffffffflu) | 0x3ff0000000000000lu);
  if (m > T(1.4142135623730951)) {
    m = m * T(0.5);
    e = e + 1;
  }
  return vec2<f64>(T(e), atanh_series_((m - T(1)) / (m + T(1))));
}

fn log_d(x: T) -> T {
  if (isnan_(x) || x < T(0)) { return nan_(); }
  if (x == T(0)) { return -inf_(); }
  if (isinf_(x)) { return x; }
  // e ln 2 from the integers, as in exp_reduce_d (a split ln 2 invites the same refolding).
  let q = log_parts_d(x);
  let p = ln2_times_d(u64(u32(abs(q.x))));
  let l = select(fixed_pair_d(p.x, p.y), -fixed_pair_d(p.x, p.y), q.x < T(0));
  return l.x + (q.y + l.y);
}

fn log2_d(x: T) -> T {
  if (isnan_(x) || x < T(0)) { return nan_(); }
  if (x == T(0)) { return -inf_(); }
  if (isinf_(x)) { return x; }
  let q = log_parts_d(x);
  return q.x + q.y * T(1.4426950408889634);
}

// Payne and Hanek's reduction of |x| > pi/4 by pi/2, exact for every finite float64: |x| = m 2^e
// with m a 53-bit integer, and (2/pi) |x| mod 4 depends only on the 192 bits of 2/pi from bit e - 1
// on (the earlier ones make multiples of 4; 192 bits keep 2^-115 of the fraction, past the closest
// any float64 comes to a multiple of pi/2). The product is done in 32-bit limbs, so the result is
// exact whatever the shader compiler does to floating point. Returns (quadrant, r as a pair hi + lo)
// with |r| <= pi/4. TWO_OVER_PI_ is the generated table (2/pi from bit -64 on, 32 bits a word, most
// significant first).
fn trig_reduce_d(ax: T) -> vec3<f64> {
  let u = bitcast<u64>(ax);
  let e = i32(u32(u >> 52u)) - 1075;
  let m = (u & 0x000ffffffffffffflu) | 0x0010000000000000lu;
  let mh = m >> 32u;
  let ml = m & 0xfffffffflu;
  let j = u32(e + 62);
  let wi = j >> 5u;
  let s = j & 31u;
  var w: array<u32, 6>;
  for (var k = 0u; k < 6u; k++) {
    let a = TWO_OVER_PI_[wi + 5u - k];
    let b = TWO_OVER_PI_[wi + 6u - k];
    w[k] = select(a, (a << s) | (b >> (32u - s)), s != 0u);
  }
  var r: array<u32, 6>;
  var carry = 0lu;
  for (var k = 0u; k < 6u; k++) {
    let p = ml * u64(w[k]) + carry;
    r[k] = u32(p & 0xfffffffflu);
    carry = p >> 32u;
  }
  carry = 0lu;
  for (var k = 1u; k < 6u; k++) {
    let p = u64(r[k]) + mh * u64(w[k - 1u]) + carry;
    r[k] = u32(p & 0xfffffffflu);
    carry = p >> 32u;
  }
  // The top two bits are the quadrant; a fraction of 1/2 or more rounds it up and turns negative.
  var q = r[5] >> 30u;
  r[5] = r[5] & 0x3fffffffu;
  let negative = (r[5] >> 29u) != 0u;
  if (negative) {
    q = q + 1u;
    var c = 1lu;
    for (var k = 0u; k < 6u; k++) {
      let t = u64(~r[k]) + c;
      r[k] = u32(t & 0xfffffffflu);
      c = t >> 32u;
    }
    r[5] = r[5] & 0x3fffffffu;
  }
  var shift = 0u;
  for (var k = 0u; k < 6u && r[5] == 0u; k++) {
    r[5] = r[4];
    r[4] = r[3];
    r[3] = r[2];
    r[2] = r[1];
    r[1] = r[0];
    r[0] = 0u;
    shift = shift + 32u;
  }
  if (r[5] == 0u) { return vec3<f64>(T(q & 3u), T(0), T(0)); }
  let lz = countLeadingZeros(r[5]);
  var t5 = r[5];
  var t4 = r[4];
  var t3 = r[3];
  if (lz != 0u) {
    t5 = (r[5] << lz) | (r[4] >> (32u - lz));
    t4 = (r[4] << lz) | (r[3] >> (32u - lz));
    t3 = (r[3] << lz) | (r[2] >> (32u - lz));
  }
  // The fraction's leading 96 bits as hi (53 bits) + lo (43 bits), each converted exactly.
  let h = (u64(t5) << 32u) | u64(t4);
  let scale = i32(shift + lz);
  var hi = ldexp_d(T(h & 0xfffffffffffff800lu), -62 - scale);
  var lo = ldexp_d(T(h & 0x7fflu) * T(4294967296.0) + T(t3), -94 - scale);
  if (negative) {
    hi = -hi;
    lo = -lo;
  }
  // times pi/2 (hi + lo parts), keeping the rounding error of the leading product. The pair is
  // left unnormalised: renormalising is an identity some compilers fold away.
  let p = two_prod_(hi, T(1.5707963267948966));
  let rl = p.y + (hi * T(6.123233995736766e-17) + lo * T(1.5707963267948966));
  return vec3<f64>(T(q & 3u), p.x, rl);
}

fn trig_arg_d(ax: T) -> vec3<f64> {
  if (ax <= T(0.7853981633974483)) { return vec3<f64>(T(0), ax, T(0)); }
  return trig_reduce_d(ax);
}

// Taylor series on |r| <= pi/4 to r^17 and r^18 (below 2^-60 relative there), with the low part
// of r folded in through the derivative.
fn sin_poly_d(rh: T, rl: T) -> T {
  let z = rh * rh;
  var p = T(2.8114572543455206e-15);
  p = T(-7.647163731819816e-13) + z * p;
  p = T(1.6059043836821613e-10) + z * p;
  p = T(-2.505210838544172e-08) + z * p;
  p = T(2.7557319223985893e-06) + z * p;
  p = T(-0.0001984126984126984) + z * p;
  p = T(0.008333333333333333) + z * p;
  p = T(-0.16666666666666666) + z * p;
  return rh + (rl * (T(1) - T(0.5) * z) + rh * z * p);
}

fn cos_poly_d(rh: T, rl: T) -> T {
  let z = rh * rh;
  var p = T(-1.5619206968586225e-16);
  p = T(4.779477332387385e-14) + z * p;
  p = T(-1.1470745597729725e-11) + z * p;
  p = T(2.08767569878681e-09) + z * p;
  p = T(-2.755731922398589e-07) + z * p;
  p = T(2.48015873015873e-05) + z * p;
  p = T(-0.001388888888888889) + z * p;
  p = T(0.041666666666666664) + z * p;
  // Everything below 1 summed first, so the result is rounded once (a compensated 1 - z/2
  // is an identity some compilers fold away).
  return T(1) - (T(0.5) * z - (z * z * p - rh * rl));
}

fn sin_d(x: T) -> T {
  if (isnan_(x) || isinf_(x)) { return nan_(); }
  let ax = abs(x);
  if (ax < T(1.4901161193847656e-08)) { return x; }
  let r = trig_arg_d(ax);
  let q = u32(r.x);
  var v = select(sin_poly_d(r.y, r.z), cos_poly_d(r.y, r.z), (q & 1u) == 1u);
  v = select(v, -v, q >= 2u);
  return select(v, -v, x < T(0));
}

fn cos_d(x: T) -> T {
  if (isnan_(x) || isinf_(x)) { return nan_(); }
  let ax = abs(x);
  if (ax < T(7.450580596923828e-09)) { return T(1); }
  let r = trig_arg_d(ax);
  let q = u32(r.x);
  let v = select(cos_poly_d(r.y, r.z), sin_poly_d(r.y, r.z), (q & 1u) == 1u);
  return select(v, -v, q == 1u || q == 2u);
}

fn tan_d(x: T) -> T {
  if (isnan_(x) || isinf_(x)) { return nan_(); }
  let ax = abs(x);
  if (ax < T(1.4901161193847656e-08)) { return x; }
  let r = trig_arg_d(ax);
  let s = sin_poly_d(r.y, r.z);
  let c = cos_poly_d(r.y, r.z);
  let v = select(s / c, -c / s, (u32(r.x) & 1u) == 1u);
  return select(v, -v, x < T(0));
}

// a * b as (hi, lo) with hi + lo within 2^-104 of the product, from the 106-bit integer product of
// the significands in 32-bit limbs. Dekker's float form is not safe here: a driver may fuse the
// rounded product a * b into the subtraction that recovers its error, and another may fold such
// error terms away (lavapipe's float64 fma is not fused, so fma(a, b, -a * b) is no way out). hi is the product's leading 53 bits
// (truncated), lo the rest; operands or products near the ends of the exponent range get (a * b, 0).
fn two_prod_(a: T, b: T) -> vec2<f64> {
  let ua = bitcast<u64>(a);
  let ub = bitcast<u64>(b);
  let ea = i32(u32(ua >> 52u) & 0x7ffu);
  let eb = i32(u32(ub >> 52u) & 0x7ffu);
  if (ea == 0 || eb == 0 || ea == 2047 || eb == 2047 || ea + eb < 1250 || ea + eb > 2800) {
    return vec2<f64>(a * b, T(0));
  }
  let ma = (ua & 0xffffffffffffflu) | 0x10000000000000lu;
  let mb = (ub & 0xffffffffffffflu) | 0x10000000000000lu;
  let a1 = ma >> 32u;
  let a0 = ma & 0xfffffffflu;
  let b1 = mb >> 32u;
  let b0 = mb & 0xfffffffflu;
  let mid = a1 * b0 + a0 * b1;
  let low = a0 * b0;
  let lo64 = low + (mid << 32u);
  let hi64 = a1 * b1 + (mid >> 32u) + select(0lu, 1lu, lo64 < low);
  // The product has 106 bits (top bit 105) or 105 (top bit 104).
  let wide = (hi64 >> 41u) != 0lu;
  let shift = select(52u, 53u, wide);
  let top = (hi64 << (64u - shift)) | (lo64 >> shift);
  let rest = lo64 & ((1lu << shift) - 1lu);
  let e = ea + eb - 1023 + select(0, 1, wide);
  let sign = (ua ^ ub) & 0x8000000000000000lu;
  let hi = bitcast<f64>(sign | (u64(u32(e)) << 52u) | (top & 0xffffffffffffflu));
  let lo = ldexp_d(T(rest), e - 1075 - i32(shift));
  return vec2<f64>(hi, select(lo, -lo, sign != 0lu));
}

// e^(-x^2) with x^2 carried as a pair: x^2 rounded would cost x^2 2^-53 relative (7e-14 at 26).
fn exp_neg_sq_d(x: T) -> T {
  let h = two_prod_(x, x);
  let e = exp(-h.x);
  return e - e * h.y;
}

// erf's Taylor series for |x| < 0.5, to x^27.
fn erf_series_d(x: T) -> T {
  let z = x * x;
  var p = T(3.9554295164585257e-13);
  p = T(-5.9477940136376354e-12) + z * p;
  p = T(8.35070279514724e-11) + z * p;
  p = T(-1.0892221037148573e-09) + z * p;
  p = T(1.3122532963802806e-08) + z * p;
  p = T(-1.4503852223150468e-07) + z * p;
  p = T(1.4589169000933706e-06) + z * p;
  p = T(-1.3227513227513228e-05) + z * p;
  p = T(0.00010683760683760684) + z * p;
  p = T(-0.0007575757575757576) + z * p;
  p = T(0.004629629629629629) + z * p;
  p = T(-0.023809523809523808) + z * p;
  p = T(0.1) + z * p;
  p = T(-0.3333333333333333) + z * p;
  p = T(1) + z * p;
  return T(1.1283791670955126) * x * p;
}

// erfc for a >= 0.5: erfcx from its polynomials up to 4, from the even part of Laplace's
// continued fraction beyond (12 levels reach full precision there).
fn erfc_pos_d(a: T) -> T {
  if (a > T(27.3)) { return T(0); }
  var g: T;
  if (a <= T(4)) {
    g = erfcx_poly_d(a);
  } else {
    let y = T(2) * a * a;
    var t = y + T(49);
    for (var k = 12; k > 0; k--) { t = y + T(4 * k - 3) - T((2 * k - 1) * 2 * k) / t; }
    g = T(1.1283791670955126) * a / t;
  }
  return exp_neg_sq_d(a) * g;
}
