// NodeCache (core/node_cache.h): entries come and go without allocating once spare nodes exist,
// and the container behaves as with try_emplace / erase. Runs under ASan (suite core): a reused
// node's key and value are assigned in place.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>

#include "core/node_cache.h"

using weft::NodeCache;

TEST_CASE("NodeCache: a map's erased node is reused, its key and value replaced") {
  using Map = std::map<std::string, int>;
  Map m;
  NodeCache<Map> cache(2);
  const std::string long_key(120, 'k');  // longer than the small-string buffer, as rendezvous keys are
  auto [a, inserted] = cache.TryEmplace(m, long_key + "a");
  CHECK(inserted);
  CHECK(a->second == 0);
  a->second = 7;
  auto [again, inserted_again] = cache.TryEmplace(m, long_key + "a");
  CHECK_FALSE(inserted_again);
  CHECK(again == a);
  CHECK(again->second == 7);
  const char* storage = a->first.data();
  cache.Erase(m, a);
  CHECK(m.empty());
  CHECK(cache.num_spare() == 1);
  auto [b, inserted_b] = cache.TryEmplace(m, long_key + "b");
  CHECK(inserted_b);
  CHECK(b->first == long_key + "b");
  CHECK(b->second == 0);  // a fresh value, not the old 7
  CHECK(b->first.data() == storage);  // the key's buffer was reused
  CHECK(cache.num_spare() == 0);
  // Order is kept whichever way an entry came.
  cache.TryEmplace(m, std::string("a"));
  cache.TryEmplace(m, std::string("z"));
  std::string order;
  for (const auto& [k, v] : m) order += k.substr(0, 1);
  CHECK(order == "akz");
}

TEST_CASE("NodeCache: at most max_spare nodes are kept; a set's nodes are reused too") {
  using Map = std::map<int, std::string>;
  Map m;
  NodeCache<Map> cache(2);
  for (int i = 0; i < 5; ++i) cache.TryEmplace(m, i).first->second = std::string(100, static_cast<char>('a' + i));
  while (!m.empty()) cache.Erase(m, m.begin());
  CHECK(cache.num_spare() == 2);
  auto [it, inserted] = cache.TryEmplace(m, 42);
  CHECK(inserted);
  CHECK(it->second.empty());  // the mapped value is reset, not the erased entry's

  std::set<unsigned long> s;
  NodeCache<std::set<unsigned long>> steps(1);
  for (unsigned long step = 1; step <= 100; ++step) {  // a bounded window of recent steps
    steps.TryEmplace(s, step);
    while (s.size() > 3) steps.Erase(s, s.begin());
  }
  CHECK(s == std::set<unsigned long>{98, 99, 100});
  CHECK_FALSE(steps.TryEmplace(s, 99ul).second);
}
