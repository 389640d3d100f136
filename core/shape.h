// Tensor shapes, possibly partially known (for shape inference at graph construction).
//
//   TensorShape s({2, 3});            s.num_elements() == 6, s.ToString() == "[2,3]"
//   TensorShape p({-1, 3});           unknown batch dimension: "[?,3]"
//   TensorShape u = TensorShape::Unknown();   unknown rank: "<unknown>"
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/status.h"

namespace weft {

class TensorShape {
 public:
  static constexpr int64_t kUnknownDim = -1;
  // Largest element count a tensor may have (keeps byte sizes inside int64), and so the largest
  // dim: every dim is checked against it, so a sum of two dims cannot overflow.
  static constexpr int64_t kMaxElements = int64_t{1} << 50;
  // Highest rank (TensorFlow's limit too); more is InvalidArgument.
  static constexpr int64_t kMaxRank = 254;

  TensorShape() = default;  // scalar: rank 0, known
  TensorShape(std::initializer_list<int64_t> dims) : dims_(dims) { Validate(); }
  explicit TensorShape(std::vector<int64_t> dims) : dims_(std::move(dims)) { Validate(); }
  static TensorShape Unknown() {
    TensorShape s;
    s.unknown_rank_ = true;
    return s;
  }
  // InvalidArgument unless 0 <= rank <= kMaxRank.
  static TensorShape UnknownOfRank(int64_t rank);

  bool unknown_rank() const { return unknown_rank_; }
  int rank() const { return unknown_rank_ ? -1 : static_cast<int>(dims_.size()); }
  int64_t dim(int i) const { return dims_.at(i); }
  const std::vector<int64_t>& dims() const { return dims_; }
  bool IsFullyDefined() const;
  // Product of the dims; throws InvalidArgument if not fully defined or too large.
  int64_t num_elements() const;
  std::string ToString() const;

  void AddDim(int64_t d);
  void set_dim(int i, int64_t d);
  void RemoveDim(int i);
  // Accepts a negative axis (counting from the end) and returns it in [0, rank); throws
  // InvalidArgument naming the axis and the shape when out of range.
  int CanonicalAxis(int64_t axis, std::string_view what) const;

  // True when the two shapes could describe the same tensor (unknowns match anything).
  bool IsCompatibleWith(const TensorShape& other) const;
  // The most specific shape compatible with both; throws InvalidArgument if incompatible.
  TensorShape Merge(const TensorShape& other) const;

  bool operator==(const TensorShape& o) const { return unknown_rank_ == o.unknown_rank_ && dims_ == o.dims_; }

 private:
  void Validate() const;
  static void CheckDim(int64_t d, const std::vector<int64_t>& dims);  // -1 <= d <= kMaxElements
  std::vector<int64_t> dims_;
  bool unknown_rank_ = false;
};

// Shape of numpy-style broadcasting of a and b; unknown dims propagate. Throws InvalidArgument
// naming both shapes when they do not broadcast.
TensorShape BroadcastShapes(const TensorShape& a, const TensorShape& b);

}  // namespace weft
