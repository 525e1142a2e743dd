// max_pool2d's forward: one thread per output element scans its window and writes the maximum and its
// flat input index h * W + w (an int64: low word, high word 0). The CPU's rule, kept exactly: rows
// from oh * stride - pad in steps of the dilation, the first inside the image first, up to the
// image's edge; a value replaces the running maximum when it is greater or NaN (so the last NaN of a
// window wins), ties keep the first; a window of -inf reports its first in-range element. Values are
// ordered on their bits (a driver that flushes subnormals compares them equal to 0 and to each other)
// and moved as loaded, never computed on. Any layout is read and written through its strides.
//! include lib/grid.wgsl

const CHANNELS_FAST: bool = {{channels_fast}};

//! include lib/pool_window.wgsl

@group(0) @binding(0) var<storage, read_write> image: array<{{element}}>;
@group(0) @binding(1) var<storage, read_write> pooled: array<{{real}}>;
@group(0) @binding(2) var<storage, read_write> indices: array<u32>;
@group(0) @binding(3) var<uniform> p: Params;

alias real = {{real}};
alias bits = {{bits}};

const SIGN_BIT: bits = {{sign_bit}};
const ABS_MASK: bits = {{abs_mask}};
const INF_BITS: bits = {{inf_bits}};

fn load(i: u32) -> real {
  return {{load}};
}

// An unsigned key in the floats' order: +0 and -0 share one, NaN is tested apart.
fn order_key(u: bits) -> bits {
  if ((u & ABS_MASK) == {{zero}}) { return SIGN_BIT; }
  if ((u & SIGN_BIT) != {{zero}}) { return ~u; }
  return u | SIGN_BIT;
}

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let t = flat_thread(gid, groups, {{workgroup_size}}u);
  if (t >= p.count) { return; }
  let at = grid_position(t, p.out_h, p.out_w);
  let plane = p.image_offset + at.x * p.image.x + at.y * p.image.y;
  let start_h = i32(at.z * p.stride_h) - i32(p.pad_h);
  let start_w = i32(at.w * p.stride_w) - i32(p.pad_w);
  let end_h = min(start_h + i32((p.kernel_h - 1u) * p.dilation_h + 1u), i32(p.in_h));
  let end_w = min(start_w + i32((p.kernel_w - 1u) * p.dilation_w + 1u), i32(p.in_w));
  let h0 = first_tap(start_h, p.dilation_h);
  let w0 = first_tap(start_w, p.dilation_w);
  var best = bitcast<real>(SIGN_BIT | INF_BITS);
  var best_key = order_key(SIGN_BIT | INF_BITS);
  var best_nan = false;
  var index = u32(h0) * p.in_w + u32(w0);
  for (var h = h0; h < end_h; h += i32(p.dilation_h)) {
    for (var w = w0; w < end_w; w += i32(p.dilation_w)) {
      let v = load(plane + u32(h) * p.image.z + u32(w) * p.image.w);
      let u = bitcast<bits>(v);
      let nan = (u & ABS_MASK) > INF_BITS;
      let key = order_key(u);
      if (nan || (!best_nan && key > best_key)) {
        best = v;
        best_key = key;
        best_nan = nan;
        index = u32(h) * p.in_w + u32(w);
      }
    }
  }
  pooled[p.pooled_offset + element_at(p.pooled, at)] = best;
  let word = p.index_offset + element_at(p.index, at);
  indices[word] = index;
  indices[word + 1u] = 0u;
}
