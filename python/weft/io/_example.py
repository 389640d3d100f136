"""tf.train.Example and its parts (example.proto, feature.proto), encoded and decoded here in
the protocol buffer wire format, with no protobuf dependency.

    ex = tf.train.Example(features=tf.train.Features(feature={
        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[3])),
        "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[png_bytes])),
        "score": tf.train.Feature(float_list=tf.train.FloatList(value=[0.5, 1.5]))}))
    data = ex.SerializeToString()
    tf.train.Example.FromString(data).features.feature["label"].int64_list.value   # [3]

Field numbers: Example.features = 1; Features.feature = 1 (a map: entries of key = 1, value = 2);
Feature.bytes_list = 1, float_list = 2, int64_list = 3 (a oneof); BytesList/FloatList/Int64List
.value = 1 (floats and int64s packed, as proto3 writes them). Map entries are written in sorted
key order (protobuf leaves the order open; TF's parsers take any).
"""
import numpy as np

from .. import _events
from . import _wire


class _Message:
    @classmethod
    def FromString(cls, data):
        out = cls()
        out.ParseFromString(data)
        return out


class _List(_Message):
    """BytesList / FloatList / Int64List: ``value`` is a Python list."""
    _kind = None

    def __init__(self, value=()):
        self.value = [self._item(v) for v in value]

    def __eq__(self, other):
        return type(other) is type(self) and other.value == self.value

    def __repr__(self):
        return "%s(value=%r)" % (type(self).__name__, self.value)

    def SerializeToString(self):
        return self._encode()

    def ParseFromString(self, data):
        self.value = self._decode(data)
        return len(data)


class BytesList(_List):
    @staticmethod
    def _item(v):
        if isinstance(v, str):
            return v.encode("utf-8")
        if isinstance(v, (bytes, bytearray, np.bytes_)):
            return bytes(v)
        raise TypeError("BytesList: %r has type %s, but expected one of: bytes" % (v, type(v).__name__))

    def _encode(self):
        return b"".join(_events.field_bytes(1, v) for v in self.value)

    def _decode(self, data):
        return [v for f, _, v in _wire.fields(data, "BytesList") if f == 1]


class FloatList(_List):
    @staticmethod
    def _item(v):
        if isinstance(v, (str, bytes)):
            raise TypeError("FloatList: %r has type %s, but expected one of: int, float" % (v, type(v).__name__))
        return float(np.float32(v))  # a proto float is 32 bits, as protobuf's Python gives it back

    def _encode(self):
        if not self.value:
            return b""
        return _events.field_bytes(1, np.asarray(self.value, "<f4").tobytes())

    def _decode(self, data):
        out = []
        for f, wire, v in _wire.fields(data, "FloatList"):
            if f == 1:
                out.extend(np.frombuffer(v, "<f4").tolist())  # packed, or one fixed32 (wire 5): 4 bytes either way
        return out


class Int64List(_List):
    @staticmethod
    def _item(v):
        if not isinstance(v, (int, np.integer)):
            raise TypeError("Int64List: %r has type %s, but expected one of: int" % (v, type(v).__name__))
        v = int(v)
        if not -2 ** 63 <= v < 2 ** 63:
            raise ValueError("Int64List: value out of range: %d" % v)
        return v

    def _encode(self):
        if not self.value:
            return b""
        return _events.field_bytes(1, b"".join(_events._varint(v) for v in self.value))

    def _decode(self, data):
        out = []
        for f, wire, v in _wire.fields(data, "Int64List"):
            if f == 1:
                out.extend(_wire.packed_varints(v, "Int64List") if wire == _wire.BYTES else [_wire.signed64(v)])
        return out


_KINDS = (("bytes_list", 1, BytesList), ("float_list", 2, FloatList), ("int64_list", 3, Int64List))


class Feature:
    """One of ``bytes_list``, ``float_list``, ``int64_list`` (``WhichOneof("kind")`` says which)."""

    def __init__(self, bytes_list=None, float_list=None, int64_list=None):
        given = [(n, v) for n, v in (("bytes_list", bytes_list), ("float_list", float_list),
                                     ("int64_list", int64_list)) if v is not None]
        if len(given) > 1:
            raise ValueError("Feature: give one of bytes_list, float_list, int64_list, got %s" % [n for n, _ in given])
        self._kind, self._list = given[0] if given else (None, None)

    def WhichOneof(self, group):
        if group != "kind":
            raise ValueError("Feature has no oneof %r (it has 'kind')" % group)
        return self._kind

    def HasField(self, name):
        return self._kind == name

    def __getattr__(self, name):
        for kind, _, cls in _KINDS:
            if name == kind:
                return self._list if self._kind == kind else cls()
        raise AttributeError(name)

    def __eq__(self, other):
        return isinstance(other, Feature) and (self._kind, self._list) == (other._kind, other._list)

    def __repr__(self):
        return "Feature(%s=%r)" % (self._kind, self._list) if self._kind else "Feature()"

    def SerializeToString(self):
        if self._kind is None:
            return b""
        number = next(n for kind, n, _ in _KINDS if kind == self._kind)
        return _events.field_bytes(number, self._list.SerializeToString())

    @classmethod
    def FromString(cls, data):
        kind, payload = _raw_feature(data)
        return cls(**{kind: _LIST[kind].FromString(payload)}) if kind else cls()


class Features:
    """``feature``: a dict from name to Feature."""

    def __init__(self, feature=None):
        self.feature = dict(feature or {})
        for k, v in self.feature.items():
            if not isinstance(k, str) or not isinstance(v, Feature):
                raise TypeError("Features: feature must map str to tf.train.Feature, got %r: %r" % (k, v))

    def __eq__(self, other):
        return isinstance(other, Features) and other.feature == self.feature

    def __repr__(self):
        return "Features(feature=%r)" % (self.feature,)

    def SerializeToString(self):
        return b"".join(_events.field_bytes(1, _events.field_bytes(1, k) + _events.field_bytes(
            2, self.feature[k].SerializeToString())) for k in sorted(self.feature))

    @classmethod
    def FromString(cls, data):
        return cls({k: Feature(**{kind: _LIST[kind].FromString(payload)}) if kind else Feature()
                    for k, (kind, payload) in raw_features(data, "Features").items()})


_LIST = {kind: cls for kind, _, cls in _KINDS}


def raw_features(data, what="Example"):
    """{name: (kind or None, the list message's bytes)} of a serialized Features message: the
    lists left encoded, so parse_example decodes only the features it asks for."""
    out = {}
    for f, _, entry in _wire.fields(data, what):
        if f != 1:
            continue
        key, value = b"", b""
        for ef, _, ev in _wire.fields(entry, "Features.feature entry"):
            if ef == 1:
                key = ev
            elif ef == 2:
                value = ev
        out[key.decode("utf-8")] = _raw_feature(value)
    return out


def _raw_feature(data):
    """(kind or None, the list message's bytes) of a serialized Feature."""
    kind, payload = None, b""
    for f, _, v in _wire.fields(data, "Feature"):
        if 1 <= f <= 3:  # the last one wins, as protobuf's oneof
            kind, payload = _KINDS[f - 1][0], v
    return kind, payload


def raw_example(data):
    """raw_features of a serialized Example (its Features messages merged, as protobuf does)."""
    out = {}
    for f, _, v in _wire.fields(data, "Example"):
        if f == 1:
            out.update(raw_features(v))
    return out


class Example(_Message):
    """tf.train.Example: ``features`` (a Features)."""

    def __init__(self, features=None):
        self.features = features if features is not None else Features()
        if not isinstance(self.features, Features):
            raise TypeError("Example: features must be a tf.train.Features, got %r" % (features,))

    def __eq__(self, other):
        return isinstance(other, Example) and other.features == self.features

    def __repr__(self):
        return "Example(features=%r)" % (self.features,)

    def SerializeToString(self, deterministic=None):
        return _events.field_bytes(1, self.features.SerializeToString())

    def ByteSize(self):
        return len(self.SerializeToString())

    def ParseFromString(self, data):
        data = bytes(data.numpy() if hasattr(data, "numpy") else data)
        self.features = Features({k: Feature(**{kind: _LIST[kind].FromString(payload)}) if kind else Feature()
                                  for k, (kind, payload) in raw_example(data).items()})
        return len(data)
