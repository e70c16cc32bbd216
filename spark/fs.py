"""Hadoop FileSystem operations on the driver (local, hdfs://, s3a://, … alike) for committing output."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class FileSystem:
    """A thin wrapper over org.apache.hadoop.fs.FileSystem for one root path."""

    spark: object
    root: str

    def __post_init__(self) -> None:
        jvm = self.spark._jvm
        self._Path = jvm.org.apache.hadoop.fs.Path
        conf = self.spark._jsc.hadoopConfiguration()
        self._fs = self._Path(self.root).getFileSystem(conf)

    def path(self, *parts: str):
        return self._Path("/".join([self.root.rstrip("/"), *parts]) if parts else self.root)

    def exists(self, *parts: str) -> bool:
        return bool(self._fs.exists(self.path(*parts)))

    def delete(self, *parts: str) -> None:
        p = self.path(*parts)
        if self._fs.exists(p):
            self._fs.delete(p, True)

    def mkdirs(self, *parts: str) -> None:
        self._fs.mkdirs(self.path(*parts))

    def rename(self, src, dst) -> None:
        if not self._fs.rename(src, dst):
            raise OSError(f"could not move {src} to {dst}")

    def list(self, *parts: str) -> list:
        p = self.path(*parts)
        if not self._fs.exists(p):
            return []
        return sorted(self._fs.listStatus(p), key=lambda s: s.getPath().getName())

    def walk_files(self, *parts: str) -> list:
        """Every file under a folder (recursively), sorted by path."""
        out, todo = [], [self.path(*parts)]
        while todo:
            p = todo.pop()
            if not self._fs.exists(p):
                continue
            for status in self._fs.listStatus(p):
                (todo if status.isDirectory() else out).append(status.getPath())
        return sorted(out, key=lambda q: q.toString())

    def write_text(self, name: str, text: str) -> None:
        stream = self._fs.create(self.path(name), True)
        try:
            stream.write(bytearray(text.encode("utf-8")))
        finally:
            stream.close()

    def read_text(self, name: str) -> str:
        stream = self._fs.open(self.path(name))
        try:
            data = bytearray()
            buf = self.spark._jvm.java.io.ByteArrayOutputStream()
            self.spark._jvm.org.apache.hadoop.io.IOUtils.copyBytes(stream, buf, 65536, False)
            data = bytes(buf.toByteArray())
        finally:
            stream.close()
        return data.decode("utf-8")
