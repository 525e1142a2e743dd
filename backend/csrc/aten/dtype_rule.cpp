#include "aten/dtype_rule.h"

#include "aten/common.h"
#include "kernels/dtypes.h"

namespace torch_dml::aten {

uint32_t dtype_class(c10::ScalarType type) {
  if (!kernels::dtype_info(type)) return 0;
  if (type == c10::kDouble) return kF64Class;
  if (type == c10::kBool) return kBoolClass;
  if (c10::isFloatingType(type)) return kFloatClass;
  if (c10::isIntegralType(type, /*includeBool=*/false)) return kIntClass;
  return 0;
}

bool computes_on(const at::Tensor& t, uint32_t classes, std::initializer_list<runtime::Feature> needs) {
  if (!(dtype_class(t.scalar_type()) & classes)) return false;
  const auto info = kernels::dtype_info(t.scalar_type());
  if (info->needs && !context_of(t).has(*info->needs)) return false;
  return adapter_has(t, needs);
}

bool adapter_has(const at::Tensor& t, std::initializer_list<runtime::Feature> needs) {
  runtime::DeviceContext& context = context_of(t);
  for (runtime::Feature feature : needs)
    if (!context.has(feature)) return false;
  return true;
}

} // namespace torch_dml::aten
