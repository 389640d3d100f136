#include "core/shape.h"

#include <fmt/format.h>

namespace weft {

// Every dim is at most kMaxElements, so that a sum of two dims (Concat, Pad, windows) never
// overflows int64; products are checked where they are formed (num_elements, core/checked.h).
void TensorShape::Validate() const {
  if (static_cast<int64_t>(dims_.size()) > kMaxRank) {
    throw Error(errors::InvalidArgument("shape of rank {} exceeds the maximum rank {}", dims_.size(), kMaxRank));
  }
  for (int64_t d : dims_) CheckDim(d, dims_);
}

void TensorShape::CheckDim(int64_t d, const std::vector<int64_t>& dims) {
  if (d < kUnknownDim) {
    throw Error(errors::InvalidArgument("negative dimension {} in shape [{}]", d, fmt::join(dims, ",")));
  }
  if (d > kMaxElements) {
    throw Error(errors::InvalidArgument("dimension {} in shape [{}] exceeds the limit 2^50", d, fmt::join(dims, ",")));
  }
}

TensorShape TensorShape::UnknownOfRank(int64_t rank) {
  if (rank < 0 || rank > kMaxRank) {
    throw Error(errors::InvalidArgument("rank {} is out of range [0, {}]", rank, kMaxRank));
  }
  return TensorShape(std::vector<int64_t>(rank, kUnknownDim));
}

bool TensorShape::IsFullyDefined() const {
  if (unknown_rank_) return false;
  for (int64_t d : dims_) if (d < 0) return false;
  return true;
}

int64_t TensorShape::num_elements() const {
  if (!IsFullyDefined()) {
    throw Error(errors::InvalidArgument("shape {} is not fully defined", ToString()));
  }
  int64_t n = 1;
  for (int64_t d : dims_) {
    if (d != 0 && n > kMaxElements / d) {
      throw Error(errors::InvalidArgument("shape {} has too many elements (limit 2^50)", ToString()));
    }
    n *= d;
  }
  return n;
}

std::string TensorShape::ToString() const {
  if (unknown_rank_) return "<unknown>";
  std::string s = "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) s += ",";
    s += dims_[i] < 0 ? std::string("?") : std::to_string(dims_[i]);
  }
  return s + "]";
}

void TensorShape::AddDim(int64_t d) {
  CheckDim(d, dims_);
  if (static_cast<int64_t>(dims_.size()) >= kMaxRank) {
    throw Error(errors::InvalidArgument("adding a dimension to a shape of rank {} exceeds the maximum rank {}",
                                        dims_.size(), kMaxRank));
  }
  unknown_rank_ = false;
  dims_.push_back(d);
}

void TensorShape::set_dim(int i, int64_t d) {
  CheckDim(d, dims_);
  dims_.at(i) = d;
}

void TensorShape::RemoveDim(int i) { dims_.erase(dims_.begin() + i); }

int TensorShape::CanonicalAxis(int64_t axis, std::string_view what) const {
  const int r = rank();
  if (r < 0) throw Error(errors::InvalidArgument("{}: axis {} of a tensor of unknown rank", what, axis));
  if (axis < -r || axis >= r || (r == 0)) {
    throw Error(errors::InvalidArgument("{}: axis {} out of range for shape {} (rank {})", what, axis,
                                        ToString(), r));
  }
  return static_cast<int>(axis < 0 ? axis + r : axis);
}

bool TensorShape::IsCompatibleWith(const TensorShape& o) const {
  if (unknown_rank_ || o.unknown_rank_) return true;
  if (dims_.size() != o.dims_.size()) return false;
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (dims_[i] >= 0 && o.dims_[i] >= 0 && dims_[i] != o.dims_[i]) return false;
  }
  return true;
}

TensorShape TensorShape::Merge(const TensorShape& o) const {
  if (!IsCompatibleWith(o)) {
    throw Error(errors::InvalidArgument("shapes {} and {} are incompatible", ToString(), o.ToString()));
  }
  if (unknown_rank_) return o;
  if (o.unknown_rank_) return *this;
  TensorShape r = *this;
  for (size_t i = 0; i < dims_.size(); ++i) if (r.dims_[i] < 0) r.dims_[i] = o.dims_[i];
  return r;
}

TensorShape BroadcastShapes(const TensorShape& a, const TensorShape& b) {
  if (a.unknown_rank() || b.unknown_rank()) return TensorShape::Unknown();
  const int r = std::max(a.rank(), b.rank());
  std::vector<int64_t> out(r);
  for (int i = 0; i < r; ++i) {
    const int ia = a.rank() - r + i, ib = b.rank() - r + i;
    const int64_t da = ia >= 0 ? a.dim(ia) : 1, db = ib >= 0 ? b.dim(ib) : 1;
    if (da == 1) out[i] = db;
    else if (db == 1) out[i] = da;
    else if (da < 0 || db < 0) out[i] = da < 0 ? db : da;  // an unknown dim must equal the known one
    else if (da == db) out[i] = da;
    else throw Error(errors::InvalidArgument("shapes {} and {} do not broadcast (dimension {}: {} vs {})",
                                              a.ToString(), b.ToString(), i, da, db));
  }
  return TensorShape(std::move(out));
}

}  // namespace weft
