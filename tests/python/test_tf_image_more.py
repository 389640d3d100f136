"""weft.image colour, quality and stateless-random functions against TensorFlow's documented
behaviour: the docstring examples of tf.image (marked "TF doc"), Python's colorsys for HSV, and
numpy transcriptions of the documented formulas (psnr, ssim, total variation, Sobel)."""
import colorsys

import numpy as np
import pytest

import weft as tf

X = [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[7.0, 8.0, 9.0], [10.0, 11.0, 12.0]]]  # the docstrings' image


def rand(*shape, seed=0):
    return np.random.RandomState(seed).rand(*shape).astype(np.float32)


def test_hsv_against_colorsys_and_back(graph, sess):
    x = rand(2, 5, 6, 3)
    x[0, 0, 0] = [0.3, 0.3, 0.3]  # a grey: hue and saturation 0
    x[0, 0, 1] = [0.0, 0.0, 0.0]
    hsv, back = sess.run([tf.image.rgb_to_hsv(x), tf.image.hsv_to_rgb(tf.image.rgb_to_hsv(x))])
    ref = np.array([colorsys.rgb_to_hsv(*p) for p in x.reshape(-1, 3)]).reshape(x.shape)
    np.testing.assert_allclose(hsv, ref, atol=1e-6)
    np.testing.assert_allclose(back, x, atol=1e-6)
    h = rand(40, 3, seed=1)
    rgb = sess.run(tf.image.hsv_to_rgb(h))
    np.testing.assert_allclose(rgb, [colorsys.hsv_to_rgb(*p) for p in h], atol=1e-6)
    with pytest.raises(ValueError, match="last dim of 3"):
        tf.image.rgb_to_hsv(np.zeros((2, 2, 4), np.float32))
    with pytest.raises(TypeError, match="float32 or float64"):
        tf.image.rgb_to_hsv(np.zeros((2, 2, 3), np.uint8))


def test_adjust_saturation_hue_gamma_docstring_examples(graph, sess):
    np.testing.assert_allclose(sess.run(tf.image.adjust_saturation(X, 0.5)),
                               [[[2.0, 2.5, 3.0], [5.0, 5.5, 6.0]], [[8.0, 8.5, 9.0], [11.0, 11.5, 12.0]]],
                               rtol=1e-6)  # TF doc
    np.testing.assert_allclose(sess.run(tf.image.adjust_hue(X, 0.2)),
                               [[[2.3999996, 1.0, 3.0], [5.3999996, 4.0, 6.0]],
                                [[8.4, 7.0, 9.0], [11.4, 10.0, 12.0]]], rtol=1e-5)  # TF doc
    np.testing.assert_allclose(sess.run(tf.image.adjust_gamma(X, 0.2)),
                               [[[1.0, 1.1486983, 1.2457309], [1.319508, 1.3797297, 1.4309691]],
                                [[1.4757731, 1.5157166, 1.5518456], [1.5848932, 1.6153942, 1.6437519]]],
                               rtol=1e-6)  # TF doc
    with pytest.raises(ValueError, match=r"delta must be in the interval \[-1, 1\]"):
        tf.image.adjust_hue(X, 1.5)
    with pytest.raises(ValueError, match="gamma must be non-negative"):
        tf.image.adjust_gamma(X, -1.0)


def test_saturation_and_hue_against_colorsys_uint8_saturates(graph, sess):
    x = rand(4, 4, 3, seed=2)

    def via_hsv(f):
        out = []
        for p in x.reshape(-1, 3):
            h, s, v = colorsys.rgb_to_hsv(*p)
            out.append(colorsys.hsv_to_rgb(*f(h, s, v)))
        return np.array(out).reshape(x.shape)
    np.testing.assert_allclose(sess.run(tf.image.adjust_saturation(x, 1.7)),
                               via_hsv(lambda h, s, v: (h, min(s * 1.7, 1.0), v)), atol=1e-5)
    np.testing.assert_allclose(sess.run(tf.image.adjust_hue(x, -0.3)),
                               via_hsv(lambda h, s, v: ((h - 0.3) % 1.0, s, v)), atol=1e-5)
    u8 = (x * 255).astype(np.uint8)
    got = sess.run(tf.image.adjust_saturation(u8, 0.0))
    assert got.dtype == np.uint8
    assert (np.abs(got.astype(int) - u8.max(axis=-1, keepdims=True)) <= 1).all()  # grey at the value V


def test_psnr_ssim_total_variation(graph, sess):
    a, b = rand(2, 16, 16, 3, seed=3), rand(2, 16, 16, 3, seed=4)
    mse = ((a - b) ** 2).mean(axis=(1, 2, 3))
    np.testing.assert_allclose(sess.run(tf.image.psnr(a, b, max_val=1.0)), 10 * np.log10(1.0 / mse), rtol=1e-5)

    def ssim_ref(x, y, max_val=1.0, size=11, sigma=1.5, k1=0.01, k2=0.03):
        c = np.arange(size) - (size - 1) / 2.0
        g = np.exp(-0.5 * (c[:, None] ** 2 + c[None, :] ** 2) / sigma ** 2)
        g /= g.sum()

        def blur(t):
            h, w = t.shape[1] - size + 1, t.shape[2] - size + 1
            out = np.zeros((t.shape[0], h, w, t.shape[3]))
            for i in range(h):
                for j in range(w):
                    out[:, i, j, :] = np.einsum("bijc,ij->bc", t[:, i:i + size, j:j + size, :], g)
            return out
        c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
        m0, m1 = blur(x), blur(y)
        lum = (2 * m0 * m1 + c1) / (m0 ** 2 + m1 ** 2 + c1)
        cs = (2 * blur(x * y) - 2 * m0 * m1 + c2) / (blur(x * x + y * y) - m0 ** 2 - m1 ** 2 + c2)
        return (lum * cs).mean(axis=(1, 2, 3))
    b2 = np.clip(a + 0.1 * rand(2, 16, 16, 3, seed=5), 0, 1)
    np.testing.assert_allclose(sess.run(tf.image.ssim(a, b2, max_val=1.0)), ssim_ref(a, b2), rtol=1e-4)
    np.testing.assert_allclose(sess.run(tf.image.ssim(a, a, 1.0)), [1.0, 1.0], rtol=1e-6)
    assert sess.run(tf.image.ssim(a, b2, 1.0, return_index_map=True)).shape == (2, 6, 6)
    with pytest.raises(ValueError, match="smaller than filter_size 11"):
        tf.image.ssim(rand(8, 8, 3), rand(8, 8, 3), 1.0)

    tv = np.abs(np.diff(a, axis=1)).sum(axis=(1, 2, 3)) + np.abs(np.diff(a, axis=2)).sum(axis=(1, 2, 3))
    np.testing.assert_allclose(sess.run(tf.image.total_variation(a)), tv, rtol=1e-5)
    assert np.isclose(sess.run(tf.image.total_variation(a[0])), tv[0], rtol=1e-5)

    # ssim and psnr have gradients (composed of differentiable ops); ssim(x, x) is a maximum.
    xa = tf.constant(a)
    g, = tf.gradients(tf.reduce_sum(tf.image.ssim(xa, xa, 1.0)), [xa])
    assert np.abs(sess.run(g)).max() < 1e-4


def test_sobel_edges_and_image_gradients(graph, sess):
    x = rand(1, 5, 6, 2, seed=6)
    pad = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)), mode="reflect")
    ky = np.array([[-1, -2, -1], [0, 0, 0], [1, 2, 1]], np.float64)
    ref = np.zeros(x.shape + (2,))
    for k, kern in enumerate((ky, ky.T)):
        for i in range(5):
            for j in range(6):
                ref[0, i, j, :, k] = np.einsum("ijc,ij->c", pad[0, i:i + 3, j:j + 3, :], kern)
    np.testing.assert_allclose(sess.run(tf.image.sobel_edges(x)), ref, atol=1e-5)
    # TF doc: image_gradients of a 5x5 ramp.
    image = np.reshape(np.arange(25, dtype=np.float32), (1, 5, 5, 1))
    dy, dx = sess.run(tf.image.image_gradients(image))
    assert (dy[0, :4, :, 0] == 5).all() and (dy[0, 4] == 0).all()
    assert (dx[0, :, :4, 0] == 1).all() and (dx[0, :, 4] == 0).all()


def test_extract_patches_docstring_examples(graph, sess):
    n = 10
    images = [[[[x * n + y + 1] for y in range(n)] for x in range(n)]]
    got = sess.run(tf.image.extract_patches(images=images, sizes=[1, 3, 3, 1], strides=[1, 5, 5, 1],
                                            rates=[1, 1, 1, 1], padding="VALID"))
    assert got.tolist() == [[[[1, 2, 3, 11, 12, 13, 21, 22, 23], [6, 7, 8, 16, 17, 18, 26, 27, 28]],
                             [[51, 52, 53, 61, 62, 63, 71, 72, 73], [56, 57, 58, 66, 67, 68, 76, 77, 78]]]]  # TF doc
    got = sess.run(tf.image.extract_patches(images=images, sizes=[1, 3, 3, 1], strides=[1, 5, 5, 1],
                                            rates=[1, 2, 2, 1], padding="VALID"))
    assert got.tolist() == [[[[1, 3, 5, 21, 23, 25, 41, 43, 45], [6, 8, 10, 26, 28, 30, 46, 48, 50]],
                             [[51, 53, 55, 71, 73, 75, 91, 93, 95], [56, 58, 60, 76, 78, 80, 96, 98, 100]]]]  # TF doc
    # Channels stay innermost: patch depth is (row, column, channel).
    two = np.arange(2 * 3 * 3 * 2, dtype=np.float32).reshape(2, 3, 3, 2)
    p = sess.run(tf.image.extract_patches(two, [1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "VALID"))
    np.testing.assert_array_equal(p[1, 1, 0], two[1, 1:3, 0:2, :].reshape(-1))
    with pytest.raises(ValueError, match=r"sizes must be \[1, rows, cols, 1\]"):
        tf.image.extract_patches(two, [2, 2], [1, 1, 1, 1], [1, 1, 1, 1], "VALID")


def test_stateless_random_image_functions(graph, sess):
    x = rand(200, 3, 4, 3, seed=7)
    flipped = sess.run(tf.image.stateless_random_flip_left_right(x, seed=[1, 2]))
    again = sess.run(tf.image.stateless_random_flip_left_right(x, seed=[1, 2]))
    np.testing.assert_array_equal(flipped, again)
    same = np.array([np.array_equal(flipped[i], x[i]) for i in range(200)])
    mirrored = np.array([np.array_equal(flipped[i], x[i, :, ::-1]) for i in range(200)])
    assert (same | mirrored).all()
    assert abs(mirrored.mean() - 0.5) < 5 * np.sqrt(0.25 / 200)  # one draw per image
    ud = sess.run(tf.image.stateless_random_flip_up_down(x[0], seed=[3, 4]))
    assert np.array_equal(ud, x[0]) or np.array_equal(ud, x[0, ::-1])

    img = rand(6, 7, 3, seed=8)
    crop = sess.run(tf.image.stateless_random_crop(img, [3, 4, 3], seed=[5, 6]))
    assert crop.shape == (3, 4, 3)
    assert any(np.array_equal(crop, img[i:i + 3, j:j + 4]) for i in range(4) for j in range(4))
    np.testing.assert_array_equal(sess.run(tf.image.stateless_random_crop(img, [3, 4, 3], seed=[5, 6])), crop)

    bright = sess.run(tf.image.stateless_random_brightness(img, 0.2, seed=[1, 1]))
    delta = bright - img
    assert np.allclose(delta, delta.flat[0], atol=1e-6) and abs(delta.flat[0]) <= 0.2
    con = sess.run(tf.image.stateless_random_contrast(img, 0.2, 0.5, seed=[1, 1]))
    mean = img.mean(axis=(0, 1))
    factor = (con - mean) / (img - mean)
    assert np.allclose(factor, factor.flat[0], rtol=1e-3) and 0.2 <= factor.flat[0] < 0.5
    sat = sess.run(tf.image.stateless_random_saturation(img, 0.5, 0.9, seed=[2, 2]))
    s_in, s_out = sess.run([tf.image.rgb_to_hsv(img), tf.image.rgb_to_hsv(sat)])
    ratio = s_out[..., 1] / s_in[..., 1]
    assert np.allclose(ratio, ratio.flat[0], rtol=1e-4) and 0.5 <= ratio.flat[0] < 0.9
    hue = sess.run(tf.image.stateless_random_hue(img, 0.3, seed=[3, 3]))
    np.testing.assert_array_equal(hue, sess.run(tf.image.stateless_random_hue(img, 0.3, seed=[3, 3])))
    with pytest.raises(ValueError, match=r"max_delta must be in \[0, 0.5\]"):
        tf.image.stateless_random_hue(img, 0.7, seed=[1, 1])
    with pytest.raises(ValueError, match="upper must be > lower"):
        tf.image.stateless_random_saturation(img, 0.5, 0.5, seed=[1, 1])
    with pytest.raises(NotImplementedError, match="no JPEG codec"):
        tf.image.stateless_random_jpeg_quality(img, 50, 90, seed=[1, 1])
    # The stateful forms draw a new factor per run.
    r = tf.image.random_saturation(img, 0.2, 1.8)
    assert not np.array_equal(sess.run(r), sess.run(r))
