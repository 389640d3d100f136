// Spare nodes of a std::map or std::set, so that a container whose entries come and go (the keys
// of a rendezvous, the steps of a rendezvous manager) inserts without allocating in the steady
// state: an erased entry's node is kept (std::map::extract) and the next insert reuses it, its
// key assigned in place (a std::string key keeps its capacity).
//
//   std::map<std::string, int> m;
//   NodeCache<std::map<std::string, int>> cache(/*max_spare=*/8);
//   auto [it, inserted] = cache.TryEmplace(m, "key");   // a spare node when there is one
//   cache.Erase(m, it);                                   // kept for the next TryEmplace
//
// Not thread-safe: guard it with the container's own lock.
#pragma once

#include <cstddef>
#include <tuple>
#include <utility>
#include <vector>

namespace weft {

template <typename Container>
class NodeCache {
 public:
  using Node = typename Container::node_type;
  using Iterator = typename Container::iterator;

  explicit NodeCache(size_t max_spare) : max_spare_(max_spare) { spare_.reserve(max_spare); }

  // Like try_emplace(key) (std::set: insert(key)): the entry of `key` and whether it is new (its
  // mapped value then default-constructed).
  template <typename Key>
  std::pair<Iterator, bool> TryEmplace(Container& c, const Key& key) {
    auto hint = c.lower_bound(key);
    if (hint != c.end() && !(c.key_comp()(key, KeyOf(*hint)))) return {hint, false};
    if (spare_.empty()) {
      if constexpr (kIsMap) {
        return {c.emplace_hint(hint, std::piecewise_construct, std::forward_as_tuple(key), std::forward_as_tuple()),
                true};
      } else {
        return {c.emplace_hint(hint, key), true};
      }
    }
    Node node = std::move(spare_.back());
    spare_.pop_back();
    Fill(node, key);
    return {c.insert(hint, std::move(node)), true};
  }

  // Erases the entry at `it`, keeping its node when fewer than max_spare are kept.
  void Erase(Container& c, Iterator it) {
    if (spare_.size() < max_spare_) {
      spare_.push_back(c.extract(it));
    } else {
      c.erase(it);
    }
  }

  size_t num_spare() const { return spare_.size(); }

 private:
  static constexpr bool kIsMap = requires { typename Container::mapped_type; };

  template <typename Value>
  static const auto& KeyOf(const Value& v) {
    if constexpr (kIsMap) {
      return v.first;
    } else {
      return v;
    }
  }
  template <typename Key>
  static void Fill(Node& node, const Key& key) {
    if constexpr (kIsMap) {
      node.key() = key;
      node.mapped() = typename Container::mapped_type();
    } else {
      node.value() = key;
    }
  }

  size_t max_spare_;
  std::vector<Node> spare_;
};

}  // namespace weft
