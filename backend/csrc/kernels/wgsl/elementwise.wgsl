// The elementwise family, any strides: out[i] = op(a[i], b[i], c[i]) over a TensorIterator's operands,
// each with its own dtype and strides, converted as loaded and stored (no input copies, no casts). One
// variant per (op, computation type, operand dtypes, rank, store); an input that is a CPU scalar comes
// in p.scalars and binds nothing, so the tensor inputs take the bindings after out's in order and the
// others are declared at unused binding numbers the entry point never reads.
//! include lib/grid.wgsl
//! include lib/elementwise_params.wgsl
//! include lib/strided_index.wgsl
//! include lib/elementwise_value.wgsl

// Every storage binding is read_write: in-place ops bind one buffer as output and input, and a
// read-only plus read-write binding of one buffer in one dispatch is a validation error.
@group(0) @binding(0) var<storage, read_write> dst: array<{{out_array}}>;
@group(0) @binding({{a_binding}}) var<storage, read_write> in_a: array<{{a_array}}>;
@group(0) @binding({{b_binding}}) var<storage, read_write> in_b: array<{{b_array}}>;
@group(0) @binding({{c_binding}}) var<storage, read_write> in_c: array<{{c_array}}>;
@group(0) @binding({{params_binding}}) var<uniform> p: Params;

const WORKGROUP_SIZE: u32 = {{workgroup_size}}u;
const RANK: u32 = {{rank}}u;
// Output elements per u32 word, as a power of two (packed 1- and 2-byte dtypes).
const LANES_LOG2: u32 = {{lanes_log2}}u;

fn dst_index(e: u32) -> u32 {
  return strided_index(e, 0u, p.out_offset);
}

fn input_a(e: u32) -> {{a_type}} {
  return {{load_a}};
}

fn input_b(e: u32) -> {{b_type}} {
  return {{load_b}};
}

fn input_c(e: u32) -> {{c_type}} {
  return {{load_c}};
}

// The stored form of element e.
fn element(e: u32) -> {{store_type}} {
  return value(e, input_a(e), input_b(e), input_c(e));
}

{{main}}
