// One element of an op of backend/ops.yaml: its position e in the launch, its inputs a, b, c in the
// computation type T (or bool for an input the op reads as a condition), its scalar parameters
// s0..s4, and {{expression}}, the row's WGSL for T; the result in the stored form of out's dtype. Inputs and parameters the op does not
// have are zeros the expression never reads.

//! include lib/bf16_bits.wgsl

{{helpers}}

fn value(e: u32, a: {{a_type}}, b: {{b_type}}, c: {{c_type}}) -> {{store_type}} {
  let s0 = {{s0}};
  let s1 = {{s1}};
  let s2 = {{s2}};
  let s3 = {{s3}};
  let s4 = {{s4}};
  let r = {{expression}};
  return {{store}};
}
