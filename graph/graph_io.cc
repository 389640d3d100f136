#include "graph/graph_io.h"

#include "core/byte_io.h"
#include "core/device_name.h"
#include "core/file.h"

#include <fmt/format.h>
#include <zlib.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <fstream>
#include <sstream>

namespace weft {

namespace {

constexpr char kMagic[8] = {'W', 'E', 'F', 'T', 'G', 'R', 'F', '\n'};

using Writer = ByteWriter;
using Reader = ByteReader;

void WriteAttr(Writer& w, const AttrValue& v) {
  w.Pod<uint8_t>(static_cast<uint8_t>(v.index()));
  std::visit(
      [&](const auto& x) {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, bool>) w.Pod<uint8_t>(x);
        else if constexpr (std::is_same_v<X, int64_t>) w.Pod<int64_t>(x);
        else if constexpr (std::is_same_v<X, double>) w.Pod<double>(x);
        else if constexpr (std::is_same_v<X, std::string>) w.Str(x);
        else if constexpr (std::is_same_v<X, DType>) w.Pod<uint8_t>(static_cast<uint8_t>(x));
        else if constexpr (std::is_same_v<X, TensorShape>) w.Shape(x);
        else if constexpr (std::is_same_v<X, std::vector<int64_t>>) {
          w.Pod<uint32_t>(static_cast<uint32_t>(x.size()));
          for (int64_t i : x) w.Pod<int64_t>(i);
        } else if constexpr (std::is_same_v<X, std::vector<double>>) {
          w.Pod<uint32_t>(static_cast<uint32_t>(x.size()));
          for (double d : x) w.Pod<double>(d);
        } else if constexpr (std::is_same_v<X, Tensor>) {
          w.WriteTensor(x);
        }
      },
      v);
}

AttrValue ReadAttr(Reader& r, const std::string& what) {
  const uint8_t tag = r.Pod<uint8_t>(what);
  switch (tag) {
    case 0: return r.Pod<uint8_t>(what) != 0;
    case 1: return r.Pod<int64_t>(what);
    case 2: return r.Pod<double>(what);
    case 3: return r.Text(what);
    case 4: return r.ReadDType(what);
    case 5: return r.Shape(what);
    case 6: {
      const uint32_t n = r.Pod<uint32_t>(what);
      std::vector<int64_t> v;
      for (uint32_t i = 0; i < n; ++i) v.push_back(r.Pod<int64_t>(what));
      return v;
    }
    case 7: {
      const uint32_t n = r.Pod<uint32_t>(what);
      std::vector<double> v;
      for (uint32_t i = 0; i < n; ++i) v.push_back(r.Pod<double>(what));
      return v;
    }
    case 8: return r.ReadTensor(what);
    default: r.Fail(fmt::format("{}: unknown attr tag {}", what, tag));
  }
}

}  // namespace

std::string SerializeGraph(const Graph& g) {
  Writer w;
  w.out().append(kMagic, sizeof(kMagic));
  w.Pod<uint32_t>(kGraphFormatVersion);
  w.Pod<int64_t>(g.seed());
  const std::vector<Node*> order = TopologicalOrder(g.nodes());
  w.Pod<uint32_t>(static_cast<uint32_t>(order.size()));
  for (const Node* n : order) {
    w.Str(n->name());
    w.Str(n->op());
    w.Str(n->requested_device());
    w.Pod<uint32_t>(static_cast<uint32_t>(n->num_inputs()));
    for (const Output& in : n->inputs()) {
      w.Str(in.node->name());
      w.Pod<uint32_t>(static_cast<uint32_t>(in.index));
    }
    w.Pod<uint32_t>(static_cast<uint32_t>(n->control_inputs().size()));
    for (const Node* c : n->control_inputs()) w.Str(c->name());
    w.Pod<uint32_t>(static_cast<uint32_t>(n->attrs().size()));
    for (const auto& [name, value] : n->attrs()) {
      w.Str(name);
      WriteAttr(w, value);
    }
  }
  const uint32_t crc = static_cast<uint32_t>(
      crc32(0L, reinterpret_cast<const Bytef*>(w.out().data()), static_cast<uInt>(w.out().size())));
  w.Pod<uint32_t>(crc);
  return std::move(w.out());
}

std::unique_ptr<Graph> ParseGraph(std::string_view bytes, std::string_view source) {
  Reader r(bytes, fmt::format("graph file '{}'", source));
  const char* magic = r.Bytes(sizeof(kMagic), "magic");
  if (std::memcmp(magic, kMagic, sizeof(kMagic)) != 0) r.Fail("not a weft graph file (bad magic)");
  const uint32_t version = r.Pod<uint32_t>("version");
  if (version != kGraphFormatVersion) {
    r.Fail(fmt::format("format version {} is not supported (this build reads version {})", version, kGraphFormatVersion));
  }
  if (bytes.size() < sizeof(kMagic) + 8) r.Fail("truncated");
  const std::string_view body = bytes.substr(0, bytes.size() - 4);
  uint32_t stored;
  std::memcpy(&stored, bytes.data() + bytes.size() - 4, 4);
  const uint32_t crc = static_cast<uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(body.size())));
  if (crc != stored) {
    throw Error(errors::DataLoss("graph file '{}': checksum mismatch (file damaged or truncated)", source));
  }
  Reader br(body, fmt::format("graph file '{}'", source));
  br.Bytes(sizeof(kMagic) + 4, "header");
  auto g = std::make_unique<Graph>();
  g->set_seed(br.Pod<int64_t>("seed"));
  const uint32_t count = br.Pod<uint32_t>("node count");
  // A while loop's Merge comes before the NextIteration feeding it (its back edge): that input
  // is set once every node is read.
  struct BackEdge {
    std::string merge, src, what;
    int input;
    int index;
  };
  std::vector<BackEdge> back_edges;
  for (uint32_t k = 0; k < count; ++k) {
    NodeSpec spec;
    spec.name = br.Text("node name");
    const std::string what = fmt::format("node '{}'", spec.name);
    spec.op = br.Text(what);
    spec.device = br.Text(what);
    const uint32_t n_in = br.Pod<uint32_t>(what);
    for (uint32_t i = 0; i < n_in; ++i) {
      const std::string src = br.Text(what);
      const uint32_t index = br.Pod<uint32_t>(what);
      Node* s = g->FindNode(src);
      if (s == nullptr && spec.op == "Merge" && i > 0) {
        back_edges.push_back({spec.name, src, what, static_cast<int>(i), static_cast<int>(index)});
        spec.inputs.push_back(spec.inputs[0]);  // a stand-in of the same dtype
        continue;
      }
      if (s == nullptr) br.Fail(fmt::format("{}: input {} names unknown node '{}' (or the graph has a cycle)", what, i, src));
      if (static_cast<int>(index) >= s->num_outputs()) br.Fail(fmt::format("{}: input {} is {}:{}, which does not exist", what, i, src, index));
      spec.inputs.emplace_back(s, static_cast<int>(index));
    }
    const uint32_t n_ctrl = br.Pod<uint32_t>(what);
    for (uint32_t i = 0; i < n_ctrl; ++i) {
      const std::string src = br.Text(what);
      Node* s = g->FindNode(src);
      if (s == nullptr) br.Fail(fmt::format("{}: control input names unknown node '{}'", what, src));
      spec.control_inputs.push_back(s);
    }
    const uint32_t n_attr = br.Pod<uint32_t>(what);
    for (uint32_t i = 0; i < n_attr; ++i) {
      std::string name = br.Text(what);
      spec.attrs[name] = ReadAttr(br, fmt::format("{} attr '{}'", what, name));
    }
    g->AddNode(std::move(spec));  // validates op, attrs, types and shapes
  }
  if (br.pos() != body.size()) br.Fail("trailing bytes after the last node");
  for (const BackEdge& e : back_edges) {
    Node* s = g->FindNode(e.src);
    if (s == nullptr || s->op() != "NextIteration" || e.index >= s->num_outputs()) {
      br.Fail(fmt::format("{}: input {} names '{}:{}', which is not a NextIteration of the graph", e.what, e.input,
                          e.src, e.index));
    }
    g->UpdateInput(g->FindNode(e.merge), e.input, Output(s, e.index));  // checks the dtype
  }
  return g;
}

void SaveGraph(const Graph& g, const std::string& path) {
  const std::string bytes = SerializeGraph(g);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw Error(errors::NotFound("cannot write graph file '{}'", tmp));
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!f) throw Error(errors::DataLoss("writing graph file '{}' failed", tmp));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    throw Error(errors::Internal("cannot rename '{}' to '{}'", tmp, path));
  }
}

std::unique_ptr<Graph> LoadGraph(const std::string& path) {
  return ParseGraph(ReadRegularFile(path, "graph file"), path);
}

namespace {
std::string DotEscape(std::string_view s) {
  std::string r;
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\';
    r += c;
  }
  return r;
}
}  // namespace

std::string ToDot(const Graph& g) {
  std::string out = "digraph weft {\n  rankdir=TB;\n  node [shape=box, style=rounded, fontname=\"Helvetica\"];\n";
  for (const Node* n : g.nodes()) {
    std::string label = DotEscape(n->name()) + "\\n" + DotEscape(n->op());
    const std::string& dev = n->assigned_device().empty() ? n->requested_device() : n->assigned_device();
    if (!dev.empty()) label += "\\n" + DotEscape(dev);
    out += fmt::format("  n{} [label=\"{}\"];\n", n->id(), label);
  }
  for (const Node* n : g.nodes()) {
    for (const Output& in : n->inputs()) {
      out += fmt::format("  n{} -> n{} [label=\"{}{}\"];\n", in.node->id(), n->id(), DTypeName(in.dtype()),
                         in.shape().ToString());
    }
    for (const Node* c : n->control_inputs()) out += fmt::format("  n{} -> n{} [style=dashed];\n", c->id(), n->id());
  }
  return out + "}\n";
}

namespace {

// "/job:localhost/replica:0/task:0/device:CPU:1" -> "CPU:1" (keeps the task when it is not 0).
std::string ShortDeviceName(const std::string& full) {
  const DeviceName d = DeviceName::Parse(full);
  std::string s = d.type && d.id ? fmt::format("{}:{}", *d.type, *d.id) : full;
  if (d.task && *d.task != 0) s = fmt::format("{}/task:{}/{}", d.job.value_or("?"), *d.task, s);
  return s;
}

}  // namespace

std::string PartitionsToDot(const std::vector<std::pair<std::string, const Graph*>>& parts) {
  std::string out = "digraph weft {\n  rankdir=TB;\n  compound=true;\n"
                    "  node [shape=box, style=rounded, fontname=\"Helvetica\"];\n";
  std::map<std::string, std::string> send_by_key;  // key -> node id
  std::vector<std::pair<std::string, std::string>> recvs;  // (key, node id)
  for (size_t p = 0; p < parts.size(); ++p) {
    const auto& [device, g] = parts[p];
    out += fmt::format("  subgraph cluster_{} {{\n    label=\"{}\";\n    style=filled;\n    color=\"#eef2f8\";\n", p,
                       DotEscape(ShortDeviceName(device)));
    for (const Node* n : g->nodes()) {
      const std::string id = fmt::format("p{}n{}", p, n->id());
      const bool pair_end = n->op() == "_Send" || n->op() == "_Recv";
      out += fmt::format("    {} [label=\"{}\\n{}\"{}];\n", id, DotEscape(n->name()), DotEscape(n->op()),
                         pair_end ? ", shape=cds, style=filled, fillcolor=\"#ffe6b3\"" : "");
      if (pair_end) {
        const std::string key = fmt::format("{};{};{}", ShortDeviceName(n->attr<std::string>("send_device")),
                                            ShortDeviceName(n->attr<std::string>("recv_device")),
                                            n->attr<std::string>("tensor_name"));
        if (n->op() == "_Send") {
          send_by_key[key] = id;
        } else {
          recvs.emplace_back(key, id);
        }
      }
    }
    for (const Node* n : g->nodes()) {
      for (const Output& in : n->inputs()) {
        out += fmt::format("    p{}n{} -> p{}n{} [label=\"{}{}\"];\n", p, in.node->id(), p, n->id(),
                           DTypeName(in.dtype()), in.shape().ToString());
      }
      for (const Node* c : n->control_inputs()) {
        out += fmt::format("    p{}n{} -> p{}n{} [style=dashed];\n", p, c->id(), p, n->id());
      }
    }
    out += "  }\n";
  }
  for (const auto& [key, recv] : recvs) {
    auto it = send_by_key.find(key);
    if (it == send_by_key.end()) continue;  // the sender lives in another process
    out += fmt::format("  {} -> {} [style=\"dashed,bold\", color=\"#c05000\", label=\"{}\"];\n", it->second, recv,
                       DotEscape(key));
  }
  return out + "}\n";
}

}  // namespace weft
