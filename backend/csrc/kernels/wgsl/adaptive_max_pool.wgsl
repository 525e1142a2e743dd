// adaptive_max_pool2d's forward on an NCHW-contiguous input: one thread per output element scans its
// window, rows [floor(o H / OH), ceil((o + 1) H / OH)) and the same along W, in row-major order, and
// writes the maximum (in the computation type, f32 or f64: the caller converts to the dtype) and its
// flat input index h W + w as an int64 (low word, high word 0). The CPU's rule, kept exactly: a value
// replaces the running maximum when it is greater or NaN (so the last NaN of a window wins), ties keep
// the first; a window of -inf reports its first element. NaN is tested on bits, since WGSL lets a
// compiler assume comparisons never see one. Window bounds are unsigned integer arithmetic.
//! include lib/grid.wgsl
//! include lib/adaptive_pool_params.wgsl

@group(0) @binding(0) var<storage, read_write> source: array<{{element}}>;
@group(0) @binding(1) var<storage, read_write> out: array<{{real}}>;
@group(0) @binding(2) var<storage, read_write> indices: array<u32>;
@group(0) @binding(3) var<uniform> p: Params;

alias real = {{real}};

fn load(i: u32) -> real {
  return {{load}};
}

fn is_nan(v: real) -> bool {
  return {{is_nan}};
}

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let t = flat_thread(gid, groups, {{workgroup_size}}u);
  if (t >= p.count) { return; }
  let per_plane = p.out_h * p.out_w;
  let plane = t / per_plane;
  let oh = (t % per_plane) / p.out_w;
  let ow = t % p.out_w;
  let h0 = (oh * p.in_h) / p.out_h;
  let h1 = ((oh + 1u) * p.in_h + p.out_h - 1u) / p.out_h;
  let w0 = (ow * p.in_w) / p.out_w;
  let w1 = ((ow + 1u) * p.in_w + p.out_w - 1u) / p.out_w;
  let base = p.src_offset + plane * p.in_h * p.in_w;
  var best = {{negative_infinity}};
  var best_nan = false;
  var at = h0 * p.in_w + w0;
  for (var h = h0; h < h1; h++) {
    for (var w = w0; w < w1; w++) {
      let i = h * p.in_w + w;
      let v = load(base + i);
      let nan = is_nan(v);
      if (nan || (!best_nan && v > best)) {
        best = v;
        best_nan = nan;
        at = i;
      }
    }
  }
  out[p.out_offset + t] = best;
  indices[p.index_offset + 2u * t] = at;
  indices[p.index_offset + 2u * t + 1u] = 0u;
}
