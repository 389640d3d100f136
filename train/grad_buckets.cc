#include "train/grad_buckets.h"

#include "ops/array.h"

namespace weft::train {

std::vector<std::vector<int>> PlanBuckets(const std::vector<int64_t>& bytes, int64_t bucket_bytes) {
  std::vector<std::vector<int>> buckets;
  int64_t filled = 0;
  for (int i = static_cast<int>(bytes.size()) - 1; i >= 0; --i) {
    const int64_t b = bytes[static_cast<size_t>(i)];
    if (buckets.empty() || bucket_bytes <= 0 || filled + b > bucket_bytes) {
      buckets.emplace_back();
      filled = 0;
    }
    buckets.back().push_back(i);
    filled += b;
  }
  return buckets;
}

std::vector<Output> AllReduceInBuckets(const Scope& s, const std::vector<Output>& grads,
                                       const std::vector<TensorShape>& shapes, const ops::CollectiveGroup& g,
                                       int64_t rank, int64_t first_instance, int64_t bucket_bytes,
                                       const std::vector<std::string>& names) {
  WEFT_REQUIRE(shapes.size() == grads.size(), "gradient bucketing: {} shapes for {} gradients", shapes.size(),
               grads.size());
  WEFT_REQUIRE(names.empty() || names.size() == grads.size(), "gradient bucketing: {} names for {} gradients",
               names.size(), grads.size());
  auto label = [&](const std::vector<int>& bucket) {
    std::string out;
    for (int i : bucket) {
      if (names.empty()) break;
      const size_t k = static_cast<size_t>(i);
      out += fmt::format("{}'{}' grad {}", out.empty() ? "" : "; ", names[k], shapes[k].ToString());
    }
    return out;
  };
  std::vector<int64_t> bytes;
  for (size_t i = 0; i < grads.size(); ++i) {
    const Output& x = grads[i];
    const TensorShape& shape = shapes[i];
    WEFT_REQUIRE(shape.IsFullyDefined(), "gradient bucketing: gradient '{}' has shape {}, not fully known", x.name(),
                 shape.ToString());
    WEFT_REQUIRE(x.dtype() == grads.front().dtype(), "gradient bucketing: gradient '{}' is {}, '{}' is {}", x.name(),
                 DTypeName(x.dtype()), grads.front().name(), DTypeName(grads.front().dtype()));
    bytes.push_back(shape.num_elements() * static_cast<int64_t>(DTypeSize(x.dtype())));
  }
  std::vector<Output> out(grads.size());
  int64_t instance = first_instance;
  for (const std::vector<int>& bucket : PlanBuckets(bytes, bucket_bytes)) {
    if (bucket.size() == 1) {  // as it is: no copies
      const size_t i = static_cast<size_t>(bucket[0]);
      out[i] = ops::AllReduce(s.WithOpName("all_reduce"), grads[i], g, instance++, rank, "Add", "Id", "auto",
                              label(bucket));
      continue;
    }
    const Scope bs = s.NewSubScope("bucket");
    std::vector<Output> flat;
    for (int i : bucket) flat.push_back(ops::Reshape(bs, grads[static_cast<size_t>(i)], std::vector<int64_t>{-1}));
    Output sum = ops::AllReduce(bs.WithOpName("all_reduce"), ops::Concat(bs, flat, 0), g, instance++, rank, "Add",
                                "Id", "auto", label(bucket));
    int64_t offset = 0;
    for (int i : bucket) {
      const TensorShape& shape = shapes[static_cast<size_t>(i)];
      Output piece = ops::Slice(bs, sum, {offset}, {shape.num_elements()});
      out[static_cast<size_t>(i)] = ops::Reshape(bs, piece, shape.dims());
      offset += shape.num_elements();
    }
  }
  return out;
}

}  // namespace weft::train
