// Attribute values carried by graph nodes (and declared, with defaults, by op schemas).
#pragma once

#include <map>
#include <string>
#include <variant>
#include <vector>

#include "core/dtype.h"
#include "core/shape.h"
#include "core/tensor.h"

namespace weft {

enum class AttrType { kBool, kInt, kFloat, kString, kType, kShape, kIntList, kFloatList, kTensor };
std::string_view AttrTypeName(AttrType t);

using AttrValue = std::variant<bool, int64_t, double, std::string, DType, TensorShape, std::vector<int64_t>,
                               std::vector<double>, Tensor>;
using AttrMap = std::map<std::string, AttrValue>;

AttrType TypeOf(const AttrValue& v);
std::string AttrValueString(const AttrValue& v);  // for DOT, errors and debugging
bool AttrValueEquals(const AttrValue& a, const AttrValue& b);  // tensors compare by value

// Reads attr `name` as T from `attrs`; throws InvalidArgument naming `owner` (e.g. "MatMul 'mm'")
// if missing or of another type. int attrs may be read as int (32-bit) too (InvalidArgument when
// the value does not fit), floats as float.
template <typename T>
T GetAttr(const AttrMap& attrs, std::string_view name, std::string_view owner);

}  // namespace weft
