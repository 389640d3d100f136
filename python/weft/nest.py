"""``tf.nest``: nested structures of lists, tuples (named or not) and dicts, whose leaves are
anything else (tensors, arrays, numbers, None). As TensorFlow's nest, dict leaves come in sorted
key order, and packing keeps each container's type (a dict keeps its own key order)::

    tf.nest.flatten({"b": 2, "a": [1, (3,)]})                  # [1, 3, 2]
    tf.nest.map_structure(lambda x: x * 2, (1, [2]))          # (2, [4])
    tf.nest.pack_sequence_as({"a": 0, "b": 0}, [5, 6])        # {"a": 5, "b": 6}

control_flow_ops (cond / while_loop structures) and functional_ops (map_fn, scan) use these.
"""
__all__ = ["is_nested", "flatten", "pack_sequence_as", "map_structure", "assert_same_structure"]


def is_nested(x):
    """True for a list, tuple or dict (a structure), False for a leaf."""
    return isinstance(x, (list, tuple, dict))


def _items(s):
    return [s[k] for k in sorted(s)] if isinstance(s, dict) else list(s)


def flatten(structure, expand_composites=False):
    """The leaves of ``structure`` in order (a leaf alone gives ``[leaf]``)."""
    if not is_nested(structure):
        return [structure]
    return [leaf for v in _items(structure) for leaf in flatten(v)]


def pack_sequence_as(structure, flat_sequence, expand_composites=False):
    """``structure``'s shape over the leaves of ``flat_sequence``; ValueError naming both counts
    when they differ."""
    flat_sequence = list(flat_sequence)
    want = len(flatten(structure))
    if want != len(flat_sequence):
        raise ValueError("pack_sequence_as: the structure has %d leaves but %d values were given"
                         % (want, len(flat_sequence)))
    it = iter(flat_sequence)

    def build(t):
        if not is_nested(t):
            return next(it)
        if isinstance(t, dict):
            vals = {k: build(t[k]) for k in sorted(t)}
            return type(t)((k, vals[k]) for k in t)
        if isinstance(t, tuple) and hasattr(t, "_fields"):
            return type(t)(*[build(v) for v in t])
        return type(t)(build(v) for v in t)
    return build(structure)


def _describe(s):
    if not is_nested(s):
        return type(s).__name__
    if isinstance(s, dict):
        return "{%s}" % ", ".join("%r: %s" % (k, _describe(s[k])) for k in sorted(s))
    inner = ", ".join(_describe(v) for v in s)
    return "[%s]" % inner if isinstance(s, list) else "(%s)" % inner


def same_structure(a, b, check_types=True):
    """True when ``a`` and ``b`` nest alike (dicts with the same keys; with ``check_types``, the
    same container types, lists and tuples told apart)."""
    if not is_nested(a) or not is_nested(b):
        return not is_nested(a) and not is_nested(b)
    if isinstance(a, dict) or isinstance(b, dict):
        return isinstance(a, dict) and isinstance(b, dict) and set(a) == set(b) and all(
            same_structure(a[k], b[k], check_types) for k in a)
    if check_types and type(a) is not type(b):
        return False
    return len(a) == len(b) and all(same_structure(x, y, check_types) for x, y in zip(a, b))


def assert_same_structure(nest1, nest2, check_types=True, expand_composites=False):
    """ValueError (TypeError for container types with ``check_types``) naming both structures
    when they differ."""
    if same_structure(nest1, nest2, check_types=False):
        if check_types and not same_structure(nest1, nest2, True):
            raise TypeError("The two structures don't have the same sequence type: %s and %s"
                            % (_describe(nest1), _describe(nest2)))
        return
    raise ValueError("The two structures don't have the same nested structure: %s and %s"
                     % (_describe(nest1), _describe(nest2)))


def map_structure(func, *structure, check_types=True, expand_composites=False):
    """``func`` applied to the leaves of one or more structures of the same shape, packed as the
    first; ValueError naming them when they nest differently."""
    if not structure:
        raise ValueError("map_structure needs at least one structure")
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types=check_types)
    flats = [flatten(s) for s in structure]
    return pack_sequence_as(structure[0], [func(*leaves) for leaves in zip(*flats)])
