// Names that arrive from outside and are parsed: device names (graph files, the placer), rendezvous
// keys (every wire message carries one), dtype names and collective group-device lists (attrs of
// loaded graphs). Input: one selector byte, then the text.
#include "core/device_name.h"
#include "core/dtype.h"
#include "runtime/collectives/collective.h"
#include "runtime/rendezvous.h"
#include "../fuzz.h"

namespace weft::fuzz {
namespace {

enum Selector : char { kDevice, kRendezvousKey, kDType, kGroupDevices, kSelectors };

std::vector<std::string> Seeds() {
  const RendezvousKey key{"/job:worker/replica:0/task:1/device:CPU:0", 7, "/job:ps/replica:0/task:0/device:GPU:1",
                          "dense/MatMul:0", 2, 5};
  return {
      Selected(kDevice, "/job:worker/replica:0/task:1/device:CPU:0"),
      Selected(kDevice, "/device:GPU:*"),
      Selected(kDevice, "/task:3"),
      Selected(kRendezvousKey, key.ToString()),
      Selected(kDType, "float32"),
      Selected(kDType, "bfloat16"),
      Selected(kGroupDevices, "/job:worker/replica:0/task:0/device:CPU:0,/job:worker/replica:0/task:1/device:CPU:0"),
  };
}

void Decode(std::string_view in) {
  if (in.empty()) throw Error(errors::InvalidArgument("empty input (no selector byte)"));
  const std::string text(in.substr(1));
  switch (static_cast<unsigned char>(in[0]) % kSelectors) {
    case kDevice: DeviceName::Parse(text).ToString(); break;
    case kRendezvousKey: {
      RendezvousKeyView k;
      const Status s = RendezvousKeyView::Parse(text, &k);
      if (!s.ok()) throw Error(s);
      break;
    }
    case kDType: ParseDType(text); break;
    default: ParseGroupDevices(text, 2, 0, "/job:worker/replica:0/task:0/device:CPU:0", "node 'fuzz'");
  }
}

}  // namespace

WEFT_FUZZ_TARGET(names, {.seeds = Seeds, .decode = Decode});

}  // namespace weft::fuzz
