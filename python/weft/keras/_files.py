"""keras.utils.get_file without downloads: weft never fetches from the network at run time, so
get_file returns the file when it is already in Keras' cache (``~/.keras/datasets`` by default,
``$KERAS_HOME`` replacing ``~/.keras``) and otherwise says which URL to fetch and where to put it."""
import hashlib
import os
import shutil
import tarfile
import urllib.parse


def _cache_dir(cache_dir):
    if cache_dir is None:
        cache_dir = os.environ.get("KERAS_HOME") or os.path.join(os.path.expanduser("~"), ".keras")
    return os.path.expanduser(cache_dir)


def _hash(path, algorithm):
    h = hashlib.sha256() if algorithm == "sha256" else hashlib.md5()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def get_file(fname=None, origin=None, untar=False, md5_hash=None, file_hash=None, cache_subdir="datasets",
             hash_algorithm="auto", extract=False, archive_format="auto", cache_dir=None, force_download=False):
    """The local path of ``fname`` (default: the last part of ``origin``'s URL) under
    ``cache_dir/cache_subdir``. The file must be there already (weft downloads nothing): else
    FileNotFoundError naming ``origin`` and the path to save it to. With ``file_hash`` (or
    ``md5_hash``) the cached file is checked (ValueError on a mismatch). ``untar=True`` (Keras 2):
    the cached archive is ``fname + '.tar.gz'``, extracted into the cache directory, and the path of
    ``fname`` there is returned; ``extract=True``: the archive is extracted beside itself and its own
    path returned (Keras 2's behaviour)."""
    if origin is None:
        raise ValueError('Please specify the "origin" argument (URL of the file to download).')
    if force_download:
        raise NotImplementedError("get_file(force_download=True): weft does not download files; fetch %s yourself"
                                  % origin)
    if not fname:
        fname = os.path.basename(urllib.parse.urlsplit(origin).path)
        if not fname:
            raise ValueError("get_file: cannot take a file name from origin %r; pass fname" % (origin,))
    datadir = os.path.join(_cache_dir(cache_dir), cache_subdir)
    fname = os.fspath(fname)
    if untar:
        target = os.path.join(datadir, fname)
        if os.path.exists(target):
            return target
        fname += ".tar.gz"
    fpath = os.path.join(datadir, fname)
    if not os.path.exists(fpath):
        raise FileNotFoundError("get_file: %s is not in the cache and weft does not download at run time. Download %s "
                                "and save it as %s" % (fname, origin, fpath))
    want = file_hash or md5_hash
    if want:
        algorithm = hash_algorithm if hash_algorithm in ("sha256", "md5") else (
            "sha256" if md5_hash is None and len(want) == 64 else "md5")
        got = _hash(fpath, algorithm)
        if got != want:
            raise ValueError("get_file: %s has %s hash %s, not the expected %s (a partial or different download of %s)"
                             % (fpath, algorithm, got, want, origin))
    if untar or extract:
        _extract(fpath, datadir, archive_format)
    return os.path.join(datadir, fname[:-len(".tar.gz")]) if untar else fpath


def _extract(path, into, archive_format):
    formats = {"auto": ("tar", "zip"), "tar": ("tar",), "zip": ("zip",)}.get(archive_format or "auto")
    if formats is None:
        raise ValueError("get_file: archive_format must be 'auto', 'tar' or 'zip', got %r" % (archive_format,))
    import zipfile
    if "tar" in formats and tarfile.is_tarfile(path):
        with tarfile.open(path) as t:
            t.extractall(into, filter="data") if hasattr(tarfile, "data_filter") else t.extractall(into)
    elif "zip" in formats and zipfile.is_zipfile(path):
        shutil.unpack_archive(path, into, "zip")
    else:
        raise ValueError("get_file: %s is not a %s archive" % (path, " or ".join(formats)))
