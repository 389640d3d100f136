"""``tf.compat.v1.gfile``: TF1's file helpers, on local paths."""
import glob as _glob
import os
import shutil


def Exists(filename):  # noqa: N802 - TF's names
    return os.path.exists(filename)


def IsDirectory(dirname):  # noqa: N802
    return os.path.isdir(dirname)


def MakeDirs(dirname):  # noqa: N802
    os.makedirs(dirname, exist_ok=True)


def MkDir(dirname):  # noqa: N802
    os.mkdir(dirname)


def DeleteRecursively(dirname):  # noqa: N802
    shutil.rmtree(dirname)


def Remove(filename):  # noqa: N802
    os.remove(filename)


def ListDirectory(dirname):  # noqa: N802
    return os.listdir(dirname)


def Glob(filename):  # noqa: N802
    return _glob.glob(filename)


def Copy(oldpath, newpath, overwrite=False):  # noqa: N802
    if not overwrite and os.path.exists(newpath):
        raise FileExistsError("gfile.Copy: %s exists (pass overwrite=True)" % newpath)
    shutil.copyfile(oldpath, newpath)


def Rename(oldname, newname, overwrite=False):  # noqa: N802
    if not overwrite and os.path.exists(newname):
        raise FileExistsError("gfile.Rename: %s exists (pass overwrite=True)" % newname)
    os.replace(oldname, newname)


def GFile(name, mode="r"):  # noqa: N802
    return open(name, mode)


Open = GFile
FastGFile = GFile
