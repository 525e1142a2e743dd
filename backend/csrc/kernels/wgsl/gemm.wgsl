// out = alpha * (A @ B) [+ beta * addend] for a batch of matrices, every operand indexed through its
// strides (any layout works unchanged): a 64x64 output tile per workgroup of 16x16 threads, each thread
// 4x4 outputs, K in slices of 16 through workgroup memory, each slice's global loads issued during the
// previous slice's products. Accumulates in {{acc}}: float32 for the
// floats up to 32 bits, int32 (wrapping, as the CPU's narrower ints wrap) for the narrower ints,
// float64 and int64 in themselves (two tiles of them fill the 16 KiB of workgroup memory WebGPU
// guarantees). A variant without an addend binds `out` in its place.
// Split-K (p.split.x slices > 1): workgroup z is batch * slices + slice, the workgroup walks only its
// slice's p.split.y elements of K, and writes its tile (alpha 1, no addend) at out's batch index z:
// gemm_split_sum.wgsl adds the slices up.
// `acc += a * b` may be contracted into an FMA by a driver: float results differ in the last bits
// between adapters, within the tolerance any reordered dot product needs.

//! include lib/gemm_params.wgsl
//! include lib/gemm_tile.wgsl
//! include lib/tile_4x4.wgsl

@group(0) @binding(0) var<storage, read_write> out: array<{{acc}}>;
@group(0) @binding(1) var<storage, read_write> a: {{operand_array}};
@group(0) @binding(2) var<storage, read_write> b: {{operand_array}};
@group(0) @binding(3) var<storage, read_write> addend: {{operand_array}};
@group(0) @binding(4) var<uniform> p: Params;

const WITH_ADDEND: bool = {{with_addend}};

fn load_a(i: u32) -> {{acc}} {
  return {{load_a}};
}

fn load_b(i: u32) -> {{acc}} {
  return {{load_b}};
}

fn load_addend(i: u32) -> {{acc}} {
  return {{load_addend}};
}

fn alpha() -> {{acc}} {
  return {{alpha}};
}

fn beta() -> {{acc}} {
  return {{beta}};
}

// One thread's share of a K step: four elements of A and four of B, in the order `stage` stores them.
struct Staged {
  a: vec4<{{acc}}>,
  b: vec4<{{acc}}>,
}

// Element e (0..1023) of a step: A's row e / 16 and k e % 16, B's k e / 64 and column e % 64.
fn a_place(e: u32) -> vec2<u32> {
  return vec2<u32>(e / 16u, e % 16u);
}

fn b_place(e: u32) -> vec2<u32> {
  return vec2<u32>(e % 64u, e / 64u);
}

// This thread's elements of the step starting at k0 (zero past the edges). Read one step ahead, so the
// loads are in flight while the current step's products run.
fn fetch(tile: Tile, k0: u32) -> Staged {
  var s = Staged(vec4<{{acc}}>({{acc}}(0)), vec4<{{acc}}>({{acc}}(0)));
  for (var i = 0u; i < 4u; i++) {
    let at = a_place(tile.tid + i * 256u);
    if (tile.row0 + at.x < p.dims.x && k0 + at.y < tile.k_end) {
      s.a[i] = load_a(tile.a_base + (tile.row0 + at.x) * p.a.z + (k0 + at.y) * p.a.w);
    }
    let bt = b_place(tile.tid + i * 256u);
    if (k0 + bt.y < tile.k_end && tile.col0 + bt.x < p.dims.y) {
      s.b[i] = load_b(tile.b_base + (k0 + bt.y) * p.b.z + (tile.col0 + bt.x) * p.b.w);
    }
  }
  return s;
}

fn stage(tid: u32, s: Staged) {
  for (var i = 0u; i < 4u; i++) {
    let at = a_place(tid + i * 256u);
    put_a(at.y * 64u + at.x, s.a[i]);
    let bt = b_place(tid + i * 256u);
    put_b(bt.y * 64u + bt.x, s.b[i]);
  }
}

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
  let m = p.dims.x;
  let n = p.dims.y;
  let tile = tile_at(group, local, 64u);
  var acc: array<{{acc}}, 16>;
  var next = fetch(tile, tile.k_begin);
  for (var k0 = tile.k_begin; k0 < tile.k_end; k0 += 16u) {
    stage(tile.tid, next);
    workgroupBarrier();
    if (k0 + 16u < tile.k_end) {
      next = fetch(tile, k0 + 16u);
    }
    accumulate_4x4(&acc, local.x, local.y);
    workgroupBarrier();
  }
  for (var i = 0u; i < 4u; i++) {
    let row = tile.row0 + local.y * 4u + i;
    for (var j = 0u; j < 4u; j++) {
      let col = tile.col0 + local.x * 4u + j;
      if (row < m && col < n) {
        var v = alpha() * acc[i * 4u + j];
        if (WITH_ADDEND) {
          v += beta() * load_addend(p.addend.x + tile.batch * p.addend.y + row * p.addend.z + col * p.addend.w);
        }
        out[p.out.x + group.z * p.out.y + row * p.out.z + col * p.out.w] = v;
      }
    }
  }
}
