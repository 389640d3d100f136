"""``tf.io.gfile``: TensorFlow's file API on local paths (``file://`` URLs too).

    with tf.io.gfile.GFile("/tmp/run/labels.txt", "w") as f:
        f.write("cat\\n")
    tf.io.gfile.exists("/tmp/run/labels.txt")          # True

Failures are weft.errors as TensorFlow raises them: a missing path is a NotFoundError, an existing
destination an AlreadyExistsError. Remote file systems (gs://, hdfs://, s3://) are not supported:
such a path raises UnimplementedError (a NotImplementedError); copy the files to a local disk.
"""
import collections
import contextlib
import glob as _glob
import io
import os
import re
import shutil

from .. import errors as _errors

FileStatistics = collections.namedtuple("FileStatistics", ["length", "mtime_nsec", "is_directory"])


def _local(path, what):
    """The local path for ``path`` (str, bytes or os.PathLike; ``file://`` stripped)."""
    path = os.fsdecode(os.fspath(path))
    m = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*)://", path)
    if m:
        if m.group(1).lower() == "file":
            return path[len(m.group(0)):]
        raise _errors.UnimplementedError("gfile.%s(%r): weft reads and writes local files only, not the %s:// file "
                                         "system; copy the files to a local disk" % (what, path, m.group(1)))
    return path


@contextlib.contextmanager
def _as_weft_errors(what, path):
    """OSErrors as the weft.errors TensorFlow raises for them, naming the call and the path."""
    try:
        yield
    except FileNotFoundError as e:
        raise _errors.NotFoundError("gfile.%s: %s: %s" % (what, path, e.strerror)) from e
    except FileExistsError as e:
        raise _errors.AlreadyExistsError("gfile.%s: %s: %s" % (what, path, e.strerror)) from e
    except OSError as e:
        raise _errors.Error("gfile.%s: %s: %s" % (what, path, e.strerror or e), code="PermissionDenied"
                            if isinstance(e, PermissionError) else "FailedPrecondition") from e


def exists(path):
    """Whether ``path`` (a file or a directory) exists."""
    return os.path.exists(_local(path, "exists"))


def isdir(path):
    return os.path.isdir(_local(path, "isdir"))


def makedirs(path):
    """Creates ``path`` and its missing parents; an existing directory is fine."""
    p = _local(path, "makedirs")
    with _as_weft_errors("makedirs", p):
        os.makedirs(p, exist_ok=True)


def mkdir(path):
    """Creates one directory (its parent must exist; AlreadyExistsError when it exists)."""
    p = _local(path, "mkdir")
    with _as_weft_errors("mkdir", p):
        os.mkdir(p)


def listdir(path):
    """The names in directory ``path`` (not . or ..), unordered as TensorFlow's."""
    p = _local(path, "listdir")
    if not os.path.isdir(p):
        raise _errors.NotFoundError("gfile.listdir: %s: could not find directory" % p)
    with _as_weft_errors("listdir", p):
        return os.listdir(p)


def glob(pattern):
    """The paths that match ``pattern`` (``*``, ``?``, ``[...]``); a list of strings."""
    patterns = [pattern] if isinstance(pattern, (str, bytes, os.PathLike)) else list(pattern)
    out = []
    for p in patterns:
        out += _glob.glob(_local(p, "glob"))
    return out


def remove(path):
    """Deletes a file (NotFoundError when there is none)."""
    p = _local(path, "remove")
    with _as_weft_errors("remove", p):
        os.remove(p)


def rmtree(path):
    """Deletes a directory and everything under it."""
    p = _local(path, "rmtree")
    if not os.path.exists(p):
        raise _errors.NotFoundError("gfile.rmtree: %s: no such directory" % p)
    with _as_weft_errors("rmtree", p):
        shutil.rmtree(p)


def _check_target(dst, overwrite, what):
    if not overwrite and os.path.exists(dst):
        raise _errors.AlreadyExistsError("gfile.%s: %s exists (pass overwrite=True to replace it)" % (what, dst))


def rename(src, dst, overwrite=False):
    """Moves ``src`` to ``dst``; an existing ``dst`` is an AlreadyExistsError unless ``overwrite``."""
    s, d = _local(src, "rename"), _local(dst, "rename")
    _check_target(d, overwrite, "rename")
    with _as_weft_errors("rename", s):
        os.replace(s, d)


def copy(src, dst, overwrite=False):
    """Copies file ``src`` to ``dst``; an existing ``dst`` is an AlreadyExistsError unless ``overwrite``."""
    s, d = _local(src, "copy"), _local(dst, "copy")
    _check_target(d, overwrite, "copy")
    with _as_weft_errors("copy", s):
        shutil.copyfile(s, d)


def stat(path):
    """FileStatistics(length, mtime_nsec, is_directory) of ``path``."""
    p = _local(path, "stat")
    with _as_weft_errors("stat", p):
        st = os.stat(p)
    return FileStatistics(st.st_size, st.st_mtime_ns, os.path.isdir(p))


def walk(top, topdown=True, onerror=None):
    """(dirname, subdirectory names, file names) for ``top`` and every directory under it, as os.walk."""
    return os.walk(_local(top, "walk"), topdown=topdown, onerror=onerror)


def join(path, *paths):
    return os.path.join(path, *paths)


class GFile(io.IOBase):
    """A file object (``with GFile(path, "w") as f: f.write(text)``): modes r, w, a and their b / +
    forms; text modes give and take str, binary modes bytes. ``size()`` is TensorFlow's addition."""

    def __init__(self, name, mode="r"):
        self.name = _local(name, "GFile")
        self.mode = mode
        if not re.fullmatch(r"[rwa]\+?b?|[rwa]b\+", mode):
            raise _errors.InvalidArgumentError("gfile.GFile(%r, mode=%r): mode must be r, w or a, with b and + as "
                                               "open() takes them" % (self.name, mode))
        with _as_weft_errors("GFile", self.name):
            self._f = open(self.name, mode) if "b" in mode else open(self.name, mode, encoding="utf-8")

    def read(self, n=-1):
        return self._f.read(n)

    def readline(self, limit=-1):
        return self._f.readline(limit)

    def readlines(self, hint=-1):
        return self._f.readlines(hint)

    def write(self, data):
        return self._f.write(data)

    def seek(self, offset, whence=0):
        return self._f.seek(offset, whence)

    def tell(self):
        return self._f.tell()

    def flush(self):
        if not self._f.closed:
            self._f.flush()

    def size(self):
        """The file's length in bytes (after flushing what was written)."""
        self._f.flush()
        return os.path.getsize(self.name)

    def close(self):
        self._f.close()
        super().close()

    def __iter__(self):
        return iter(self._f)

    def __next__(self):
        return next(self._f)

    def readable(self):
        return self._f.readable()

    def writable(self):
        return self._f.writable()

    def seekable(self):
        return True


Open = GFile

__all__ = ["FileStatistics", "exists", "isdir", "makedirs", "mkdir", "listdir", "glob", "remove", "rmtree", "rename",
           "copy", "stat", "walk", "join", "GFile", "Open"]
