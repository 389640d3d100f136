// TensorFlow's control-flow model in a dataflow graph: the static frames of a graph's loops.
//
// A while loop is a frame: its Enter nodes take values from the parent frame into the loop, its
// Exit nodes hand the final values back, and NextIteration carries a value from one iteration to
// the next (the edge NextIteration -> Merge is the loop's back edge; graph order and topological
// sorts ignore it). Switch / Merge make conditionals: Switch forwards its data to one of two
// outputs and leaves the other "dead"; a dead input makes most nodes produce dead outputs without
// running; Merge forwards its first live input. The executor (graph/executor.h) runs these rules
// per frame instance and iteration; this file finds, once per compiled graph, which static frame
// each node belongs to.
//
//   StaticFrames f = FindStaticFrames(graph.nodes());
//   f.frame_of[node->id()];            // 0: the root frame, else an index into f.frames
//   f.frames[1].name;                  // "while/while_context" (the Enter nodes' frame_name)
//
// See docs/control-flow.md.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace weft {

// True for the ops that route values between frames or iterations.
bool IsEnter(const Node& n);
bool IsExit(const Node& n);
bool IsNextIteration(const Node& n);
bool IsMerge(const Node& n);
bool IsSwitch(const Node& n);
// Enter, Exit, NextIteration, Switch, Merge, LoopCond.
bool IsControlFlow(const Node& n);
// True when input i of n refers to a variable's storage (a RefInput: Assign's `ref`). Such an
// edge names the variable rather than carrying a value, so it crosses frames as it is.
bool IsRefInput(const Node& n, int i);

// A frame name no loop of `g` uses yet, nor the name of its nodes' scope: base, base_1, base_2...
// (Two loops that share a frame name would run as one frame.)
std::string UniqueFrameName(const Graph& g, const std::string& base);

struct StaticFrame {
  std::string name;                // "" for the root frame
  int parent = -1;                 // index of the parent frame; -1 for the root
  int64_t parallel_iterations = 1; // from the Enter nodes' attr
  std::vector<Node*> enters;       // the Enter nodes into this frame (they live in the parent)
  std::vector<Node*> exits;        // the Exit nodes out of it (they live in this frame)
};

struct StaticFrames {
  std::vector<StaticFrame> frames;  // [0] is the root frame
  std::map<int, int> frame_of;      // node id -> frame index
  bool has_loops() const { return frames.size() > 1; }
};

// Assigns every node to a frame: a node is in the frame of its inputs (ref inputs aside), except
// that Enter's consumers are in the Enter's child frame and Exit's consumers in the Exit's parent
// frame.
// Throws InvalidArgument naming the node when its inputs come from different frames (a value
// used in a loop without an Enter, or after it without an Exit).
StaticFrames FindStaticFrames(const std::vector<Node*>& nodes);

}  // namespace weft
