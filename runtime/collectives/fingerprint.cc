#include "runtime/collectives/fingerprint.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "core/byte_io.h"

namespace weft {
namespace {

constexpr uint32_t kVersion = 1;
// A step holds a few thousand collectives at most; a longer list is a corrupt message.
constexpr uint32_t kMaxSignatures = 1 << 20;

bool SameWork(const CollectiveSignature& a, const CollectiveSignature& b) {
  return a.op == b.op && a.group_key == b.group_key && a.instance_key == b.instance_key && a.dtype == b.dtype &&
         a.shape == b.shape && a.algorithm == b.algorithm;
}

std::string_view Verb(const std::string& op) {
  if (op == "CollectiveReduce") return "all-reduces";
  if (op == "CollectiveBroadcast") return "broadcasts";
  if (op == "CollectiveAllGather") return "all-gathers";
  if (op == "CollectiveReduceScatter") return "reduce-scatters";
  return op;
}

std::vector<std::string> LabelItems(const std::string& label) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= label.size() && !label.empty()) {
    const size_t end = label.find("; ", start);
    items.push_back(label.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 2;
  }
  return items;
}

std::string Details(const CollectiveSignature& s) {
  return fmt::format("node '{}', {} {}, group {}, instance {}{}", s.node, DTypeName(s.dtype), s.shape.ToString(),
                     s.group_key, s.instance_key, s.algorithm.empty() ? "" : ", algorithm " + s.algorithm);
}

}  // namespace

void SortSignatures(std::vector<CollectiveSignature>* s) {
  std::stable_sort(s->begin(), s->end(), [](const CollectiveSignature& a, const CollectiveSignature& b) {
    return std::tie(a.group_key, a.instance_key, a.node) < std::tie(b.group_key, b.instance_key, b.node);
  });
}

uint64_t FingerprintOf(const std::vector<CollectiveSignature>& list) {
  uint64_t h = 14695981039346656037ull;
  auto mix = [&h](std::string_view bytes) {
    for (unsigned char c : bytes) {
      h ^= c;
      h *= 1099511628211ull;
    }
    h ^= 0xff;  // field separator: ("ab", "c") and ("a", "bc") differ
    h *= 1099511628211ull;
  };
  for (const CollectiveSignature& s : list) {
    mix(s.op);
    mix(fmt::format("{}/{}", s.group_key, s.instance_key));
    mix(DTypeName(s.dtype));
    mix(s.shape.ToString());
    mix(s.algorithm);
  }
  return h;
}

std::string EncodeSignatures(const std::vector<CollectiveSignature>& list) {
  ByteWriter w;
  w.Pod<uint32_t>(kVersion);
  w.Pod<uint32_t>(static_cast<uint32_t>(list.size()));
  for (const CollectiveSignature& s : list) {
    w.Str(s.op);
    w.Str(s.node);
    w.Pod<int64_t>(s.group_key);
    w.Pod<int64_t>(s.instance_key);
    w.Pod<uint8_t>(static_cast<uint8_t>(s.dtype));
    w.Shape(s.shape);
    w.Str(s.algorithm);
    w.Str(s.label);
  }
  return std::move(w.out());
}

std::vector<CollectiveSignature> DecodeSignatures(std::string_view bytes, const std::string& from) {
  ByteReader r(bytes, fmt::format("collective fingerprint from {}", from));
  const uint32_t version = r.Pod<uint32_t>("version");
  if (version != kVersion) r.Fail(fmt::format("version {}, expected {}", version, kVersion));
  const uint32_t n = r.Pod<uint32_t>("count");
  if (n > kMaxSignatures) r.Fail(fmt::format("{} collectives (at most {})", n, kMaxSignatures));
  std::vector<CollectiveSignature> list(n);
  for (CollectiveSignature& s : list) {
    s.op = r.Text("op");
    s.node = r.Text("node");
    s.group_key = r.Pod<int64_t>("group key");
    s.instance_key = r.Pod<int64_t>("instance key");
    s.dtype = r.ReadDType("dtype");
    s.shape = r.Shape("shape");
    s.algorithm = r.Text("algorithm");
    s.label = r.Text("label");
  }
  if (r.remaining() != 0) r.Fail(fmt::format("{} bytes after the last collective", r.remaining()));
  return list;
}

std::string DescribeSignature(const CollectiveSignature& s) {
  return fmt::format("{} {} ({})", Verb(s.op), s.label.empty() ? "'" + s.node + "'" : s.label, Details(s));
}

Status CompareSignatures(const std::vector<CollectiveSignature>& reference, const std::string& reference_name,
                         const std::vector<CollectiveSignature>& other, const std::string& other_name) {
  const uint64_t fr = FingerprintOf(reference), fo = FingerprintOf(other);
  if (fr == fo && reference.size() == other.size()) return Status();
  const std::string head = fmt::format(
      "collective fingerprints differ before the step ran ({}: {:#018x}, {} collectives; {}: {:#018x}, {} "
      "collectives): the workers run different programs. ",
      reference_name, fr, reference.size(), other_name, fo, other.size());
  const size_t n = std::min(reference.size(), other.size());
  for (size_t i = 0; i < n; ++i) {
    const CollectiveSignature &a = reference[i], &b = other[i];
    if (SameWork(a, b)) continue;
    const std::string where = fmt::format("collective {} of the step", i + 1);
    // Inside a bucket of several gradients, the first gradient that differs says the most.
    const std::vector<std::string> ia = LabelItems(a.label), ib = LabelItems(b.label);
    if (a.op == b.op && !ia.empty() && !ib.empty() && a.label != b.label) {
      size_t k = 0;
      while (k < ia.size() && k < ib.size() && ia[k] == ib[k]) ++k;
      const std::string sa = k < ia.size() ? ia[k] : "nothing more", sb = k < ib.size() ? ib[k] : "nothing more";
      return errors::FailedPrecondition("{}{} {} {} where {} has {} ({}; {}: {}; {}: {})", head, other_name, Verb(b.op),
                                        sb, reference_name, sa, where, other_name, Details(b), reference_name,
                                        Details(a));
    }
    return errors::FailedPrecondition("{}{} {} where {} {} ({})", head, other_name, DescribeSignature(b), reference_name,
                                      DescribeSignature(a), where);
  }
  // One list is the other's beginning.
  const bool other_longer = other.size() > reference.size();
  const CollectiveSignature& extra = other_longer ? other[n] : reference[n];
  return errors::FailedPrecondition("{}{} {} (collective {} of the step) where {} has no such collective", head,
                                    other_longer ? other_name : reference_name, DescribeSignature(extra), n + 1,
                                    other_longer ? reference_name : other_name);
}

}  // namespace weft
