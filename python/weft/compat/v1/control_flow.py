"""TF1's ``tf.cond`` and ``tf.while_loop`` (``strict=False`` / ``return_same_structure=False``
by default): the graph's Switch / Merge / Enter / Exit frames (weft/control_flow_ops.py), so a
branch with side effects (an Assign, an optimizer update) runs only when taken."""
from ...control_flow_ops import cond_v1 as cond, while_loop_v1 as while_loop  # noqa: F401

__all__ = ["cond", "while_loop"]
