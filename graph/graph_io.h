// Graph files and pictures.
//
//   SaveGraph(g, "model.weftgraph");                 // versioned binary file, see docs/graph-format.md
//   std::unique_ptr<Graph> h = LoadGraph("model.weftgraph");   // validated as it is rebuilt
//   std::string dot = ToDot(g);                      // Graphviz; `dot -Tpng` draws it
//
// Loading re-adds every node through Graph::AddNode, so a file that names an unknown op, has a
// bad attr or inconsistent shapes is rejected with the node's name; a damaged file (bad magic,
// newer version, truncation, checksum mismatch) is a DataLoss error naming the file.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "graph/graph.h"

namespace weft {

inline constexpr uint32_t kGraphFormatVersion = 1;

std::string SerializeGraph(const Graph& g);
std::unique_ptr<Graph> ParseGraph(std::string_view bytes, std::string_view source = "<memory>");
void SaveGraph(const Graph& g, const std::string& path);
std::unique_ptr<Graph> LoadGraph(const std::string& path);

// One box per node ("name\nOp"), data edges labelled with dtype and shape, control edges dashed.
std::string ToDot(const Graph& g);
// A partitioned graph (Session::Partitions): one cluster per device; each _Send/_Recv pair is a
// bold dashed edge between the clusters labelled with its rendezvous key (device names shortened
// to "CPU:1").
std::string PartitionsToDot(const std::vector<std::pair<std::string, const Graph*>>& parts);

}  // namespace weft
