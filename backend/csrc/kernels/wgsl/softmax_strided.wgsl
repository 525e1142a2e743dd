// Softmax and log-softmax over a dim that is not the last, forward and backward, of contiguous
// (outer, length, inner) views with inner > 1: one thread per (outer, inner) column walks the dim, so
// neighbouring threads read neighbouring elements and no copy has to move the dim last first. Each
// column is read twice (a fold, then the write) in a fixed order, computing in {{acc}}.
//! include lib/grid.wgsl
//! include lib/softmax_operands.wgsl

struct Params {
  columns: u32,      // outer * inner: one thread each
  length: u32,       // size of the softmax dim
  inner: u32,        // elements after it, the stride between a column's elements
  input_offset: u32, // forward: x; backward: the forward's output y
  out_offset: u32,
  grad_offset: u32,  // backward: dL/dy (the forward binds its input here, unread)
}

// Where column t starts, relative to each binding's offset.
fn column_start(t: u32) -> u32 {
  let outer = t / p.inner;
  return outer * p.length * p.inner + (t - outer * p.inner);
}

struct Folded {
  largest: {{acc}},
  total: {{acc}}, // sum of exp(x - largest)
  nan: bool,      // every output is NaN
}

// The column's max and sum of exponentials in one pass, the sum rescaled whenever the max grows. The
// outputs are NaN wherever the CPU's max-then-sum makes them so: a NaN or a +inf in the column (NaN -
// max, inf - inf), or a column of -inf (-inf - -inf); a -inf among finite values adds exp(-inf) = 0.
// Infinities and NaN are told by their bits (lib: isnan_, isinf_), as WGSL lets a compiler assume
// arithmetic never meets them.
fn fold(base: u32) -> Folded {
  var largest = {{acc}}(0);
  var total = {{acc}}(0);
  var seen = false;    // a finite value
  var spoiled = false; // a NaN or +inf
  for (var k = 0u; k < p.length; k++) {
    let v = x_at(p.input_offset + base + k * p.inner);
    if (isnan_(v) || isinf_(v)) {
      spoiled = spoiled || !(isinf_(v) && signbit_(v));
    } else if (!seen || v > largest) {
      total = select({{acc}}(0), total * {{exp}}(largest - v), seen) + {{acc}}(1);
      largest = v;
      seen = true;
    } else {
      total = total + {{exp}}(v - largest);
    }
  }
  return Folded(largest, total, spoiled || !seen);
}

@compute @workgroup_size({{workgroup_size}})
fn softmax(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let t = flat_thread(gid, groups, {{workgroup_size}}u);
  if (t >= p.columns) { return; }
  let base = column_start(t);
  let f = fold(base);
  for (var k = 0u; k < p.length; k++) {
    let at = base + k * p.inner;
    out[p.out_offset + at] = select({{exp}}(x_at(p.input_offset + at) - f.largest) / f.total, nan_(), f.nan);
  }
}

@compute @workgroup_size({{workgroup_size}})
fn log_softmax(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let t = flat_thread(gid, groups, {{workgroup_size}}u);
  if (t >= p.columns) { return; }
  let base = column_start(t);
  let f = fold(base);
  let log_total = {{log}}(f.total);
  for (var k = 0u; k < p.length; k++) {
    let at = base + k * p.inner;
    out[p.out_offset + at] = select(x_at(p.input_offset + at) - f.largest - log_total, nan_(), f.nan);
  }
}

// dx = y * (dy - sum(dy * y))
@compute @workgroup_size({{workgroup_size}})
fn softmax_backward(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let t = flat_thread(gid, groups, {{workgroup_size}}u);
  if (t >= p.columns) { return; }
  let base = column_start(t);
  var dot = {{acc}}(0);
  for (var k = 0u; k < p.length; k++) {
    let at = base + k * p.inner;
    dot = dot + g_at(p.grad_offset + at) * x_at(p.input_offset + at);
  }
  for (var k = 0u; k < p.length; k++) {
    let at = base + k * p.inner;
    out[p.out_offset + at] = x_at(p.input_offset + at) * (g_at(p.grad_offset + at) - dot);
  }
}

// dx = dy - exp(y) * sum(dy)
@compute @workgroup_size({{workgroup_size}})
fn log_softmax_backward(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let t = flat_thread(gid, groups, {{workgroup_size}}u);
  if (t >= p.columns) { return; }
  let base = column_start(t);
  var total = {{acc}}(0);
  for (var k = 0u; k < p.length; k++) { total = total + g_at(p.grad_offset + base + k * p.inner); }
  for (var k = 0u; k < p.length; k++) {
    let at = base + k * p.inner;
    out[p.out_offset + at] = g_at(p.grad_offset + at) - {{exp}}(x_at(p.input_offset + at)) * total;
  }
}
