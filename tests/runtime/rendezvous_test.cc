// The local rendezvous: both orders of Send and Recv, abort of pending and later Recvs,
// misuse, and the key format.
#include <doctest/doctest.h>

#include <thread>

#include "runtime/rendezvous.h"

using namespace weft;

TEST_CASE("rendezvous: send then recv, recv then send, from other threads") {
  LocalRendezvous r;
  Tensor a = Tensor::Scalar<float>(1.5f);
  CHECK(r.Send("k1", {}, a, false).ok());
  float got = 0;
  r.RecvAsync("k1", {}, [&](const Status& s, const Tensor& t, bool dead) {
    CHECK(s.ok());
    CHECK(!dead);
    CHECK(t.buffer() == a.buffer());  // handed over, not copied
    got = t.scalar<float>()();
  });
  CHECK(got == 1.5f);
  std::atomic<int> done{0};
  r.RecvAsync("k2", {}, [&](const Status& s, const Tensor& t, bool) {
    CHECK(s.ok());
    CHECK(t.scalar<int32_t>()() == 7);
    done = 1;
  });
  CHECK(done == 0);
  CHECK(r.num_pending() == 1);
  std::thread sender([&] { CHECK(r.Send("k2", {}, Tensor::Scalar<int32_t>(7), false).ok()); });
  sender.join();
  CHECK(done == 1);
  CHECK(r.num_pending() == 0);
}

TEST_CASE("rendezvous: abort completes pending and later receives with the status") {
  LocalRendezvous r;
  Status pending_status, later_status;
  r.RecvAsync("a", {}, [&](const Status& s, const Tensor&, bool) { pending_status = s; });
  r.StartAbort(errors::Internal("device CPU:1 failed: node 'x'"));
  CHECK(pending_status.code() == Code::kInternal);
  CHECK(pending_status.message().find("node 'x'") != std::string::npos);
  r.RecvAsync("b", {}, [&](const Status& s, const Tensor&, bool) { later_status = s; });
  CHECK(later_status.code() == Code::kInternal);
  CHECK(r.Send("c", {}, Tensor::Scalar<float>(1), false).code() == Code::kInternal);
  r.StartAbort(errors::Cancelled("second"));  // the first status wins
  r.RecvAsync("d", {}, [&](const Status& s, const Tensor&, bool) { later_status = s; });
  CHECK(later_status.code() == Code::kInternal);
}

TEST_CASE("rendezvous: a key sent twice is an error; a destroyed rendezvous completes its waiters") {
  LocalRendezvous r;
  CHECK(r.Send("k", {}, Tensor::Scalar<float>(1), false).ok());
  CHECK(r.Send("k", {}, Tensor::Scalar<float>(2), false).code() == Code::kAlreadyExists);
  Status s;
  {
    LocalRendezvous r2;
    r2.RecvAsync("never", {}, [&](const Status& st, const Tensor&, bool) { s = st; });
  }
  CHECK(s.code() == Code::kAborted);
}

TEST_CASE("rendezvous keys: format, round trip and bad keys") {
  RendezvousKey k;
  k.src_device = "/job:localhost/replica:0/task:0/device:CPU:0";
  k.src_incarnation = 0xabc;
  k.dst_device = "/job:localhost/replica:0/task:0/device:CPU:1";
  k.tensor_name = "dense/MatMul:0";
  const std::string s = k.ToString();
  CHECK(s == "/job:localhost/replica:0/task:0/device:CPU:0;abc;/job:localhost/replica:0/task:0/device:CPU:1;"
             "dense/MatMul:0;0:0");
  k.frame_id = 2;
  k.iter_id = 31;
  const std::string s2 = k.ToString();
  RendezvousKeyView v;
  REQUIRE(RendezvousKeyView::Parse(s2, &v).ok());
  CHECK(v.src_device == k.src_device);
  CHECK(v.src_incarnation == 0xabc);
  CHECK(v.dst_device == k.dst_device);
  CHECK(v.tensor_name == "dense/MatMul:0");
  CHECK(v.frame_id == 2);
  CHECK(v.iter_id == 31);
  // Views into the key, not copies (the per-message path allocates nothing).
  CHECK(v.tensor_name.data() >= s2.data());
  CHECK(v.tensor_name.data() + v.tensor_name.size() <= s2.data() + s2.size());
  RendezvousKey back{std::string(v.src_device), v.src_incarnation, std::string(v.dst_device),
                     std::string(v.tensor_name), v.frame_id, v.iter_id};
  CHECK(back.ToString() == s2);
  auto error = [](std::string_view key) {
    RendezvousKeyView out;
    const Status st = RendezvousKeyView::Parse(key, &out);
    CHECK(st.code() == Code::kInvalidArgument);
    return st.message();
  };
  CHECK(error("a;b;c").find("5 parts") != std::string::npos);
  CHECK(error("a;1;c;t;0:0;x").find("5 parts") != std::string::npos);
  CHECK(error("a;zz;c;t:0;0:0").find("incarnation") != std::string::npos);
  CHECK(error("a;1;c;t:0;x").find("frame:iter") != std::string::npos);
  CHECK(error("a;1;c;t:0;0:").find("frame:iter") != std::string::npos);
  CHECK(error("a;1;;t:0;0:0").find("a part is empty") != std::string::npos);
  CHECK(error("x;1;c;t:0;y").find("'x;1;c;t:0;y'") != std::string::npos);  // names the key
}
