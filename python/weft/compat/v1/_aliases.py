"""TF1's top-level names for functions weft has under another namespace or name (``tf.cumprod`` is
``tf.math.cumprod``, ``tf.arg_max`` is ``tf.argmax``, ``tf.py_func`` is ``tf.numpy_function``).
Resolved when first read (module ``__getattr__``), so a name whose target weft lacks stays an
AttributeError naming both."""
import importlib

# v1 name -> (module under weft, attribute)
_TABLE = {
    **{n: ("math", n) for n in (
        "cumprod", "lgamma", "digamma", "erfc", "rint", "invert_permutation", "is_non_decreasing",
        "is_strictly_increasing", "lbeta", "igamma", "igammac", "polygamma", "zeta", "betainc", "real", "imag",
        "conj", "angle", "segment_sum", "segment_mean", "segment_max", "segment_min", "segment_prod",
        "unsorted_segment_sum", "unsorted_segment_mean", "unsorted_segment_max", "unsorted_segment_min",
        "unsorted_segment_prod", "unsorted_segment_sqrt_n", "bincount", "histogram_fixed_width", "cross")},
    "div_no_nan": ("math", "divide_no_nan"), "floor_div": ("math", "floordiv"),
    **{n: ("linalg", n[len("matrix_"):] if n.startswith("matrix_") else n) for n in (
        "matrix_band_part", "matrix_transpose", "matrix_diag", "matrix_diag_part", "matrix_set_diag", "trace",
        "cholesky", "qr", "svd", "cholesky_solve", "matrix_determinant", "matrix_inverse", "matrix_solve",
        "matrix_triangular_solve", "matrix_solve_ls", "matrix_square_root")},
    "matrix_determinant": ("linalg", "det"), "matrix_inverse": ("linalg", "inv"), "matrix_solve": ("linalg", "solve"),
    "matrix_triangular_solve": ("linalg", "triangular_solve"), "matrix_solve_ls": ("linalg", "lstsq"),
    "matrix_square_root": ("linalg", "sqrtm"), "diag": ("linalg", "diag"), "diag_part": ("linalg", "diag_part"),
    "self_adjoint_eig": ("linalg", "eigh"), "self_adjoint_eigvals": ("linalg", "eigvalsh"),
    "space_to_depth": ("nn", "space_to_depth"), "depth_to_space": ("nn", "depth_to_space"),
    "batch_to_space_nd": ("manip_ops", "batch_to_space"), "reverse_v2": ("manip_ops", "reverse"),
    "arg_max": ("compat.v1.math", "argmax"), "arg_min": ("compat.v1.math", "argmin"), "where_v2": ("", "where"),
    "lin_space": ("", "linspace"), "searchsorted": ("", "searchsorted"),
    "read_file": ("io", "read_file"), "write_file": ("io", "write_file"), "decode_raw": ("io", "decode_raw"),
    "decode_csv": ("io", "decode_csv"), "parse_example": ("io", "parse_example"),
    "parse_single_example": ("io", "parse_single_example"), "serialize_tensor": ("io", "serialize_tensor"),
    "parse_tensor": ("io", "parse_tensor"), "FixedLenFeature": ("io", "FixedLenFeature"),
    "VarLenFeature": ("io", "VarLenFeature"), "FixedLenSequenceFeature": ("io", "FixedLenSequenceFeature"),
    "TFRecordReader": ("io", "TFRecordReader"), "decode_base64": ("io", "decode_base64"),
    "encode_base64": ("io", "encode_base64"), "matching_files": ("io", "matching_files"),
    "regex_replace": ("strings", "regex_replace"), "string_join": ("strings", "join"),
    "string_strip": ("strings", "strip"), "string_to_number": ("strings", "to_number"), "substr": ("strings", "substr"),
    "reduce_join": ("strings", "reduce_join"), "as_string": ("strings", "as_string"),
    "string_to_hash_bucket_fast": ("strings", "to_hash_bucket_fast"),
    "string_to_hash_bucket_strong": ("strings", "to_hash_bucket_strong"),
    "string_to_hash_bucket": ("strings", "to_hash_bucket"),
    "random_crop": ("image", "random_crop"), "random_shuffle": ("random", "shuffle"),
    "multinomial": ("random", "categorical"), "random_gamma": ("random", "gamma"),
    "random_poisson": ("random", "poisson"),
    "py_function": ("", "py_function"), "numpy_function": ("", "numpy_function"),
    "custom_gradient": ("", "custom_gradient"), "TensorArray": ("", "TensorArray"),
    "RegisterGradient": ("", "RegisterGradient"), "no_gradient": ("", "no_gradient"),
    "NoGradient": ("", "no_gradient"), "NotDifferentiable": ("", "no_gradient"), "IndexedSlices": ("", "IndexedSlices"),
    "fft": ("signal", "fft"), "ifft": ("signal", "ifft"),
    "fft2d": ("signal", "fft2d"), "ifft2d": ("signal", "ifft2d"), "spectral": ("signal", None),
    "extract_image_patches": ("image", "extract_patches"),
    "python_io": ("io", None), "OpError": ("errors", "OpError"), "hessians": ("", "hessians"),
    "assert_greater_equal": ("debugging", "assert_greater_equal"), "assert_less_equal": ("debugging", "assert_less_equal"),
    "assert_near": ("debugging", "assert_near"), "assert_negative": ("debugging", "assert_negative"),
    "assert_non_negative": ("debugging", "assert_non_negative"), "assert_non_positive": ("debugging", "assert_non_positive"),
    "assert_none_equal": ("debugging", "assert_none_equal"), "assert_positive": ("debugging", "assert_positive"),
    "assert_rank_at_least": ("debugging", "assert_rank_at_least"), "assert_scalar": ("debugging", "assert_scalar"),
    "assert_type": ("debugging", "assert_type"), "assert_integer": ("debugging", "assert_integer"),
    "verify_tensor_all_finite": ("debugging", "check_numerics"),
}


def resolve(name):
    entry = _TABLE.get(name)
    if entry is None:
        raise AttributeError("module 'weft.compat.v1' has no attribute '%s'" % name)
    module, attr = entry
    try:
        mod = importlib.import_module("weft." + module if module else "weft")
        return mod if attr is None else getattr(mod, attr)
    except (ImportError, AttributeError) as e:
        raise AttributeError("weft.compat.v1.%s (TF1's name for weft.%s) is not available: %s"
                             % (name, ".".join(p for p in (module, attr) if p), e)) from None


def names():
    return sorted(_TABLE)
