#include "ops/attr.h"

#include <fmt/format.h>

#include <cstring>

#include "core/checked.h"

namespace weft {

std::string_view AttrTypeName(AttrType t) {
  switch (t) {
    case AttrType::kBool: return "bool";
    case AttrType::kInt: return "int";
    case AttrType::kFloat: return "float";
    case AttrType::kString: return "string";
    case AttrType::kType: return "type";
    case AttrType::kShape: return "shape";
    case AttrType::kIntList: return "list(int)";
    case AttrType::kFloatList: return "list(float)";
    case AttrType::kTensor: return "tensor";
  }
  return "?";
}

AttrType TypeOf(const AttrValue& v) {
  static constexpr AttrType kTypes[] = {AttrType::kBool,  AttrType::kInt,     AttrType::kFloat,
                                        AttrType::kString, AttrType::kType,   AttrType::kShape,
                                        AttrType::kIntList, AttrType::kFloatList, AttrType::kTensor};
  return kTypes[v.index()];
}

std::string AttrValueString(const AttrValue& v) {
  struct Visitor {
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return fmt::format("{:g}", d); }
    std::string operator()(const std::string& s) const { return "\"" + s + "\""; }
    std::string operator()(DType t) const { return std::string(DTypeName(t)); }
    std::string operator()(const TensorShape& s) const { return s.ToString(); }
    std::string operator()(const std::vector<int64_t>& l) const { return fmt::format("[{}]", fmt::join(l, ",")); }
    std::string operator()(const std::vector<double>& l) const { return fmt::format("[{}]", fmt::join(l, ",")); }
    std::string operator()(const Tensor& t) const { return t.DebugString() + " " + t.ValuesString(6); }
  };
  return std::visit(Visitor{}, v);
}

bool AttrValueEquals(const AttrValue& a, const AttrValue& b) {
  if (a.index() != b.index()) return false;
  if (const Tensor* ta = std::get_if<Tensor>(&a)) {
    const Tensor& tb = std::get<Tensor>(b);
    if (ta->dtype() != tb.dtype() || !(ta->shape() == tb.shape())) return false;
    return ta->bytes() == 0 || std::memcmp(ta->raw_data(), tb.raw_data(), ta->bytes()) == 0;
  }
  return std::visit(
      [&](const auto& x) -> bool {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, Tensor>) {
          return false;  // handled above
        } else {
          return x == std::get<X>(b);
        }
      },
      a);
}

namespace {
template <typename T>
const T& GetExact(const AttrMap& attrs, std::string_view name, std::string_view owner, std::string_view want) {
  auto it = attrs.find(std::string(name));
  if (it == attrs.end()) throw Error(errors::InvalidArgument("{}: missing attr '{}'", owner, name));
  const T* v = std::get_if<T>(&it->second);
  if (v == nullptr) {
    throw Error(errors::InvalidArgument("{}: attr '{}' is {} ({}), expected {}", owner, name,
                                        AttrTypeName(TypeOf(it->second)), AttrValueString(it->second), want));
  }
  return *v;
}
}  // namespace

#define WEFT_GET_ATTR(T, STORED, WANT)                                                         \
  template <>                                                                                  \
  T GetAttr<T>(const AttrMap& attrs, std::string_view name, std::string_view owner) {          \
    return static_cast<T>(GetExact<STORED>(attrs, name, owner, WANT));                         \
  }
WEFT_GET_ATTR(bool, bool, "bool")
WEFT_GET_ATTR(int64_t, int64_t, "int")
// An int attr read as int is checked, never wrapped: 2^32 + 3 read as 3 would be a wrong answer.
template <>
int GetAttr<int>(const AttrMap& attrs, std::string_view name, std::string_view owner) {
  return CheckedNarrow<int>(GetExact<int64_t>(attrs, name, owner, "int"), fmt::format("{}: attr '{}'", owner, name));
}
WEFT_GET_ATTR(double, double, "float")
WEFT_GET_ATTR(float, double, "float")
WEFT_GET_ATTR(std::string, std::string, "string")
WEFT_GET_ATTR(DType, DType, "type")
WEFT_GET_ATTR(TensorShape, TensorShape, "shape")
WEFT_GET_ATTR(std::vector<int64_t>, std::vector<int64_t>, "list(int)")
WEFT_GET_ATTR(std::vector<double>, std::vector<double>, "list(float)")
WEFT_GET_ATTR(Tensor, Tensor, "tensor")
#undef WEFT_GET_ATTR

}  // namespace weft
