"""``tf.version``: weft's version strings (weft is not TensorFlow: VERSION is weft's own)."""
VERSION = "0.1.0"
GIT_VERSION = "weft-" + VERSION
COMPILER_VERSION = "gcc"
GRAPH_DEF_VERSION = 1
GRAPH_DEF_VERSION_MIN_CONSUMER = 0
GRAPH_DEF_VERSION_MIN_PRODUCER = 0
