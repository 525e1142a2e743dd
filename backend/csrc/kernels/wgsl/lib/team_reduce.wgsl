// Folds over a team of {{team}} lanes, {{rows_per_group}} teams per workgroup (a row each), with the
// workgroup fold of lib/workgroup_reduce.wgsl. Every lane of the workgroup calls, from uniform control
// flow (a lane whose row is past the end takes part with a neutral value).
//! include lib/workgroup_reduce.wgsl

fn team_sum(team: u32, lane: u32, value: {{acc}}) -> {{acc}} { return fold_sum(team * {{team}}u, {{team}}u, lane, value); }
fn team_max(team: u32, lane: u32, value: {{acc}}) -> {{acc}} { return fold_max(team * {{team}}u, {{team}}u, lane, value); }
