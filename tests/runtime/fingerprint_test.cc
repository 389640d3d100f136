// Collective fingerprints (runtime/collectives/fingerprint.h): what must agree, the wire format,
// and the sentence that names the first difference on each side.
#include <doctest/doctest.h>

#include "runtime/collectives/fingerprint.h"

using namespace weft;

namespace {

CollectiveSignature Reduce(const std::string& node, int64_t instance, TensorShape shape, std::string label) {
  return {.op = "CollectiveReduce", .node = node, .group_key = 1, .instance_key = instance,
          .dtype = DType::kFloat32, .shape = std::move(shape), .algorithm = "auto", .label = std::move(label)};
}

}  // namespace

TEST_CASE("fingerprint: equal programs agree; node names and labels do not count") {
  std::vector<CollectiveSignature> a = {Reduce("all_reduce", 1, TensorShape({5408, 64}), "'dense/kernel' grad [5408,64]")};
  std::vector<CollectiveSignature> b = a;
  b[0].node = "replica_1/all_reduce";
  b[0].label = "";
  CHECK(FingerprintOf(a) == FingerprintOf(b));
  CHECK(CompareSignatures(a, "worker 0", b, "worker 1").ok());
  // Each field that must agree changes the fingerprint.
  for (int field = 0; field < 6; ++field) {
    std::vector<CollectiveSignature> c = a;
    if (field == 0) c[0].op = "CollectiveBroadcast";
    if (field == 1) c[0].group_key = 2;
    if (field == 2) c[0].instance_key = 2;
    if (field == 3) c[0].dtype = DType::kFloat64;
    if (field == 4) c[0].shape = TensorShape({5408, 32});
    if (field == 5) c[0].algorithm = "ring";
    CHECK(FingerprintOf(c) != FingerprintOf(a));
    CHECK(CompareSignatures(a, "worker 0", c, "worker 1").code() == Code::kFailedPrecondition);
  }
}

TEST_CASE("fingerprint: the first differing gradient of a bucket is named on both sides") {
  const std::vector<CollectiveSignature> w0 = {
      Reduce("loss/all_reduce_workers", 1, TensorShape({}), ""),
      Reduce("optimizer/bucket/all_reduce", 2, TensorShape({346186}),
             "'dense_1/kernel' grad [64,10]; 'dense/kernel' grad [5408,64]; 'dense/bias' grad [64]")};
  std::vector<CollectiveSignature> w1 = w0;
  w1[1].shape = TensorShape({173066});
  w1[1].label = "'dense_1/kernel' grad [64,10]; 'dense/kernel' grad [5408,32]; 'dense/bias' grad [32]";
  const Status s = CompareSignatures(w0, "worker 0", w1, "worker 1");
  CHECK(s.code() == Code::kFailedPrecondition);
  MESSAGE(s.ToString());
  CHECK(s.message().find("worker 1 all-reduces 'dense/kernel' grad [5408,32] where worker 0 has 'dense/kernel' "
                         "grad [5408,64] (collective 2 of the step") != std::string::npos);
  CHECK(s.message().find("[346186]") != std::string::npos);
  CHECK(s.message().find("[173066]") != std::string::npos);
}

TEST_CASE("fingerprint: a collective one worker skips is named") {
  const std::vector<CollectiveSignature> w0 = {Reduce("a", 1, TensorShape({4}), ""), Reduce("b", 2, TensorShape({8}), "")};
  const std::vector<CollectiveSignature> w1 = {w0[0]};
  const Status s = CompareSignatures(w0, "worker 0", w1, "worker 1");
  CHECK(s.code() == Code::kFailedPrecondition);
  CHECK(s.message().find("worker 0 all-reduces 'b' (node 'b', float32 [8], group 1, instance 2, algorithm auto) "
                         "(collective 2 of the step) where worker 1 has no such collective") != std::string::npos);
}

TEST_CASE("fingerprint: the wire format round-trips, and bad bytes are DataLoss naming the sender") {
  const std::vector<CollectiveSignature> a = {Reduce("x", 3, TensorShape({-1, 7}), "'v' grad [?,7]")};
  const std::string bytes = EncodeSignatures(a);
  const std::vector<CollectiveSignature> b = DecodeSignatures(bytes, "worker 1");
  REQUIRE(b.size() == 1);
  CHECK(b[0].node == "x");
  CHECK(b[0].label == a[0].label);
  CHECK(b[0].shape == a[0].shape);
  CHECK(FingerprintOf(a) == FingerprintOf(b));
  for (size_t cut : {size_t{0}, size_t{5}, bytes.size() - 1}) {
    try {
      DecodeSignatures(std::string_view(bytes).substr(0, cut), "worker 1");
      FAIL("decoded a truncated fingerprint");
    } catch (const Error& e) {
      CHECK(e.status().code() == Code::kDataLoss);
      CHECK(std::string(e.what()).find("worker 1") != std::string::npos);
    }
  }
}
