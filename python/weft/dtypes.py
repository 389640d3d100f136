"""``weft.dtypes`` (tf.dtypes): the dtype objects, ``as_dtype`` and ``cast``, as ``tf.dtypes.int32``."""
from .framework import DType, as_dtype, bfloat16, bool_, float16, float32, float64, int32, int64, uint8  # noqa: F401
from .ops import cast  # noqa: F401
from ._text_values import string  # noqa: F401 - host string values' dtype (not a graph dtype)
from .io._image_codecs import uint16  # noqa: F401 - 16-bit images' dtype (host values, not a graph dtype)

bool = bool_  # noqa: A001 - tf.dtypes.bool (shadows the builtin only inside this namespace)
double = float64
half = float16
