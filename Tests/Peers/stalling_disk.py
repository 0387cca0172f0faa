#!/usr/bin/python3
"""A folder whose disk stalls: a FUSE file system that passes everything through to a backing
folder, except that each fsync/fdatasync and each unlink first waits --stall-ms, as a busy or
slow disk (an SD card, a device discarding a deleted file's blocks) makes them wait.

Prints "mounted" on standard error once the file system is up. On SIGTERM it unmounts and
prints one JSON line on standard output: how many syncs and unlinks it stalled.
"""
import argparse, errno, json, os, sys, threading, time
from fusepy import FUSE, FuseOSError, Operations


class StallingDisk(Operations):
    def __init__(self, root, stall):
        self.root, self.stall = root, stall
        self.lock = threading.Lock()
        self.counts = {"syncs": 0, "unlinks": 0}

    def _path(self, path):
        return os.path.join(self.root, path.lstrip("/"))

    def _stalled(self, what):
        with self.lock:
            self.counts[what] += 1
        time.sleep(self.stall)

    def _call(self, function, *arguments):
        try:
            return function(*arguments)
        except OSError as error:
            raise FuseOSError(error.errno or errno.EIO)

    def init(self, path):
        print("mounted", file=sys.stderr, flush=True)

    def getattr(self, path, fh=None):
        st = self._call(os.lstat, self._path(path))
        return {key: getattr(st, key) for key in
                ("st_atime", "st_ctime", "st_mtime", "st_gid", "st_uid", "st_mode", "st_nlink", "st_size")}

    def readdir(self, path, fh):
        return [".", ".."] + self._call(os.listdir, self._path(path))

    def mkdir(self, path, mode):
        self._call(os.mkdir, self._path(path), mode)

    def rmdir(self, path):
        self._call(os.rmdir, self._path(path))

    def create(self, path, mode, fi=None):
        return self._call(os.open, self._path(path), os.O_RDWR | os.O_CREAT | os.O_EXCL, mode)

    def open(self, path, flags):
        return self._call(os.open, self._path(path), flags & ~os.O_CREAT)

    def read(self, path, size, offset, fh):
        return self._call(os.pread, fh, size, offset)

    def write(self, path, data, offset, fh):
        return self._call(os.pwrite, fh, data, offset)

    def truncate(self, path, length, fh=None):
        self._call(os.truncate, self._path(path), length)

    def flush(self, path, fh):
        return 0

    def release(self, path, fh):
        self._call(os.close, fh)

    def fsync(self, path, datasync, fh):
        self._stalled("syncs")
        self._call(os.fdatasync if datasync else os.fsync, fh)

    def unlink(self, path):
        self._stalled("unlinks")
        self._call(os.unlink, self._path(path))

    def rename(self, old, new):
        self._call(os.rename, self._path(old), self._path(new))

    def statfs(self, path):
        st = self._call(os.statvfs, self._path(path))
        return {key: getattr(st, key) for key in
                ("f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail", "f_ffree", "f_files", "f_flag",
                 "f_frsize", "f_namemax")}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--backing", required=True)
    parser.add_argument("--mount", required=True)
    parser.add_argument("--stall-ms", type=int, required=True)
    options = parser.parse_args()
    disk = StallingDisk(options.backing, options.stall_ms / 1000)
    # libfuse ends its loop and unmounts on SIGTERM.
    FUSE(disk, options.mount, foreground=True, nothreads=False)
    print(json.dumps(disk.counts), flush=True)


if __name__ == "__main__":
    main()
