// 2-D upsampling of NCHW-contiguous tensors, forward and backward, for upsample_nearest2d,
// _upsample_nearest_exact2d and upsample_bilinear2d. One thread per 32-bit word of the contiguous
// tensor written (the output forward, grad_input backward): a float16/bfloat16 word holds two
// elements, which the thread assembles lane by lane, so no two threads write one word. Values are
// computed in float32, float64 ones in float64 (PyTorch's opmath types).
//
// The backward is a gather, deterministic and free of atomics: each grad_input element sums, in a
// fixed order, the grad_output elements whose forward taps read it. Along one axis the first tap
// `i0` and the second `i1` (i0 or i0 + 1) never decrease as the output index grows, so the outputs
// reading input index i are the contiguous run with i0 <= i <= i1: its start is found by binary
// search, and the run ends at the first output whose i0 passes i. That holds for every index rule
// below whatever rounding the driver picks, since each rule is monotone.
//! include lib/grid.wgsl
//! include lib/bf16_bits.wgsl

struct Params {
  count: u32,      // elements of the tensor written
  words: u32,      // words of it this launch writes
  dst_offset: u32, // its first element within its window (a whole word)
  src_offset: u32, // first element of the tensor read within its window
  in_h: u32,       // sizes of the forward op's input ...
  in_w: u32,
  out_h: u32,      // ... and output
  out_w: u32,
  rule_h: u32,     // RULE_* per axis
  rule_w: u32,
  align_corners: u32,
  opaque_zero: u32, // always 0: see `rounded`
  // Input step per output step (h, then w), as PyTorch computes it on the host: the bits of a
  // float32 (low word) or of a float64 (low, high word).
  scales: vec4<u32>,
}

// float32 and the packed float16/bfloat16 as u32 words, float64 as f64.
@group(0) @binding(0) var<storage, read_write> dst: array<{{element}}>;
@group(0) @binding(1) var<storage, read_write> source: array<{{element}}>;
@group(0) @binding(2) var<uniform> p: Params;

const MODE_NEAREST: u32 = 0u;       // floor(o * scale) (OpenCV's INTER_NEAREST)
const MODE_NEAREST_EXACT: u32 = 1u; // floor((o + 0.5) * scale)
const MODE_BILINEAR: u32 = 2u;
const MODE: u32 = {{mode}}u;
const BACKWARD: bool = {{backward}};

// How one axis maps an output index to input taps (chosen on the host like PyTorch's special cases).
const RULE_IDENTITY: u32 = 0u; // output size == input size: o itself
const RULE_HALF: u32 = 1u;     // nearest, output size == 2 * input size: o >> 1
const RULE_SCALED: u32 = 2u;   // the mode's formula with the axis' scale

alias real = {{real}};

// Elements per word (1 for float32, 2 for float16/bfloat16) and bits per element.
const LANES: u32 = {{lanes}}u;
const LANE_BITS: u32 = 32u / LANES;

fn load(i: u32) -> real {
  return {{load}};
}

fn stored(v: real) -> {{element}} {
  return {{store}};
}

fn scale_of(lo: u32, hi: u32) -> real {
  return {{scale}};
}

// Element e of a contiguous (planes, rows, cols) tensor as (col, row, plane).
fn position(e: u32, rows: u32, cols: u32) -> vec3<u32> {
  let rest = e / cols;
  return vec3<u32>(e % cols, rest % rows, rest / rows);
}

// ATen's source rounds the product before subtracting from it (src = scale * (o + 0.5) - 0.5) and
// before lambda = src - i0; a driver may fuse the multiply and the subtraction into one FMA, which
// rounds once. ORing in a uniform zero makes the product a value the compiler cannot see through, so
// it is rounded as written; the subtraction of 0.5 is then exact (the product is below 2^23) and so
// is src - floor(src). (PyTorch's CPU kernels themselves differ here: the default build rounds twice,
// the AVX2/AVX512 ones are compiled with the FMA. Linear interpolation is continuous in src, so the
// two differ by about one ulp of src times the step between the taps, never by a wrong value.)
fn rounded(x: real) -> real {
  return {{rounded}};
}

struct Taps {
  i0: u32,
  i1: u32,
  w0: real,
  w1: real,
}

// PyTorch's nearest_idx / nearest_exact_idx / compute_source_index_and_lambda (ATen/native/UpSample.h).
// The nearest rules compute in float32 whatever the dtype, as PyTorch's do.
fn taps(o: u32, in_size: u32, rule: u32, scale: real) -> Taps {
  if (rule == RULE_IDENTITY) { return Taps(o, o, 1.0, 0.0); }
  if (MODE == MODE_NEAREST) {
    var i = o >> 1u;
    // A single correctly rounded product: nothing for a driver to fuse.
    if (rule != RULE_HALF) { i = min(u32(floor(f32(o) * f32(scale))), in_size - 1u); }
    return Taps(i, i, 1.0, 0.0);
  }
  if (MODE == MODE_NEAREST_EXACT) {
    // o + 0.5 is exact below 2^23 and the product is rounded once, as PyTorch's (double) product
    // rounded to float for floorf.
    let i = min(u32(floor((f32(o) + 0.5) * f32(scale))), in_size - 1u);
    return Taps(i, i, 1.0, 0.0);
  }
  var src = rounded(scale * real(o));
  if (p.align_corners == 0u) { src = max(rounded(scale * (real(o) + 0.5)) - 0.5, 0.0); }
  let i0 = min(u32(floor(src)), in_size - 1u);
  let w1 = clamp(src - real(i0), 0.0, 1.0);
  let i1 = select(i0, i0 + 1u, i0 + 1u < in_size);
  return Taps(i0, i1, 1.0 - w1, w1);
}

fn weight_of(t: Taps, i: u32) -> real {
  return select(0.0, t.w0, t.i0 == i) + select(0.0, t.w1, t.i1 == i);
}

// The first output index whose taps reach input index i or beyond (i1 >= i).
fn first_reaching(i: u32, out_size: u32, in_size: u32, rule: u32, scale: real) -> u32 {
  var lo = 0u;
  var hi = out_size;
  while (lo < hi) {
    let mid = (lo + hi) >> 1u;
    if (taps(mid, in_size, rule, scale).i1 < i) { lo = mid + 1u; } else { hi = mid; }
  }
  return lo;
}

fn forward_value(e: u32) -> real {
  let at = position(e, p.out_h, p.out_w);
  let plane = at.z;
  let th = taps(at.y, p.in_h, p.rule_h, scale_of(p.scales.x, p.scales.y));
  let tw = taps(at.x, p.in_w, p.rule_w, scale_of(p.scales.z, p.scales.w));
  let row0 = p.src_offset + (plane * p.in_h + th.i0) * p.in_w;
  if (MODE != MODE_BILINEAR) { return load(row0 + tw.i0); }
  let row1 = p.src_offset + (plane * p.in_h + th.i1) * p.in_w;
  // PyTorch's order: along the width first, then the two rows.
  let top = tw.w0 * load(row0 + tw.i0) + tw.w1 * load(row0 + tw.i1);
  let bottom = tw.w0 * load(row1 + tw.i0) + tw.w1 * load(row1 + tw.i1);
  return th.w0 * top + th.w1 * bottom;
}

fn backward_value(e: u32) -> real {
  let at = position(e, p.in_h, p.in_w);
  let iw = at.x;
  let ih = at.y;
  let plane = at.z;
  let scale_h = scale_of(p.scales.x, p.scales.y);
  let scale_w = scale_of(p.scales.z, p.scales.w);
  let first_ow = first_reaching(iw, p.out_w, p.in_w, p.rule_w, scale_w);
  var total: real = 0.0;
  for (var oh = first_reaching(ih, p.out_h, p.in_h, p.rule_h, scale_h); oh < p.out_h; oh++) {
    let th = taps(oh, p.in_h, p.rule_h, scale_h);
    if (th.i0 > ih) { break; }
    let row = p.src_offset + (plane * p.out_h + oh) * p.out_w;
    var row_total: real = 0.0;
    for (var ow = first_ow; ow < p.out_w; ow++) {
      let tw = taps(ow, p.in_w, p.rule_w, scale_w);
      if (tw.i0 > iw) { break; }
      row_total += weight_of(tw, iw) * load(row + ow);
    }
    total += weight_of(th, ih) * row_total;
  }
  return total;
}

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let t = flat_thread(gid, groups, {{workgroup_size}}u);
  if (t >= p.words) { return; }
  let w = p.dst_offset / LANES + t;
  if (LANES == 1u) {
    if (BACKWARD) { dst[w] = stored(backward_value(t)); } else { dst[w] = stored(forward_value(t)); }
    return;
  }
  let first = t * LANES;
  // A last word the tensor only partly fills keeps the bytes beyond it. (The conversions to u32 and
  // back to the element type are identities here, where elements are u32 words; they let the
  // float64 variant, which never runs this branch, type-check.)
  var word = 0u;
  if (first + LANES > p.count) { word = u32(dst[w]); }
  for (var j = 0u; j < LANES; j++) {
    let e = first + j;
    if (e >= p.count) { break; }
    var v: real;
    if (BACKWARD) { v = backward_value(e); } else { v = forward_value(e); }
    word = insertBits(word, u32(stored(v)), j * LANE_BITS, LANE_BITS);
  }
  dst[w] = {{element}}(word);
}
