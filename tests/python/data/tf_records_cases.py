"""Datasets whose cardinality tests/python/test_data_transforms.py compares with TensorFlow's, built
by the same code under TensorFlow (gen_tf_records_reference.py) and weft (``tf`` is either)."""


def cardinality_cases(tf):
    D = tf.data.Dataset
    inf = D.range(5).repeat()
    fin = D.range(5)
    return {
        "flat_map_inf": inf.flat_map(lambda x: D.from_tensors(x)),
        "flat_map_fin": fin.flat_map(lambda x: D.from_tensors(x)),
        "interleave_inf": inf.interleave(lambda x: D.from_tensors(x), cycle_length=2),
        "gbw_inf": inf.group_by_window(lambda x: x % 2, lambda k, w: w.batch(2), window_size=2),
        "gbw_fin": fin.group_by_window(lambda x: x % 2, lambda k, w: w.batch(2), window_size=2),
        "take_while_inf": inf.take_while(lambda x: x < 3), "take_while_fin": fin.take_while(lambda x: x < 3),
        "unique_inf": inf.unique(), "unique_fin": fin.unique(),
        "scan_fin": fin.scan(tf.constant(0, tf.int64), lambda s, x: (s, x)),
        "scan_inf": inf.scan(tf.constant(0, tf.int64), lambda s, x: (s, x)),
        "ignore_errors_fin": fin.ignore_errors(), "ignore_errors_inf": inf.ignore_errors(),
        "sample_fin": D.sample_from_datasets([fin, fin]), "sample_inf": D.sample_from_datasets([inf, inf]),
        "sample_mixed": D.sample_from_datasets([inf, fin]),
        "choose_fin": D.choose_from_datasets([fin, fin], D.range(2).repeat(2)),
        "counter": D.counter(), "random": D.random(seed=1),
        "rejection": fin.rejection_resample(lambda x: tf.cast(x % 2, tf.int32), [0.5, 0.5]),
        "bucket_fin": D.from_tensor_slices([[1], [2]]).bucket_by_sequence_length(lambda e: tf.shape(e)[0], [3], [2, 2]),
    }
