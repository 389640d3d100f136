#include <doctest/doctest.h>

#include "core/device_name.h"
#include "core/status.h"

using namespace weft;

TEST_CASE("full device names parse and print canonically") {
  DeviceName d = DeviceName::Parse("/job:worker/replica:0/task:1/device:CPU:0");
  CHECK(d.IsFullySpecified());
  CHECK(*d.job == "worker");
  CHECK(*d.task == 1);
  CHECK(d.ToString() == "/job:worker/replica:0/task:1/device:CPU:0");
  CHECK(DeviceName::Parse("/cpu:1").ToString() == "/device:CPU:1");
  CHECK(DeviceName::Parse("/device:gpu:0").ToString() == "/device:GPU:0");
  CHECK(DeviceName::Parse("CPU:0").ToString() == "/device:CPU:0");
  CHECK(DeviceName::Parse("/device:CPU:*").ToString() == "/device:CPU:*");
  CHECK(DeviceName::Parse("").empty());
}

TEST_CASE("partial specs match, merge and override") {
  DeviceName d = DeviceName::Parse("/job:worker/replica:0/task:1/device:CPU:0");
  CHECK(d.Matches(DeviceName::Parse("/job:worker")));
  CHECK(d.Matches(DeviceName::Parse("/device:CPU:*")));
  CHECK_FALSE(d.Matches(DeviceName::Parse("/task:0")));
  CHECK_FALSE(d.Matches(DeviceName::Parse("/device:GPU:0")));
  DeviceName m = DeviceName::Parse("/device:CPU:*");
  m.MergeFrom(DeviceName::Parse("/task:1"));
  CHECK(m.ToString() == "/task:1/device:CPU:*");
  CHECK_THROWS_WITH_AS(m.MergeFrom(DeviceName::Parse("/task:2")), doctest::Contains("conflicting task"), Error);
  DeviceName o = DeviceName::Parse("/job:ps/device:CPU:0");
  o.OverrideFrom(DeviceName::Parse("/device:GPU:1"));
  CHECK(o.ToString() == "/job:ps/device:GPU:1");
}

TEST_CASE("bad device names name the bad part") {
  CHECK_THROWS_WITH_AS(DeviceName::Parse("/job:worker/task:x"), doctest::Contains("bad task 'x'"), Error);
  CHECK_THROWS_WITH_AS(DeviceName::Parse("/foo:1"), doctest::Contains("unknown component 'foo'"), Error);
  CHECK_THROWS_WITH_AS(DeviceName::Parse("/job"), doctest::Contains("has no ':'"), Error);
  CHECK_THROWS_AS(DeviceName::Parse("/task:-1"), Error);
}
