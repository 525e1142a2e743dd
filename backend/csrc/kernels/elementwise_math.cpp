#include "kernels/elementwise_math.h"
#include "kernels/exact_float_math.h"
#include "kernels/generated/wgsl_math.h"
#include "runtime/device.h"

#include <cctype>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace torch_dml::kernels {
namespace {

using wgsl::math::Helper;

template <size_t N>
void add_pool(std::vector<const Helper*>& pool, const Helper (&helpers)[N]) {
  for (const Helper& h : helpers) pool.push_back(&h);
}

// The builtins a float64 kernel reaches through wgsl/math/f64_builtins.wgsl.
const char* const kF64Builtins[] = {"exp", "exp2", "log", "log2", "sin", "cos", "tan", "ldexp", "trunc", "round"};

// exact.wgsl's helpers with the float layout of the width filled in (the text lives as long as the process).
const std::vector<Helper>& exact_pool(bool f64) {
  static const auto make = [](bool wide) {
    std::vector<Helper> helpers;
    for (const ExactHelper& h : exact_float_helpers(wide)) helpers.push_back({h.name, h.code});
    return helpers;
  };
  static const std::vector<Helper> f32 = make(false), f64_pool = make(true);
  return f64 ? f64_pool : f32;
}

bool is_ident(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Whether `text` calls helper `name`, or indexes it (a module-scope table).
bool calls(const std::string& text, std::string_view name) {
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    const size_t after = at + name.size();
    if ((at == 0 || !is_ident(text[at - 1])) && after < text.size() && (text[after] == '(' || text[after] == '['))
      return true;
  }
  return false;
}

} // namespace

std::string substitute_type(const std::string& text, const char* type) {
  const bool f64 = std::string(type) == "f64";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const bool starts = i == 0 || !is_ident(text[i - 1]);
    const bool alone = text[i] == 'T' && starts && (i + 1 == text.size() || !is_ident(text[i + 1]));
    if (alone) {
      out += type;
      continue;
    }
    out += text[i];
    if (!f64 || !starts) continue;
    for (const char* name : kF64Builtins) {
      const size_t n = std::char_traits<char>::length(name);
      if (text.compare(i, n, name) == 0 && i + n < text.size() && text[i + n] == '(') {
        out.pop_back();
        out += name;
        out += "_d";
        i += n - 1;
        break;
      }
    }
  }
  return out;
}

bool wide_float32_math(runtime::DeviceContext& context) {
  return context.has(runtime::Feature::ShaderF64) && context.has(runtime::Feature::ShaderInt64);
}

std::string math_helpers(const std::string& expression, Value value, bool wide) {
  std::vector<const Helper*> pool;
  const bool is_float = value == Value::F32 || value == Value::F64;
  if (value == Value::F32) add_pool(pool, wgsl::math::f32_bits);
  if (value == Value::F64) add_pool(pool, wgsl::math::f64_bits);
  if (is_float)
    for (const Helper& h : exact_pool(value == Value::F64)) pool.push_back(&h);
  if (value == Value::I32 || value == Value::I64) add_pool(pool, wgsl::math::int_bits);
  add_pool(pool, wgsl::math::generic);
  if (is_float)
    for (const Helper& h : wgsl::math::floating) {
      const Helper* chosen = &h;
      if (value == Value::F64)
        for (const Helper& o : wgsl::math::f64_float)
          if (o.name == h.name) chosen = &o;
      if (value == Value::F32 && wide)
        for (const Helper& o : wgsl::math::f32_wide)
          if (o.name == h.name) chosen = &o;
      pool.push_back(chosen);
    }
  if (value == Value::F64) add_pool(pool, wgsl::math::f64_builtins);
  // f32_wide.wgsl's own helpers (those not standing in for a floating.wgsl one).
  if (value == Value::F32 && wide)
    for (const Helper& h : wgsl::math::f32_wide) {
      bool replaces = false;
      for (const Helper& o : wgsl::math::floating) replaces = replaces || o.name == h.name;
      if (!replaces) pool.push_back(&h);
    }

  // Each helper as this type spells it (f64 renames builtins to f64_builtins.wgsl's).
  const char* type = wgsl_type(value);
  const char* bits = value == Value::I64 ? "64" : "32";
  std::map<const Helper*, std::string> code;
  for (const Helper* h : pool) {
    std::string text = substitute_type(std::string(h->code), type);
    for (size_t at = text.find("BITS"); at != std::string::npos; at = text.find("BITS", at)) text.replace(at, 4, bits);
    code.emplace(h, std::move(text));
  }
  // Grow the set of reached helpers to a fixed point, then emit them in pool order (callees are
  // listed before callers or WGSL resolves them anyway: module-scope declarations are order-free).
  std::set<const Helper*> reached;
  std::string scanned = expression;
  for (bool grew = true; grew;) {
    grew = false;
    for (const Helper* h : pool) {
      if (!reached.count(h) && calls(scanned, h->name)) {
        reached.insert(h);
        scanned += code[h];
        grew = true;
      }
    }
  }
  std::string out;
  for (const Helper* h : pool)
    if (reached.count(h)) out += code[h];
  return out;
}

} // namespace torch_dml::kernels
