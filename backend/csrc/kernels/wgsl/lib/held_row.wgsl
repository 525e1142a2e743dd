// Where a lane of a held-row kernel sits: the workgroup's teams take consecutive rows, and lane `lane`
// of a team holds the row's vectors lane, lane + {{team}}, ... ({{held}} of them, {{vec_width}} elements
// each), so a team's loads of one step are adjacent in memory. A lane keeps element c of its k-th
// vector at k * {{vec_width}} + c of its held array.

const TEAM = {{team}}u;
const HELD = {{held}}u;
const VEC = {{vec_width}}u;

struct Seat {
  row: u32,
  team: u32,
  lane: u32,
  live: bool, // false for a team past the last row: it still joins the folds
}

fn seat_of(group: vec3<u32>, groups: vec3<u32>, local_index: u32) -> Seat {
  let team = local_index / TEAM;
  let row = flat_group(group, groups) * {{rows_per_group}}u + team;
  return Seat(row, team, local_index % TEAM, row < p.rows);
}

// Whether the lane's k-th vector lies in its row.
fn holds(s: Seat, k: u32) -> bool {
  return s.live && k * TEAM + s.lane < p.width;
}

fn vector_index(s: Seat, k: u32) -> u32 {
  return k * TEAM + s.lane;
}

// The parts of a loaded vector, for the kernels' load holes.
fn parts4(v: vec4<f32>) -> array<f32, 4> {
  return array<f32, 4>(v.x, v.y, v.z, v.w);
}

fn parts2(v: vec2<f32>) -> array<f32, 2> {
  return array<f32, 2>(v.x, v.y);
}

fn bf16_pair(word: u32) -> array<f32, 2> {
  return array<f32, 2>(bitcast<f32>(word << 16u), bitcast<f32>(word & 0xFFFF0000u));
}
