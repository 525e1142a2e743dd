// out = alpha * (A @ B) [+ beta * addend] for a batch of matrices, every operand indexed through its
// strides (any layout works unchanged): a 64x64 output tile per workgroup of 16x16 threads, each thread
// 4x4 outputs, K in slices of 16 through workgroup memory. Accumulates in {{acc}}: float32 for the
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

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
  let m = p.dims.x;
  let n = p.dims.y;
  let tile = tile_at(group, local, 64u);
  var acc: array<{{acc}}, 16>;
  for (var k0 = tile.k_begin; k0 < tile.k_end; k0 += 16u) {
    for (var i = 0u; i < 4u; i++) {
      let e = tile.tid + i * 256u;
      let r = e / 16u;
      let kk = e % 16u;
      var v = {{acc}}(0);
      if (tile.row0 + r < m && k0 + kk < tile.k_end) {
        v = load_a(tile.a_base + (tile.row0 + r) * p.a.z + (k0 + kk) * p.a.w);
      }
      tile_a[kk * 64u + r] = v;
      let kb = e / 64u;
      let c = e % 64u;
      var u = {{acc}}(0);
      if (k0 + kb < tile.k_end && tile.col0 + c < n) {
        u = load_b(tile.b_base + (k0 + kb) * p.b.z + (tile.col0 + c) * p.b.w);
      }
      tile_b[kb * 64u + c] = u;
    }
    workgroupBarrier();
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
