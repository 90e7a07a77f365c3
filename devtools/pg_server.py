"""A throwaway PostgreSQL server for tests and benchmarks: initdb in a temp folder, pg_ctl on a free
127.0.0.1 port, stopped and deleted afterwards. Debian's postgresql package provides the binaries
(.ci/run installs it). PostgreSQL refuses to run as root, so as root it runs as the `postgres` user (or
`nobody`) through runuser.

    with postgres_server() as server:
        server.url            # postgresql://gdn@127.0.0.1:PORT/postgres
        server.restart()      # stop and start again on the same folder and port
"""
from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

from devtools.app_server import free_port


def pg_bin(name: str) -> str:
    """initdb and pg_ctl: on PATH, else in Debian's /usr/lib/postgresql/<version>/bin."""
    found = shutil.which(name) or next(iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)), None)
    if not found:
        raise RuntimeError(f"{name} not found: install PostgreSQL (Debian: apt-get install postgresql)")
    return found


def _as_user() -> tuple[list[str], str | None]:
    """(command prefix, user name) to run PostgreSQL as someone other than root."""
    if os.geteuid() != 0:
        return [], None
    for user in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            pwd.getpwnam(user)
            return ["runuser", "-u", user, "--"], user
    raise RuntimeError("running as root and no postgres or nobody user to run PostgreSQL as")


class PostgresServer:
    def __init__(self, folder: Path, port: int, prefix: list[str]):
        self.folder, self.port, self.prefix = folder, port, prefix
        self.url = f"postgresql://gdn@127.0.0.1:{port}/postgres"

    def _ctl(self, *args: str) -> None:
        subprocess.run([*self.prefix, pg_bin("pg_ctl"), "-D", str(self.folder / "data"), "-w", "-t", "60",
                        "-l", str(self.folder / "server.log"), *args], check=True, capture_output=True)

    def start(self) -> None:
        options = f"-h 127.0.0.1 -p {self.port} -k {self.folder} -c fsync=on -c max_connections=200"
        self._ctl("-o", options, "start")

    def stop(self, mode: str = "fast") -> None:
        self._ctl("-m", mode, "stop")

    def restart(self) -> None:
        self.stop()
        self.start()


@contextlib.contextmanager
def postgres_server():
    prefix, user = _as_user()
    folder = Path(tempfile.mkdtemp(prefix="gdn-pg-"))
    if user:
        info = pwd.getpwnam(user)
        os.chown(folder, info.pw_uid, info.pw_gid)
    server = PostgresServer(folder, free_port(), prefix)
    try:
        subprocess.run([*prefix, pg_bin("initdb"), "-D", str(folder / "data"), "-U", "gdn", "--auth=trust",
                        "-E", "UTF8", "--no-instructions"], check=True, capture_output=True)
        server.start()
        yield server
    finally:
        with contextlib.suppress(subprocess.CalledProcessError, FileNotFoundError):
            server.stop("immediate")
        shutil.rmtree(folder, ignore_errors=True)
