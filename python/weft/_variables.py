"""Every variable of a graph, as TF1's collections see them (GLOBAL_VARIABLES, TRAINABLE_VARIABLES).

A weft.Graph holds its Python Variable objects weakly (a strong reference would make a cycle
through the C++ handle that Python's collector cannot see), so variables made by library code that
keeps no reference (``get_variable``, ``layers.dense``, optimizer slots, the global step) are
recorded here by name and trainability, and rebuilt as Variable objects over the same graph node
when asked for. Variables made with ``weft.Variable`` directly are found through the graph's
initializer list; their trainability is known while the Python object lives (else: trainable).
"""
from .framework import Variable, Tensor


def _registry(g):
    reg = getattr(g, "_tf1_variables", None)
    if reg is None:
        reg = {}
        g._tf1_variables = reg
    return reg


def register(var, trainable):
    """Records ``var`` (made by library code) under its node name."""
    _registry(var.graph)[var.op.name] = bool(trainable)


def _locals(g):
    return g.__dict__.setdefault("_tf1_local_variables", [])


def register_local(var):
    """Records ``var`` as a local variable (TF1's LOCAL_VARIABLES: metric accumulators): not in
    all_variables (so not checkpointed), initialized by local_variables_initializer."""
    register(var, trainable=False)
    _locals(var.graph).append(var.op.name)


def local_variables(g):
    """The local variables of ``g`` in creation order."""
    return [view(g, name) for name in _locals(g)]


def view(g, name):
    """A Variable object over the existing variable node ``name`` of graph ``g``."""
    v = Variable.__new__(Variable)
    Tensor.__init__(v, g.get_tensor_by_name(name + ":0"))
    v.initializer = g.get_operation_by_name(name + "/Assign")
    v.initial_value = v.initializer.inputs[1]
    v.trainable = _registry(g).get(name, True)
    return v


def all_variables(g):
    """Every (global) variable of ``g`` in creation order: live Python objects where they exist, else
    views."""
    live = {v.op.name: v for v in g._live_variables()}
    local = set(_locals(g))
    out = []
    for init in g._initializer_names:
        name = init[:-len("/Assign")]
        if name not in local:
            out.append(live[name] if name in live else view(g, name))
    return out


def trainable(g):
    """The trainable variables of ``g`` in creation order."""
    return [v for v in all_variables(g) if v.trainable]
