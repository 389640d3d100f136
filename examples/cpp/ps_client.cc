// A client driving a graph whose variable lives on a parameter-server task, over UCX.
//
//   export CLUSTER='worker=127.0.0.1:10090;ps=127.0.0.1:10091'
//   build/zoo/weft-zoo server --cluster "$CLUSTER" --task ps:0 &      # the ps task's server
//   build/examples/cpp/ps_client --cluster "$CLUSTER" --task worker:0  # or TF_CONFIG, no flags
//
// Linear regression y = x w fitted by gradient descent: w and its update run on ps:0, the
// forward and backward pass here (worker:0); the Send/Recv pairs between them go over UCX.
#include <cstdio>
#include <cstring>

#include "distributed/distributed_session.h"
#include "graph/gradients.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "ops/state.h"

using namespace weft;

int main(int argc, char** argv) {
  try {
    std::string cluster, task;
    for (int i = 1; i + 1 < argc; i += 2) {
      if (std::strcmp(argv[i], "--cluster") == 0) cluster = argv[i + 1];
      if (std::strcmp(argv[i], "--task") == 0) task = argv[i + 1];
    }
    const ClusterConfig config = cluster.empty() ? ClusterConfig::FromEnvironment() : ClusterConfig::FromFlags(cluster, task);
    Server server(config);  // this task's server: it runs this task's partitions
    Graph g;
    Scope s = Scope::Root(&g);
    Scope ps = s.WithDevice("/job:ps/task:0");
    Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat32, {4, 2});
    Output y = ops::Placeholder(s.WithOpName("y"), DType::kFloat32, {4, 1});
    Output w = ops::Variable(ps.WithOpName("w"), {2, 1}, DType::kFloat32);
    Node* init = ops::Assign(ps, w, ops::Const<float>(s, {0, 0}, {2, 1})).node;
    Output err = ops::Sub(s, ops::MatMul(s, x, w), y);
    Output loss = ops::Sum(s, ops::Mul(s, err, err));
    Output dw = Gradients(s, {loss}, {w})[0];
    Node* train = ops::AssignSub(ps, w, ops::Mul(ps, dw, ops::Const(s, 0.05f))).node;

    DistributedSession sess(&g, &server);
    const Tensor xv = Tensor::FromVector<float>({1, 0, 0, 1, 1, 1, 2, 1}, {4, 2});
    const Tensor yv = Tensor::FromVector<float>({2, -1, 1, 3}, {4, 1});  // w = [2, -1]
    sess.Run({}, {}, {init});
    for (int step = 0; step < 200; ++step) {
      auto out = sess.Run({{x, xv}, {y, yv}}, {loss}, {train});
      if (step % 50 == 0) std::printf("step %3d  loss %.6f\n", step, out[0].scalar<float>()());
    }
    auto wv = sess.Run({}, {w});
    std::printf("w = [%.4f, %.4f] (on %s)\n", wv[0].flat<float>()(0), wv[0].flat<float>()(1), "ps:0");
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "ps_client: %s\n", e.what());
    return 1;
  }
}
