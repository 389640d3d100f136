"""keras.utils.image_dataset_from_directory and the PIL-image helpers (load_img, array_to_img,
save_img), as Keras 3 (TensorFlow 2.21) makes them.

The files are indexed, split and shuffled exactly as text_dataset_from_directory does
(_text_dataset.py: Keras' index_directory with the image suffixes .bmp .gif .jpeg .jpg .png);
each element is then read, decoded (``tf.io.decode_image(channels, expand_animations=False)``,
io/_image_codecs.py) and resized to ``image_size`` with ``tf.image.resize`` (after Keras'
smart_resize central crop with ``crop_to_aspect_ratio``), when the dataset is iterated. Images
are float32 (bilinear) or the file's uint8 ("nearest", tf.image.resize's dtype rule); a
file that cannot be decoded is InvalidArgumentError naming it."""
import os

import numpy as np

from .. import _text_values as _tv
from ..data import _host
from ..data import _structure as _st
from . import _text_dataset as _td

ALLOWLIST_FORMATS = (".bmp", ".gif", ".jpeg", ".jpg", ".png")
_CHANNELS = {"rgb": 3, "rgba": 4, "grayscale": 1}


def _crop_box(height, width, target):
    """Keras' smart_resize window: the largest central crop with the target's aspect ratio."""
    th, tw = target
    ch = max(min(height, int(float(width * th) / tw)), 1)
    cw = max(min(width, int(float(height * tw) / th)), 1)
    top, left = int(float(height - ch) / 2), int(float(width - cw) / 2)
    return top, left, ch, cw


def load_image(path, image_size, num_channels, interpolation, crop_to_aspect_ratio):
    """One file as Keras' _load_image_tf makes it: a numpy [h, w, c] array (float32, or uint8
    for "nearest")."""
    from .. import image as _image
    from ..data import _structure
    from ..errors import InvalidArgumentError
    from ..framework import _weft_error
    from ..io import _image_codecs as _codecs
    with open(path, "rb") as f:
        data = f.read()
    try:
        img = _codecs.decode_image(data, channels=num_channels, expand_animations=False)
    except InvalidArgumentError as e:
        raise _weft_error("InvalidArgument", "%s: %s" % (path, e)) from None
    img = smart_resize(img, image_size, interpolation) if crop_to_aspect_ratio else \
        _image.resize(img, list(image_size), method=interpolation)
    return _structure.to_array(img, "image_dataset_from_directory")


def _check_interpolation(interpolation):
    supported = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic")
    interpolation = interpolation.lower()
    if interpolation not in supported:
        raise ValueError("Argument `interpolation` should be one of %s. Received: interpolation=%s"
                         % (supported, interpolation))
    if interpolation not in ("bilinear", "nearest"):
        raise NotImplementedError("weft's tf.image.resize supports interpolation 'bilinear' and 'nearest', not %r"
                                  % interpolation)
    return interpolation


def image_dataset_from_directory(directory, labels="inferred", label_mode="int", class_names=None,
                                 color_mode="rgb", batch_size=32, image_size=(256, 256), shuffle=True, seed=None,
                                 validation_split=None, subset=None, interpolation="bilinear", follow_links=False,
                                 crop_to_aspect_ratio=False, pad_to_aspect_ratio=False, data_format=None,
                                 format="tf", verbose=True):  # noqa: A002 - Keras' name
    """Keras' image_dataset_from_directory (see the module doc): a weft.data Dataset of
    ``(images, labels)`` batches with ``class_names`` and ``file_paths``; with
    ``subset="both"``, the (training, validation) pair."""
    _td._check_labels(labels, class_names, label_mode, "image files", "images")
    if labels is None or label_mode is None:
        labels = label_mode = None
    if color_mode not in _CHANNELS:
        raise ValueError('`color_mode` must be one of {"rgb", "rgba", "grayscale"}. Received: color_mode=%s'
                         % (color_mode,))
    num_channels = _CHANNELS[color_mode]
    if isinstance(image_size, int):
        image_size = (image_size, image_size)
    elif not isinstance(image_size, (list, tuple)) or not len(image_size) == 2:
        raise ValueError("Invalid `image_size` value. Expected a tuple of 2 integers. Received: image_size=%s"
                         % (image_size,))
    image_size = tuple(int(s) for s in image_size)
    interpolation = _check_interpolation(interpolation)
    if format != "tf":
        raise ValueError('`format` should be "tf" in weft (a weft.data Dataset). Received: format=%s' % (format,))
    if pad_to_aspect_ratio and crop_to_aspect_ratio:
        raise ValueError("Only one of `pad_to_aspect_ratio`, `crop_to_aspect_ratio` can be set to `True`.")
    if pad_to_aspect_ratio:
        raise NotImplementedError("image_dataset_from_directory(pad_to_aspect_ratio=True) is not supported by weft; "
                                  "use crop_to_aspect_ratio=True or plain resizing")
    if data_format not in (None, "channels_last"):
        raise NotImplementedError("image_dataset_from_directory: weft is channels_last, got data_format=%r"
                                  % (data_format,))
    _td._check_split(validation_split, subset, shuffle, seed)
    if seed is None:
        seed = np.random.randint(1e6)
    directory = os.fspath(directory)
    files, labels, class_names = _td._index(directory, labels, class_names, shuffle, seed, follow_links, verbose,
                                            ALLOWLIST_FORMATS)
    if label_mode == "binary" and len(class_names) != 2:
        raise ValueError('When passing `label_mode="binary"`, there must be exactly 2 class_names. Received: '
                         'class_names=%s' % (class_names,))
    buffer_size = batch_size * 8 if batch_size is not None else 1024
    num_classes = len(class_names) if class_names else 0
    out_dtype = np.uint8 if interpolation == "nearest" else np.float32
    image_spec = _st.TensorSpec(image_size + (num_channels,), out_dtype)

    def make(subset_name, shuffled):
        f, y = _td._split(files, labels, validation_split, subset_name)
        if not f:
            kind = {"training": "training ", "validation": "validation "}.get(subset_name, "") \
                if subset == "both" else ""
            raise ValueError("No %simages found in directory %s. Allowed formats: %s"
                             % (kind, directory, ALLOWLIST_FORMATS))
        ys = _td._label_rows(y, label_mode, num_classes)
        items = _td._path_dataset(f, ys, shuffled, buffer_size, seed, "image_dataset_from_directory")

        def load(e):
            img = load_image(_tv.decode(e[0][()]), image_size, num_channels, interpolation, crop_to_aspect_ratio)
            return [img.astype(out_dtype, copy=False)] + e[1:]
        spec = image_spec if ys is None else (image_spec, items._spec[1])
        ds = _host.HostDataset(lambda: (load(e) for e in items._make()), spec, items._card)
        ds = ds.batch(batch_size) if batch_size is not None else ds
        ds.class_names = class_names
        ds.file_paths = f
        return ds
    if subset == "both":
        return make("training", shuffle), make("validation", False)
    return make(subset, shuffle)


# ---- PIL images (keras.utils.load_img / img_to_array / array_to_img / save_img) ----------------

def _pil(what):
    from ..io._image_codecs import _pil as pil
    return pil(what)


def load_img(path, color_mode="rgb", target_size=None, interpolation="nearest", keep_aspect_ratio=False):
    """Keras' load_img: a PIL image of the file (converted to "L", "RGB" or "RGBA" by
    ``color_mode``), resized with PIL to ``target_size`` = (height, width) when given (with
    keep_aspect_ratio, the central crop of that ratio first)."""
    Image = _pil("load_img")
    if color_mode not in ("grayscale", "rgb", "rgba"):
        raise ValueError('color_mode must be "grayscale", "rgb", or "rgba"')
    if isinstance(path, (bytes, bytearray)):
        path = path.decode("utf-8")
    try:
        with open(os.fspath(path), "rb") as f:
            img = Image.open(f)
            img.load()
    except (OSError, SyntaxError, ValueError) as e:
        if isinstance(e, FileNotFoundError):
            raise
        from ..framework import _weft_error
        raise _weft_error("InvalidArgument", "load_img: cannot decode %s: %s" % (path, e)) from None
    mode = {"grayscale": "L", "rgb": "RGB", "rgba": "RGBA"}[color_mode]
    if color_mode == "grayscale" and img.mode in ("L", "I;16", "I"):
        pass
    elif img.mode != mode:
        img = img.convert(mode)
    if target_size is not None:
        width_height = (target_size[1], target_size[0])
        if img.size != width_height:
            methods = {"nearest": Image.NEAREST, "bilinear": Image.BILINEAR, "bicubic": Image.BICUBIC,
                       "hamming": Image.HAMMING, "box": Image.BOX, "lanczos": Image.LANCZOS}
            if interpolation not in methods:
                raise ValueError("Invalid interpolation method %s specified. Supported methods are %s"
                                 % (interpolation, ", ".join(methods)))
            if keep_aspect_ratio:
                width, height = img.size
                target_width, target_height = width_height
                crop_height = (width * target_height) // target_width
                crop_width = (height * target_width) // target_height
                crop_height, crop_width = min(height, crop_height), min(width, crop_width)
                cy, cx = height // 2, width // 2
                box = [cx - crop_width // 2, cy - crop_height // 2, 0, 0]
                box[2], box[3] = box[0] + crop_width, box[1] + crop_height
                img = img.crop(box)
            img = img.resize(width_height, methods[interpolation])
    return img


def array_to_img(x, data_format=None, scale=True, dtype=None):
    """Keras' array_to_img: a [h, w, 1|3|4] array as a PIL image ("L", "RGB", "RGBA"); with
    ``scale`` the values are shifted and scaled to 0..255 first."""
    Image = _pil("array_to_img")
    x = np.asarray(x, dtype=dtype or "float32")
    if x.ndim != 3:
        raise ValueError("Expected image array to have rank 3 (single image). Got array with shape: %s" % (x.shape,))
    if (data_format or "channels_last") == "channels_first":
        x = x.transpose(1, 2, 0)
    if scale:
        x = x - np.min(x)
        x_max = np.max(x)
        if x_max != 0:
            x /= x_max
        x *= 255
    c = x.shape[2]
    if c == 4:
        return Image.fromarray(x.astype("uint8"), "RGBA")
    if c == 3:
        return Image.fromarray(x.astype("uint8"), "RGB")
    if c == 1:
        if np.max(x) > 255:  # 32-bit signed integer grayscale image (Keras' rule)
            return Image.fromarray(x[:, :, 0].astype("int32"), "I")
        return Image.fromarray(x[:, :, 0].astype("uint8"), "L")
    raise ValueError("Unsupported channel number: %s" % (c,))


def save_img(path, x, data_format=None, file_format=None, scale=True, **kwargs):
    """Keras' save_img: array_to_img(x) saved with PIL (the format from ``file_format`` or the
    suffix; RGBA saved as JPEG drops its alpha, as Keras)."""
    img = array_to_img(x, data_format=data_format, scale=scale)
    if img.mode == "RGBA" and (file_format == "jpg" or file_format == "jpeg" or
                               str(path).lower().endswith((".jpg", ".jpeg"))):
        img = img.convert("RGB")
    img.save(path, format=file_format, **kwargs)


def smart_resize(x, size, interpolation="bilinear", data_format="channels_last", backend_module=None):
    """Keras' smart_resize: the largest central crop of ``x`` ([h, w, c] or [n, h, w, c], numpy or
    a tensor) with the aspect ratio of ``size``, resized to it (tf.image.resize); a numpy input
    gives a numpy result."""
    from .. import image as _image
    from ..data import _structure
    if len(size) != 2:
        raise ValueError("Expected `size` to be a tuple of 2 integers, but got: %s." % (size,))
    if data_format not in (None, "channels_last"):
        raise NotImplementedError("smart_resize: weft is channels_last, got data_format=%r" % (data_format,))
    is_numpy = isinstance(x, np.ndarray)
    img = x if not is_numpy else np.asarray(x)
    shape = img.shape
    if len(shape) < 3 or len(shape) > 4:
        raise ValueError("Expected an image array with shape `(height, width, channels)`, or `(batch_size, height, "
                         "width, channels)`, but got input with incorrect rank, of shape %s." % (shape,))
    top, left, ch, cw = _crop_box(int(shape[-3]), int(shape[-2]), size)
    img = _image.crop_to_bounding_box(img, top, left, ch, cw)
    img = _image.resize(img, list(size), method=_check_interpolation(interpolation))
    return _structure.to_array(img, "smart_resize") if is_numpy else img
