// The foreach family (_foreach_add_, _foreach_addcdiv_, ..., aten/foreach_ops.cpp): one op of
// backend/ops.yaml over several tensors of a list in one dispatch, each a slot (lib/tensor_slots.wgsl)
// whose operand 0 is its output and 1.. its tensor inputs. One thread per u32 word
// (lib/word_lanes.wgsl), float32 arithmetic whatever the stored dtype, with the row's own expression:
// the result is the per-tensor op's, bit for bit.
//! include lib/grid.wgsl
//! include lib/bf16_bits.wgsl
//! include lib/word_lanes.wgsl
//! include lib/tensor_slots.wgsl

struct Params {
  slots: u32,                     // tensors in this launch
  scalar0: u32,                   // f32 bits of the call's scalars (a Scalar argument, alpha)
  scalar1: u32,
  unused: u32,
  slot: array<vec4<u32>, 32>,     // per slot: first workgroup, elements, its own scalar (f32 bits), -
  offsets: array<vec4<u32>, 32>,  // per slot: the first word of operands 0..3 within their windows
}

{{bindings}}
@group(0) @binding({{params_binding}}) var<uniform> p: Params;

const WORKGROUP_SIZE: u32 = {{workgroup_size}}u;
const WORDS_PER_THREAD: u32 = {{words_per_thread}}u;

{{accessors}}

{{helpers}}

// The output's word `w` as the op starts it: only lanes past the tensor's end are kept (a packed
// tensor's last word may hold another tensor's element).
fn kept_word(slot: u32, index: u32, w: u32, count: u32) -> u32 {
  if ((w + 1u) * LANES > count) { return load_0(slot, index); }
  return 0u;
}

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) local: u32,
        @builtin(num_workgroups) groups: vec3<u32>) {
  let group = flat_group(wid, groups);
  let slot = slot_of(group);
  let info = p.slot[slot];
  let count = info.y;
  let offsets = p.offsets[slot];
  let listed = bitcast<f32>(info.z);
  let s0 = {{s0}};
  let last = (count - 1u) / LANES; // count >= 1: empty tensors get no slot
  // Several words a thread: the slot lookup above costs more than one word's op on some drivers.
  let first = slot_word(group, local, slot, WORKGROUP_SIZE * WORDS_PER_THREAD);
  for (var j = 0u; j < WORDS_PER_THREAD; j++) {
    let w = first + j * WORKGROUP_SIZE;
    if (w > last) { break; }
{{loads}}
    var out_word = {{out_word}};
    for (var lane = 0u; lane < LANES; lane++) {
      if (w * LANES + lane >= count) { break; }
      let a = {{a}};
      let b = {{b}};
      let c = {{c}};
      out_word = with_lane(out_word, lane, {{expression}});
    }
    store_0(slot, offsets.x + w, out_word);
  }
}
