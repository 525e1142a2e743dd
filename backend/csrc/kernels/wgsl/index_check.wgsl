// An index range check that does not stop the device (runtime/device_checks.h): from the [min, max] of
// an index tensor (two int64 or int32 values, reduced on the device), one thread writes the first
// failed check in stream order into the device's check record, which the host reads at its next wait.
// Signed 64-bit comparisons on u32 word pairs: no shader-int64 needed.

struct Params {
  id: u32,          // the check's number (1-based) in the host's list
  wide: u32,        // 1: the bounds are int64 (two words each); 0: int32
  first: u32,       // the bounds' first word within their window
  has_allowed: u32, // 1: `allowed` passes whatever the range (nll_loss's ignore_index)
  low: vec2<u32>,   // accepted range [low, high), int64 as (low word, high word)
  high: vec2<u32>,
  allowed: vec2<u32>,
}

@group(0) @binding(0) var<storage, read_write> bounds: array<u32>;
@group(0) @binding(1) var<storage, read_write> record: array<u32, 4>; // id, value (low, high word)
@group(0) @binding(2) var<uniform> p: Params;

fn value(i: u32) -> vec2<u32> {
  if (p.wide == 1u) { return vec2<u32>(bounds[p.first + 2u * i], bounds[p.first + 2u * i + 1u]); }
  let word = bounds[p.first + i];
  return vec2<u32>(word, select(0u, 0xffffffffu, (word & 0x80000000u) != 0u));
}

fn less(a: vec2<u32>, b: vec2<u32>) -> bool {
  if (a.y != b.y) { return bitcast<i32>(a.y) < bitcast<i32>(b.y); }
  return a.x < b.x;
}

fn fails(v: vec2<u32>) -> bool {
  if (p.has_allowed == 1u && all(v == p.allowed)) { return false; }
  return less(v, p.low) || !less(v, p.high);
}

@compute @workgroup_size(1)
fn main() {
  if (record[0] != 0u) { return; } // an earlier check failed first
  let smallest = value(0u);
  let largest = value(1u);
  var bad = vec2<u32>(0u, 0u);
  var failed = false;
  if (fails(smallest)) {
    bad = smallest;
    failed = true;
  } else if (fails(largest)) {
    bad = largest;
    failed = true;
  }
  if (failed) {
    record[0] = p.id;
    record[1] = bad.x;
    record[2] = bad.y;
  }
}
