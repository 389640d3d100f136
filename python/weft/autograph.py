"""``tf.autograph``: weft does not rewrite Python control flow (weft.function traces the function as
written, and runs it as written where a branch needs a tensor's value: _function.py), so the
decorators that tune the conversion are accepted and change nothing, and ``to_graph`` /
``to_code`` (which return converted code) are NotImplementedError naming what to use instead."""
import types

__all__ = ["experimental", "set_verbosity", "to_graph", "to_code"]


def _do_not_convert(func=None):
    """``@tf.autograph.experimental.do_not_convert``: the function itself (there is nothing to turn
    off)."""
    if func is None:
        return lambda f: f
    return func


experimental = types.SimpleNamespace(
    do_not_convert=_do_not_convert,
    Feature=types.SimpleNamespace(ALL="ALL", AUTO_CONTROL_DEPS="AUTO_CONTROL_DEPS", ASSERT_STATEMENTS="ASSERT_STATEMENTS",
                                  BUILTIN_FUNCTIONS="BUILTIN_FUNCTIONS", EQUALITY_OPERATORS="EQUALITY_OPERATORS",
                                  LISTS="LISTS", NAME_SCOPES="NAME_SCOPES"),
    set_loop_options=lambda **kwargs: None,
)


def set_verbosity(level, alsologtostdout=False):
    """Accepted: weft writes no conversion logs."""


def to_graph(entity, recursive=True, experimental_optional_features=None):
    raise NotImplementedError("tf.autograph.to_graph: weft does not convert Python code; decorate the function "
                              "with weft.function (traced as written; use weft.cond / weft.while_loop for "
                              "tensor-dependent control flow)")


def to_code(entity, recursive=True, experimental_optional_features=None):
    raise NotImplementedError("tf.autograph.to_code: weft does not convert Python code (see to_graph)")
