// Reductions over any set of dimensions (kernels/reduce_kernel.cpp picks the variant). Every output
// folds the elements of its row: a strided walk of `red_shape` through `red_in_stride` from the
// output's own base (`out_shape` through `out_in_stride`). Entry points by kind of op and by mode:
// a thread per output for short rows (`*_thread`), a workgroup per output for long ones
// (`*_workgroup`: each lane folds a strided share, then a fixed tree in workgroup memory).
//   reduce_*  the ops whose partial results fold with their own combine() (sum, prod, max, norms...)
//   arg_*     argmax/argmin: the value and its index, ties to the lowest index, the first NaN wins
//   var_*     variance: two passes over the row around a shift (see var_shift)
// Rows too long for one workgroup are split: a Partial pass folds slices of each row into partial
// results, a Combine pass folds those (STAGE). argmax/argmin also keep each slice's index and var each
// slice's sum of squared deviations in a second partial array (aux_index / aux_value).
// Adapters with subgroup operations append reduce_subgroup.wgsl for the reduce_* workgroup fold.
//
// The accumulator (the acc hole) is float32 for 16/32-bit floats, float64 for float64, int64 for
// integer sums, the input's own (widened) type for max/min. Each op's holes (its contribution,
// combine, finish, identity) come from its row in reduce_kernel.cpp; the dtype's (load_input,
// convert) from kernels/dtypes.h.
//! include lib/grid.wgsl
//! include lib/strided_offset.wgsl
//! include lib/nan_compare.wgsl
//! include lib/workgroup_reduce.wgsl

struct Params {
  first: u32,        // this dispatch's first work item: an output, or a row slice of a Partial pass
  end: u32,          // the end of its work items
  row_length: u32,   // elements reduced per output (in a Combine pass: slices per row)
  // The input's first element in its binding; wraps modulo 2^32 when a dispatch binds only what its
  // items read (an input larger than one binding).
  input_offset: u32,
  out_offset: u32,
  index_offset: u32, // argmax/argmin: the first word of the int64 indices (two words each)
  slices: u32,       // Partial pass: slices per row
  slice_length: u32, // Partial pass: elements per slice (the last may be shorter)
  scalars: array<vec4<u32>, 1>, // the scale (mean, var) and the norm's order, in the accumulator's type
  aux_offset: u32,   // split argmax/argmin/var: the second partial array's first element
  split_row_length: u32,   // var's Combine pass: the row length of the Partial pass
  split_slice_length: u32, // and its slice length
  out_shape: array<vec4<u32>, 2>,
  out_in_stride: array<vec4<u32>, 2>,
  out_stride: array<vec4<u32>, 2>,
  index_stride: array<vec4<u32>, 2>,
  red_shape: array<vec4<u32>, 2>,
  red_in_stride: array<vec4<u32>, 2>,
}

// Operands an op does not use are bound to a stand-in, so every variant has this layout.
@group(0) @binding(0) var<storage, read_write> out: array<{{acc}}>;
@group(0) @binding(1) var<storage, read_write> input: {{input_array}};
@group(0) @binding(2) var<storage, read_write> indices: array<u32>;   // int64 as (low, high) words
@group(0) @binding(3) var<storage, read_write> aux_index: array<u32>;
@group(0) @binding(4) var<storage, read_write> aux_value: array<{{acc}}>;
@group(0) @binding(5) var<uniform> p: Params;

const WHOLE: u32 = 0u;   // reads the input, writes finished outputs
const PARTIAL: u32 = 1u; // reads one slice of each row, writes the slice's unfinished partial result
const COMBINE: u32 = 2u; // reads the partial results (already accumulators), writes finished outputs
const STAGE: u32 = {{stage}}u;
const VEC4: bool = {{vec4}}; // a Partial pass over unit-stride rows of 32-bit words, a vec4 per load
const OUT_RANK: u32 = {{out_rank}}u;
const RED_RANK: u32 = {{red_rank}}u;
const LANES: u32 = {{workgroup_size}}u;

{{math}}

fn in_base(o: u32) -> u32 {
  return p.input_offset + strided_offset(o, p.out_shape, p.out_in_stride, OUT_RANK);
}

fn out_pos(o: u32) -> u32 {
  return p.out_offset + strided_offset(o, p.out_shape, p.out_stride, OUT_RANK);
}

fn red_offset(r: u32) -> u32 {
  return strided_offset(r, p.red_shape, p.red_in_stride, RED_RANK);
}

fn store_index(o: u32, index: u32) {
  let word = p.index_offset + 2u * strided_offset(o, p.out_shape, p.index_stride, OUT_RANK);
  indices[word] = index;
  indices[word + 1u] = 0u;
}

// The second partial array runs parallel to the first (a Combine pass's input).
fn aux_index_at(i: u32) -> u32 {
  return aux_index[i - p.input_offset + p.aux_offset];
}

fn aux_value_at(i: u32) -> {{acc}} {
  return aux_value[i - p.input_offset + p.aux_offset];
}

// pow for the p-norm: the elementwise family's pow_ in float64 (WGSL's pow has no f64 form) and in
// float32 where the adapter has float64 (pow_ is then exact to within a rounding); the variants of
// other ops keep it on float32, uncalled.
fn power(x: {{power_type}}, y: {{power_type}}) -> {{power_type}} {
  return {{pow}}(x, y);
}

fn scale() -> {{acc}} {
  return {{scale}};
}

fn order() -> {{acc}} {
  return {{order}};
}

// What one input element (given in its computation type) contributes, in the accumulator's type.
fn contribute(raw: {{input_value}}) -> {{acc}} {
  let x = {{convert}};
  return {{contribution}};
}

fn load(i: u32) -> {{acc}} {
  return contribute({{load_input}});
}

// The VEC4 variant's four elements at quad q (the other variants never call it).
fn load_quad(q: u32) -> vec4<{{input_value}}> {
  return {{load_quad}};
}

fn combine(a: {{acc}}, b: {{acc}}) -> {{acc}} {
  return {{combine}};
}

// The value written for an output, from its folded accumulator.
fn finish(acc: {{acc}}) -> {{acc}} {
  return {{finish}};
}

// argmax/argmin: whether (v2, i2) replaces (v1, i1); index 0xFFFFFFFF is "none yet".
fn take(v1: {{acc}}, i1: u32, v2: {{acc}}, i2: u32) -> bool {
  return i1 == 0xFFFFFFFFu || (i2 != 0xFFFFFFFFu && ({{beats}}(v2, v1) || (!{{beats}}(v1, v2) && i2 < i1)));
}

// ---- reduce_*: ops that fold with combine() --------------------------------------------------------

@compute @workgroup_size({{workgroup_size}})
fn reduce_thread(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let o = p.first + flat_thread(gid, groups, LANES);
  if (o >= p.end) { return; }
  let base = in_base(o);
  var acc = {{identity}};
  for (var r = 0u; r < p.row_length; r++) {
    let x = load(base + red_offset(r));
    acc = combine(acc, x);
  }
  out[out_pos(o)] = finish(acc);
}

// This lane's fold of its share of work item o: in a Partial pass, slice o % slices of row o / slices.
fn lane_fold(o: u32, lane: u32) -> {{acc}} {
  var acc = {{identity}};
  if (STAGE == PARTIAL && VEC4) {
    // Rows, slices and the input offset are multiples of 4 elements here.
    let slice = o % p.slices;
    let row_base = in_base(o / p.slices);
    let end = (row_base + min(p.row_length, (slice + 1u) * p.slice_length)) >> 2u;
    for (var q = ((row_base + slice * p.slice_length) >> 2u) + lane; q < end; q += LANES) {
      let v = load_quad(q);
      acc = combine(acc, contribute(v.x));
      acc = combine(acc, contribute(v.y));
      acc = combine(acc, contribute(v.z));
      let x = contribute(v.w);
      acc = combine(acc, x);
    }
  } else if (STAGE == PARTIAL) {
    let slice = o % p.slices;
    let row_base = in_base(o / p.slices);
    let end = min(p.row_length, (slice + 1u) * p.slice_length);
    for (var r = slice * p.slice_length + lane; r < end; r += LANES) {
      let x = load(row_base + red_offset(r));
      acc = combine(acc, x);
    }
  } else {
    let base = in_base(o);
    for (var r = lane; r < p.row_length; r += LANES) {
      let x = load(base + red_offset(r));
      acc = combine(acc, x);
    }
  }
  return acc;
}

// Where work item o's result goes: a Partial pass writes its partial results densely.
fn result_index(o: u32) -> u32 {
  if (STAGE == PARTIAL) { return p.out_offset + o; }
  return out_pos(o);
}

@compute @workgroup_size({{workgroup_size}})
fn reduce_workgroup(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
                    @builtin(local_invocation_index) lane: u32) {
  let o = p.first + flat_group(group, groups);
  if (o >= p.end) { return; }
  partial[lane] = lane_fold(o, lane);
  workgroupBarrier();
  for (var s = LANES / 2u; s > 0u; s = s >> 1u) {
    if (lane < s) { partial[lane] = combine(partial[lane], partial[lane + s]); }
    workgroupBarrier();
  }
  if (lane == 0u) { out[result_index(o)] = finish(partial[0]); }
}

// ---- arg_*: argmax / argmin ----------------------------------------------------------------------

// The index an element competes with: its position in the row, or in a Combine pass the index its
// slice found.
fn arg_index(i: u32, r: u32) -> u32 {
  if (STAGE == COMBINE) { return aux_index_at(i); }
  return r;
}

@compute @workgroup_size({{workgroup_size}})
fn arg_thread(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let o = p.first + flat_thread(gid, groups, LANES);
  if (o >= p.end) { return; }
  let base = in_base(o);
  var acc = {{identity}};
  var best = 0xFFFFFFFFu;
  for (var r = 0u; r < p.row_length; r++) {
    let i = base + red_offset(r);
    let x = load(i);
    let at = arg_index(i, r);
    if (take(acc, best, x, at)) { acc = x; best = at; }
  }
  store_index(o, best);
  out[out_pos(o)] = finish(acc);
}

var<workgroup> partial_index: array<u32, {{workgroup_size}}>;

@compute @workgroup_size({{workgroup_size}})
fn arg_workgroup(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
                 @builtin(local_invocation_index) lane: u32) {
  let o = p.first + flat_group(group, groups);
  if (o >= p.end) { return; }
  // Elements [lo, hi) of the row at row_base: the whole row, or one slice of it in a Partial pass.
  var row_base = 0u;
  var lo = 0u;
  var hi = p.row_length;
  if (STAGE == PARTIAL) {
    row_base = in_base(o / p.slices);
    lo = (o % p.slices) * p.slice_length;
    hi = min(p.row_length, lo + p.slice_length);
  } else {
    row_base = in_base(o);
  }
  var acc = {{identity}};
  var best = 0xFFFFFFFFu;
  for (var r = lo + lane; r < hi; r += LANES) {
    let i = row_base + red_offset(r);
    let x = load(i);
    let at = arg_index(i, r);
    if (take(acc, best, x, at)) { acc = x; best = at; }
  }
  partial[lane] = acc;
  partial_index[lane] = best;
  workgroupBarrier();
  for (var s = LANES / 2u; s > 0u; s = s >> 1u) {
    if (lane < s && take(partial[lane], partial_index[lane], partial[lane + s], partial_index[lane + s])) {
      partial[lane] = partial[lane + s];
      partial_index[lane] = partial_index[lane + s];
    }
    workgroupBarrier();
  }
  if (lane == 0u) {
    if (STAGE == PARTIAL) {
      out[p.out_offset + o] = partial[0];
      aux_index[p.aux_offset + o] = partial_index[0];
    } else {
      out[out_pos(o)] = partial[0];
      store_index(o, partial_index[0]);
    }
  }
}

// ---- var_*: variance -----------------------------------------------------------------------------
// Two passes over elements [lo, hi) of a row, `step` apart from `start` (a thread walks the whole row,
// a workgroup's lanes interleave). Each works on x - shift, shift the first value read (an element;
// in a Combine pass the first slice's mean): a constant row gives exactly 0 whatever the rounding of
// the mean's division, which a driver may leave 2.5 ulp off (NVIDIA's var of a row of ones was
// 9.5e-17), and a large mean costs the deviations no precision. Partial passes therefore hand on each
// slice's mean (not its sum) with its sum of squared deviations. In a Combine pass a slice adds its
// own sum of squares (aux_value) and its count times its mean's squared distance from the row's mean.

fn var_shift(row_base: u32, lo: u32, hi: u32) -> {{acc}} {
  var shift = {{acc}}(0);
  if (lo < hi) { shift = load(row_base + red_offset(lo)); }
  return shift;
}

// A Combine pass's slice r: how many elements its partial result stands for.
fn slice_count(r: u32) -> {{acc}} {
  return {{acc}}(min(p.split_slice_length, p.split_row_length - r * p.split_slice_length));
}

fn var_total(row_base: u32, start: u32, hi: u32, step: u32, shift: {{acc}}) -> {{acc}} {
  var total = {{acc}}(0);
  for (var r = start; r < hi; r += step) {
    let i = row_base + red_offset(r);
    if (STAGE == COMBINE) {
      let n = slice_count(r);
      total += n * (load(i) - shift);
    } else {
      total += load(i) - shift;
    }
  }
  return total;
}

fn var_mean(sum: {{acc}}, lo: u32, hi: u32) -> {{acc}} {
  if (STAGE == COMBINE) { return sum / {{acc}}(p.split_row_length); }
  return sum / {{acc}}(hi - lo);
}

fn var_squares(row_base: u32, start: u32, hi: u32, step: u32, shift: {{acc}}, mean: {{acc}}) -> {{acc}} {
  var acc = {{acc}}(0);
  for (var r = start; r < hi; r += step) {
    let i = row_base + red_offset(r);
    if (STAGE == COMBINE) {
      let n = slice_count(r);
      let d = (load(i) - shift) - mean;
      acc += aux_value_at(i) + n * d * d;
    } else {
      let d = (load(i) - shift) - mean;
      acc += d * d;
    }
  }
  return acc;
}

@compute @workgroup_size({{workgroup_size}})
fn var_thread(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let o = p.first + flat_thread(gid, groups, LANES);
  if (o >= p.end) { return; }
  let base = in_base(o);
  let shift = var_shift(base, 0u, p.row_length);
  let mean = var_mean(var_total(base, 0u, p.row_length, 1u, shift), 0u, p.row_length);
  out[out_pos(o)] = finish(var_squares(base, 0u, p.row_length, 1u, shift, mean));
}

@compute @workgroup_size({{workgroup_size}})
fn var_workgroup(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
                 @builtin(local_invocation_index) lane: u32) {
  let o = p.first + flat_group(group, groups);
  if (o >= p.end) { return; }
  var row_base = 0u;
  var lo = 0u;
  var hi = p.row_length;
  if (STAGE == PARTIAL) {
    row_base = in_base(o / p.slices);
    lo = (o % p.slices) * p.slice_length;
    hi = min(p.row_length, lo + p.slice_length);
  } else {
    row_base = in_base(o);
  }
  let shift = var_shift(row_base, lo, hi);
  let sum = workgroup_sum(lane, var_total(row_base, lo + lane, hi, LANES, shift));
  let mean = var_mean(sum, lo, hi);
  let squares = workgroup_sum(lane, var_squares(row_base, lo + lane, hi, LANES, shift, mean));
  if (lane == 0u) {
    if (STAGE == PARTIAL) {
      out[p.out_offset + o] = shift + mean;
      aux_value[p.aux_offset + o] = squares;
    } else {
      out[out_pos(o)] = finish(squares);
    }
  }
}
