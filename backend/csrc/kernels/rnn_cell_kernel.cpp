#include "kernels/rnn_cell_kernel.h"

#include "kernels/dtypes.h"
#include "kernels/elementwise_math.h"
#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/launch.h"
#include "kernels/wgsl_family.h"
#include "kernels/wgsl_store.h"

namespace torch_dml::kernels {
namespace {

// Per pass, in RnnCellPass's order: its op name, its WGSL family, each storage binding's name (the load
// hole of an input is load_<name>), how many of them are inputs, and each binding's elements in units
// of batch * hidden (gates: 4 or 3 per unit; a bias: the gates of one row).
struct PassInfo {
  const char* op;
  const wgsl::Family* family;
  std::vector<const char*> names;
  size_t inputs;
  std::vector<uint32_t> per_unit; // 0: a bias, `gates` elements per hidden unit of one row
  uint32_t gates;
};

const PassInfo& info(RnnCellPass pass) {
  static const PassInfo table[] = {
      {"lstm_cell", &wgsl::lstm_cell,
       {"input_gates", "hidden_gates", "cx", "input_bias", "hidden_bias", "hy", "cy", "workspace"}, 5,
       {4, 4, 1, 0, 0, 1, 1, 4}, 4},
      {"lstm_cell_backward", &wgsl::lstm_cell_backward,
       {"grad_hy", "grad_cy", "cx", "cy", "workspace", "grad_gates", "grad_cx"}, 5, {1, 1, 1, 1, 4, 4, 1}, 4},
      {"gru_cell", &wgsl::gru_cell,
       {"input_gates", "hidden_gates", "hx", "input_bias", "hidden_bias", "hy", "workspace"}, 5,
       {3, 3, 1, 0, 0, 1, 5}, 3},
      {"gru_cell_backward", &wgsl::gru_cell_backward,
       {"grad_hy", "workspace", "grad_input_gates", "grad_hidden_gates", "grad_hx"}, 2, {1, 5, 3, 3, 1}, 3},
  };
  return table[static_cast<size_t>(pass)];
}

// The Params of every pass are lib/rnn_cell.wgsl's; the LSTM forward's struct stands for all four.
using Params = wgsl::LstmCellParams;
static_assert(sizeof(Params) == sizeof(wgsl::LstmCellBackwardParams) && sizeof(Params) == sizeof(wgsl::GruCellParams) &&
              sizeof(Params) == sizeof(wgsl::GruCellBackwardParams));

LaunchPlan<Params> plan(runtime::DeviceContext& context, const RnnCellProblem& r) {
  const PassInfo& pass = info(r.pass);
  LaunchPlan<Params> plan(context, pass.op, r.dtype);
  Launch& launch = plan.launch;
  launch.require(is_float_family(r.dtype) || r.dtype == c10::kDouble, "a dtype that is not floating point");
  launch.require(r.dtype != c10::kDouble || context.has(runtime::Feature::ShaderF64), "float64 without shader-f64");
  launch.require(r.operands.size() == pass.names.size() && r.operands[pass.inputs].has_value(), "its operands");
  const uint64_t units = r.batch * r.hidden;
  launch.require_u32(units * 5, "gate elements");
  Params& p = plan.params;
  p.count = static_cast<uint32_t>(units);
  p.hidden = static_cast<uint32_t>(r.hidden);
  if (!plan.reason().empty()) return plan;
  // An absent input's binding holds the cell's first output, never read through it.
  const DeviceTensorRef& stand_in = *r.operands[pass.inputs];
  for (size_t k = 0; k < r.operands.size(); ++k) {
    const uint64_t count = pass.per_unit[k] == 0 ? pass.gates * r.hidden : pass.per_unit[k] * units;
    p.offsets[k / 4][k % 4] = r.operands[k] ? launch.bind(*r.operands[k], count) : launch.bind(stand_in, 1);
  }
  return plan;
}

std::string source(runtime::DeviceContext& context, const RnnCellProblem& r) {
  const PassInfo& pass = info(r.pass);
  const Value real = r.dtype == c10::kDouble ? Value::F64 : Value::F32;
  std::vector<Hole> holes = {{"real", wgsl_type(real)},
                             {"element", typed_array_type(r.dtype)},
                             {"workgroup_size", std::to_string(kWorkgroupSize)}};
  std::vector<std::string> load_names;
  load_names.reserve(pass.inputs);
  for (size_t k = 0; k < pass.inputs; ++k) {
    load_names.push_back(std::string("load_") + pass.names[k]);
    holes.push_back({load_names.back(), typed_load(r.dtype, pass.names[k], "i")});
  }
  const auto present = [&](size_t k) { return r.operands[k].has_value() ? "true" : "false"; };
  switch (r.pass) {
    case RnnCellPass::LstmForward:
    case RnnCellPass::GruForward:
      holes.push_back({"has_bias", present(3)});
      break;
    case RnnCellPass::LstmBackward:
      holes.push_back({"has_grad_hy", present(0)});
      holes.push_back({"has_grad_cy", present(1)});
      break;
    case RnnCellPass::GruBackward:
      break;
  }
  if (r.pass != RnnCellPass::GruBackward)
    holes.push_back({"helpers", math_helpers("sigmoid_(x) tanh_(x)", real, wide_float32_math(context))});
  return render(*pass.family, holes);
}

} // namespace

bool rnn_cell(runtime::DeviceContext& context, const RnnCellProblem& r) {
  if (r.batch * r.hidden == 0) return true;
  auto planned = plan(context, r);
  if (!planned.reason().empty()) return false;
  const PassInfo& pass = info(r.pass);
  std::string name = std::string(pass.op) + "/" + dtype_info(r.dtype)->name;
  for (size_t k = 0; k < r.operands.size(); ++k)
    if (!r.operands[k]) name += std::string("/no_") + pass.names[k];
  planned.run(name, [&] { return source(context, r); }, groups_for(planned.params.count));
  return true;
}

} // namespace torch_dml::kernels
