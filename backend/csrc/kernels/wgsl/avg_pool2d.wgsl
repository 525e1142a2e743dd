// avg_pool2d's and adaptive_avg_pool2d's forward: one thread per output sums its window in the CPU's
// order (rows, then columns, in the computation type) and divides as the CPU does
// (lib/avg_window.wgsl); an avg_pool2d window wholly in the padding averages to 0, as on the CPU. Any
// layout is read and written through its strides.
//! include lib/grid.wgsl

const CHANNELS_FAST: bool = {{channels_fast}};
const ADAPTIVE: bool = {{adaptive}};
const COUNT_INCLUDE_PAD: bool = {{count_include_pad}};
const DIVISOR_OVERRIDE: i32 = {{divisor_override}};

//! include lib/pool_window.wgsl

@group(0) @binding(0) var<storage, read_write> image: array<{{element}}>;
@group(0) @binding(1) var<storage, read_write> pooled: array<{{real}}>;
@group(0) @binding(2) var<uniform> p: Params;

alias real = {{real}};

//! include lib/avg_window.wgsl

fn load(i: u32) -> real {
  return {{load}};
}

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let t = flat_thread(gid, groups, {{workgroup_size}}u);
  if (t >= p.count) { return; }
  let at = grid_position(t, p.out_h, p.out_w);
  let plane = p.image_offset + at.x * p.image.x + at.y * p.image.y;
  let h = window_h(at.z);
  let w = window_w(at.w);
  var value = {{zero}};
  if (h.x < h.y && w.x < w.y) {
    var sum = {{zero}};
    for (var y = h.x; y < h.y; y++) {
      for (var x = w.x; x < w.y; x++) {
        sum += load(plane + u32(y) * p.image.z + u32(x) * p.image.w);
      }
    }
    value = averaged(sum, h, w);
  }
  pooled[p.pooled_offset + element_at(p.pooled, at)] = value;
}
