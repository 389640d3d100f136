"""weft.image against TensorFlow's documented behaviour: the docstring examples of tf.image
(marked "TF doc"), and for resize a numpy transcription of TF's resize kernels (half-pixel
centres). Both graph mode (Session.run, gradients) and weft.data map functions."""
import numpy as np
import pytest

import weft as tf

X = [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[7.0, 8.0, 9.0], [10.0, 11.0, 12.0]]]  # the docstrings' image


def run(sess, *ts, feed=None):
    out = sess.run(list(ts), feed_dict=feed)
    return out[0] if len(ts) == 1 else out


def tf_bilinear(img, out_h, out_w):
    """TF's ResizeBilinear with half_pixel_centers, written as its kernel computes it: for each
    output coordinate, in = (o + 0.5) * scale - 0.5, lower = max(floor(in), 0), upper =
    min(ceil(in), size - 1), lerp = in - floor(in)."""
    img = np.asarray(img, np.float32)
    h, w = img.shape[-3], img.shape[-2]

    def weights(n_in, n_out):
        scale = np.float32(n_in) / np.float32(n_out)
        out = []
        for o in range(n_out):
            c = (np.float32(o) + np.float32(0.5)) * scale - np.float32(0.5)
            out.append((max(int(np.floor(c)), 0), min(int(np.ceil(c)), n_in - 1), c - np.floor(c)))
        return out
    res = np.zeros(img.shape[:-3] + (out_h, out_w, img.shape[-1]), np.float32)
    for y, (y0, y1, ly) in enumerate(weights(h, out_h)):
        for x, (x0, x1, lx) in enumerate(weights(w, out_w)):
            top = img[..., y0, x0, :] + (img[..., y0, x1, :] - img[..., y0, x0, :]) * lx
            bot = img[..., y1, x0, :] + (img[..., y1, x1, :] - img[..., y1, x0, :]) * lx
            res[..., y, x, :] = top + (bot - top) * ly
    return res


def tf_nearest(img, out_h, out_w):
    """TF's ResizeNearestNeighbor with half_pixel_centers: in = min(floor((o + 0.5) * scale), size - 1)."""
    h, w = img.shape[-3], img.shape[-2]
    ys = [min(int(np.floor((o + 0.5) * np.float32(h) / np.float32(out_h))), h - 1) for o in range(out_h)]
    xs = [min(int(np.floor((o + 0.5) * np.float32(w) / np.float32(out_w))), w - 1) for o in range(out_w)]
    return img[..., ys, :, :][..., xs, :]


def test_flips_docstring_examples(graph, sess):
    assert run(sess, tf.image.flip_left_right(X)).tolist() == \
        [[[4, 5, 6], [1, 2, 3]], [[10, 11, 12], [7, 8, 9]]]  # TF doc
    assert run(sess, tf.image.flip_up_down(X)).tolist() == \
        [[[7, 8, 9], [10, 11, 12]], [[1, 2, 3], [4, 5, 6]]]  # TF doc
    batch = np.arange(24).reshape(2, 3, 2, 2)
    np.testing.assert_array_equal(run(sess, tf.image.flip_left_right(batch)), batch[:, :, ::-1])
    np.testing.assert_array_equal(run(sess, tf.image.flip_up_down(batch)), batch[:, ::-1])
    np.testing.assert_array_equal(run(sess, tf.image.rot90(batch[0])), np.rot90(batch[0]))
    np.testing.assert_array_equal(run(sess, tf.image.rot90(batch[0], k=3)), np.rot90(batch[0], 3))
    with pytest.raises(ValueError, match="height, width, channels"):
        tf.image.flip_left_right([1.0, 2.0])


def test_random_flips_flip_each_image_or_not(graph, sess):
    batch = np.random.default_rng(0).standard_normal((64, 2, 3, 1)).astype(np.float32)
    lr, ud = run(sess, tf.image.random_flip_left_right(batch), tf.image.random_flip_up_down(batch))
    for got, flipped in ((lr, batch[:, :, ::-1]), (ud, batch[:, ::-1])):
        same = [(g == b).all() for g, b in zip(got, batch)]
        flip = [(g == f).all() for g, f in zip(got, flipped)]
        assert all(s or f for s, f in zip(same, flip))
        assert 10 < sum(flip) < 54  # per image, probability 1/2
    single = tf.image.random_flip_left_right(batch[0])
    outs = [run(sess, single) for _ in range(40)]
    assert any((o == batch[0]).all() for o in outs) and any((o == batch[0][:, ::-1]).all() for o in outs)


def test_resize_bilinear_and_nearest_match_tf_kernels(graph, sess):
    # 2x2 -> 4x4 bilinear, as TF 2 gives (half-pixel centres): the corners stay, the rest interpolates.
    img = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)[:, :, None]
    got = run(sess, tf.image.resize(img, [4, 4]))
    np.testing.assert_allclose(got[:, :, 0], [[1, 1.25, 1.75, 2], [1.5, 1.75, 2.25, 2.5], [2.5, 2.75, 3.25, 3.5],
                                              [3, 3.25, 3.75, 4]], rtol=1e-6)
    rng = np.random.default_rng(1)
    for shape, size in (((5, 7, 3), (3, 4)), ((2, 4, 6, 2), (9, 5)), ((3, 3, 1), (3, 3)), ((1, 6, 2), (4, 1))):
        x = rng.uniform(0, 255, shape).astype(np.float32)
        bil, near = run(sess, tf.image.resize(x, size), tf.image.resize(x, size, method="nearest"))
        np.testing.assert_allclose(bil, tf_bilinear(x, *size), rtol=1e-5, atol=1e-4)
        np.testing.assert_array_equal(near, tf_nearest(x, *size))
    u8 = rng.integers(0, 256, (4, 4, 3)).astype(np.uint8)
    bil, near = run(sess, tf.image.resize(u8, [2, 6]), tf.image.resize(u8, [2, 6], tf.image.ResizeMethod.NEAREST_NEIGHBOR))
    assert bil.dtype == np.float32 and near.dtype == np.uint8  # TF: bilinear float32, nearest keeps the dtype
    np.testing.assert_array_equal(near, tf_nearest(u8, 2, 6))
    # unknown height and width: the coordinates are computed at run time
    ph = tf.placeholder(tf.float32, shape=(None, None, 3))
    x = rng.uniform(0, 1, (5, 3, 3)).astype(np.float32)
    np.testing.assert_allclose(run(sess, tf.image.resize(ph, [4, 4]), feed={ph: x}), tf_bilinear(x, 4, 4), rtol=1e-5)
    assert tf.image.resize(ph, [4, 4]).shape == (4, 4, 3)
    # preserve_aspect_ratio: fit 4x8 into 6x6 -> 3x6
    assert run(sess, tf.image.resize(np.zeros((4, 8, 1), np.float32), [6, 6], preserve_aspect_ratio=True)).shape == \
        (3, 6, 1)
    with pytest.raises(NotImplementedError, match="bicubic"):
        tf.image.resize(x, [2, 2], method="bicubic")
    with pytest.raises(NotImplementedError, match="antialias"):
        tf.image.resize(x, [2, 2], antialias=True)


def test_resize_gradient_is_the_transpose_of_the_interpolation(graph, sess):
    rng = np.random.default_rng(2)
    x0 = rng.standard_normal((1, 3, 4, 2)).astype(np.float32)
    w = rng.standard_normal((1, 5, 3, 2)).astype(np.float32)
    x = tf.placeholder(tf.float32, shape=(1, 3, 4, 2))
    y = tf.reduce_sum(tf.image.resize(x, [5, 3]) * w)
    (dx,) = tf.gradients(y, [x])
    got = sess.run(dx, feed_dict={x: x0})
    # y is linear in x: dy/dx[i] = y(e_i), the interpolation applied to a basis image.
    want = np.zeros_like(x0)
    for i in np.ndindex(x0.shape):
        e = np.zeros_like(x0)
        e[i] = 1.0
        want[i] = (tf_bilinear(e, 5, 3) * w).sum()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_standardization_and_dtype_conversion(graph, sess):
    image = np.arange(1, 13, dtype=np.int32).reshape(2, 2, 3)
    np.testing.assert_allclose(run(sess, tf.image.per_image_standardization(image)),
                               [[[-1.593255, -1.3035723, -1.0138896], [-0.7242068, -0.4345241, -0.1448414]],
                                [[0.1448414, 0.4345241, 0.7242068], [1.0138896, 1.3035723, 1.593255]]],
                               rtol=1e-5)  # TF doc
    flat = run(sess, tf.image.per_image_standardization(np.full((2, 2, 1), 7.0, np.float32)))
    assert flat.tolist() == [[[0.0], [0.0]], [[0.0], [0.0]]]  # stddev floored at 1 / sqrt(4)
    u8 = np.array([0, 51, 255], np.uint8)
    got = run(sess, tf.image.convert_image_dtype(u8, tf.float32))
    np.testing.assert_allclose(got, [0.0, 0.2, 1.0], rtol=1e-6)
    back = run(sess, tf.image.convert_image_dtype(tf.constant([0.0, 0.5, 1.0, 1.5, -0.2]), tf.uint8))
    assert back.tolist() == [0, 127, 255, 255, 0]  # x * 255.5 truncated, clamped
    assert run(sess, tf.image.convert_image_dtype(u8, tf.int32)).tolist() == [0, 51 << 23, 255 << 23]


def test_crops_pads_and_colour(graph, sess):
    img = np.arange(4 * 6 * 1).reshape(4, 6, 1).astype(np.float32)
    np.testing.assert_array_equal(run(sess, tf.image.resize_with_crop_or_pad(img, 2, 2)), img[1:3, 2:4])
    padded = run(sess, tf.image.resize_with_crop_or_pad(img, 6, 8))
    want = np.zeros((6, 8, 1), np.float32)
    want[1:5, 1:7] = img
    np.testing.assert_array_equal(padded, want)
    np.testing.assert_array_equal(run(sess, tf.image.resize_with_crop_or_pad(img, 7, 3)),
                                  np.pad(img[:, 1:4], [[1, 2], [0, 0], [0, 0]]))
    np.testing.assert_array_equal(run(sess, tf.image.central_crop(img, 0.5)), img[1:3, 1:5])
    np.testing.assert_array_equal(run(sess, tf.image.crop_to_bounding_box(img, 1, 2, 2, 3)), img[1:3, 2:5])
    with pytest.raises(ValueError, match="central_fraction"):
        tf.image.central_crop(img, 0.0)
    crop = tf.image.random_crop(img, [2, 3, 1])
    seen = set()
    for _ in range(30):
        c = run(sess, crop)
        top, left = int(c[0, 0, 0]) // 6, int(c[0, 0, 0]) % 6
        np.testing.assert_array_equal(c, img[top:top + 2, left:left + 3])
        seen.add((top, left))
    assert len(seen) > 3 and all(t <= 2 and l <= 3 for t, l in seen)
    with pytest.raises(ValueError, match="larger"):
        tf.image.random_crop(img, [5, 3, 1])
    gray = run(sess, tf.image.rgb_to_grayscale([[[1.0, 2.0, 3.0]]]))
    np.testing.assert_allclose(gray, [[[0.2989 + 2 * 0.5870 + 3 * 0.1140]]], rtol=1e-6)  # TF doc: 1.81
    np.testing.assert_allclose(run(sess, tf.image.adjust_brightness(X, 0.1)), np.array(X) + 0.1, rtol=1e-6)  # TF doc
    np.testing.assert_allclose(run(sess, tf.image.adjust_contrast(X, 2.0)),
                               [[[-3.5, -2.5, -1.5], [2.5, 3.5, 4.5]], [[8.5, 9.5, 10.5], [14.5, 15.5, 16.5]]])  # TF doc
    bright = run(sess, tf.image.adjust_brightness(np.array([[[250, 10, 0]]], np.uint8), 0.1))
    assert bright.dtype == np.uint8 and bright.tolist() == [[[255, 35, 25]]]  # saturates at 255
    with pytest.raises(tf.errors.InvalidArgumentError, match="decode_jpeg.*0 bytes"):
        tf.image.decode_jpeg(b"")  # not an image: named by op and size


def test_image_functions_inside_dataset_map():
    imgs = np.random.default_rng(3).integers(0, 256, (16, 8, 8, 3)).astype(np.uint8)
    labels = np.arange(16)
    ds = tf.data.Dataset.from_tensor_slices((imgs, labels))
    aug = ds.map(lambda x, y: (tf.image.resize(tf.image.random_flip_left_right(x), [4, 4]) / 255.0, y)).batch(16)
    (x, y), = list(aug.as_numpy_iterator())
    assert x.shape == (16, 4, 4, 3) and x.dtype == np.float32 and y.tolist() == list(range(16))
    plain = tf_bilinear(imgs.astype(np.float32), 4, 4) / 255.0
    flipped = tf_bilinear(imgs[:, :, ::-1].astype(np.float32), 4, 4) / 255.0
    is_plain = [np.allclose(a, b, atol=1e-5) for a, b in zip(x, plain)]
    is_flip = [np.allclose(a, b, atol=1e-5) for a, b in zip(x, flipped)]
    assert all(p or f for p, f in zip(is_plain, is_flip)) and any(is_plain) and any(is_flip)
    det = ds.map(lambda x, y: (tf.image.per_image_standardization(tf.image.flip_up_down(x)),
                               tf.clip_by_value(y, 2, 5)))
    (a, b), = list(det.take(1).as_numpy_iterator())
    f = imgs[0, ::-1].astype(np.float64)
    np.testing.assert_allclose(a, (f - f.mean()) / f.std(), rtol=1e-4, atol=1e-5)
    assert b == 2
    gray = ds.map(lambda x, y: tf.image.rgb_to_grayscale(tf.image.central_crop(x, 0.5)))
    assert next(iter(gray.as_numpy_iterator())).shape == (4, 4, 1)


def test_math_and_composites_inside_dataset_map():
    ds = tf.data.Dataset.from_tensor_slices(np.array([[3.0, -1.0, 2.0], [0.5, 4.0, -2.0]], np.float32))
    out = list(ds.map(lambda v: (tf.sort(v), tf.math.top_k(v, 2).indices, tf.stack([tf.reduce_max(v), tf.math.reduce_std(v)]),
                                 tf.math.cumsum(v), tf.boolean_mask(v, v > 0))).as_numpy_iterator())
    s, i, st, cs, bm = out[0]
    assert s.tolist() == [-1.0, 2.0, 3.0] and i.tolist() == [0, 2] and cs.tolist() == [3.0, 2.0, 4.0]
    np.testing.assert_allclose(st, [3.0, np.std([3.0, -1.0, 2.0])], rtol=1e-6)
    assert bm.tolist() == [3.0, 2.0] and out[1][4].tolist() == [0.5, 4.0]


def test_image_functions_over_batches_of_unknown_size_inside_map():
    imgs = np.random.default_rng(4).uniform(0, 1, (10, 6, 6, 1)).astype(np.float32)
    ds = tf.data.Dataset.from_tensor_slices(imgs).batch(4)  # batches of 4, 4, 2: the batch dim is None
    out = list(ds.map(lambda b: (tf.image.resize(b, [3, 3], method="nearest"), tf.image.random_flip_up_down(b)))
               .as_numpy_iterator())
    assert [o[0].shape for o in out] == [(4, 3, 3, 1), (4, 3, 3, 1), (2, 3, 3, 1)]
    np.testing.assert_array_equal(np.concatenate([o[0] for o in out]), tf_nearest(imgs, 3, 3))
    flips = np.concatenate([o[1] for o in out])
    assert all((f == i).all() or (f == i[::-1]).all() for f, i in zip(flips, imgs))
