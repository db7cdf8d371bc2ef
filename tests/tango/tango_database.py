"""A private Tango database for tests: MariaDB (a plain mariadbd on a temp datadir, loopback port and socket)
plus Debian's DataBaseds (tango-db 9.3.4) on a loopback port of its own; both torn down on exit.

    from tango_database import TangoDatabase
    with TangoDatabase() as db:
        db.add_server("event_device/evdev", "EventDevice", ["test/evt/1"])
        env = db.env()                        # os.environ + TANGO_HOST=127.0.0.1:PORT
        ... start the server (no -nodb) with env; clients use f"tango://{db.tango_host}/test/evt/1"

Needs (Debian bookworm): mariadb-server, tango-db, libtango-tools (tango_admin). `TangoDatabase.available()`
says whether they are installed. The first instance in a process builds a template datadir with the Tango
schema (mariadb-install-db + create script, ~4 s); later instances copy it (~2 s per database)."""
import atexit
import getpass
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

MARIADBD = "/usr/sbin/mariadbd"
INSTALL_DB = "/usr/bin/mariadb-install-db"
MARIADB = "/usr/bin/mariadb"
DATABASEDS = "/usr/lib/tango/DataBaseds"
TANGO_ADMIN = "/usr/bin/tango_admin"
SCHEMA = "/usr/share/dbconfig-common/data/tango-db/install/mysql"  # sources create_db_tables.sql, stored_proc.sql

_template = None  # datadir with the tango schema, built once per process


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(what, predicate, timeout_s, proc=None, log=None):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        if proc is not None and proc.poll() is not None:
            break
        time.sleep(0.05)
    tail = open(log, errors="replace").read()[-3000:] if log and os.path.exists(log) else ""
    raise RuntimeError(f"{what} did not come up within {timeout_s} s:\n{tail}")


class _MariaDB:
    """One mariadbd on `datadir`, TCP 127.0.0.1:port and a unix socket in `rundir`."""

    def __init__(self, datadir, rundir):
        self.datadir, self.rundir = datadir, rundir
        self.port = free_port()
        self.socket = os.path.join(rundir, "mysqld.sock")
        self.log = os.path.join(rundir, "mariadb.err")
        self.proc = None

    def start(self):
        argv = [MARIADBD, "--no-defaults", f"--datadir={self.datadir}", f"--port={self.port}",
                "--bind-address=127.0.0.1", f"--socket={self.socket}", f"--pid-file={os.path.join(self.rundir, 'mysqld.pid')}",
                f"--log-error={self.log}", "--skip-name-resolve", "--skip-log-bin", "--innodb-buffer-pool-size=16M",
                "--innodb-log-file-size=8M"]
        if os.geteuid() == 0:
            argv.append("--user=root")
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
        _wait("mariadbd", lambda: self.sql("SELECT 1", check=False).returncode == 0, 30, self.proc, self.log)
        return self

    def sql(self, statements, database=None, stdin=None, check=True):
        argv = [MARIADB, "--no-defaults", f"--socket={self.socket}", "-uroot"] + ([database] if database else [])
        if statements is not None:
            argv += ["-e", statements]
        r = subprocess.run(argv, stdin=stdin, capture_output=True, text=True, timeout=60)
        if check and r.returncode != 0:
            raise RuntimeError(f"mariadb {statements or '<stdin>'}: {r.stderr}")
        return r

    def stop(self):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()  # SIGTERM: a clean shutdown
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        self.proc = None


def _build_template():
    """A datadir with the system tables, database `tango` (schema, stored procedures, DataBaseds/2 entries)
    and user tango/tango; mariadbd shut down cleanly so the directory can be copied."""
    global _template
    if _template and os.path.isdir(_template):
        return _template
    root = tempfile.mkdtemp(prefix="tangodb-template-")
    datadir = os.path.join(root, "data")
    argv = [INSTALL_DB, "--no-defaults", f"--datadir={datadir}", "--auth-root-authentication-method=normal",
            "--skip-test-db", "--skip-name-resolve", f"--user={getpass.getuser()}"]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError(f"mariadb-install-db failed:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    try:
        m = _MariaDB(datadir, root).start()
    except BaseException:
        shutil.rmtree(root, True)
        raise
    try:
        m.sql("CREATE DATABASE tango; "
              "CREATE USER 'tango'@'127.0.0.1' IDENTIFIED BY 'tango'; CREATE USER 'tango'@'localhost' IDENTIFIED BY 'tango'; "
              "GRANT ALL ON tango.* TO 'tango'@'127.0.0.1'; GRANT ALL ON tango.* TO 'tango'@'localhost';")
        with open(SCHEMA) as f:
            m.sql(None, database="tango", stdin=f)
    finally:
        m.stop()
    _template = datadir
    atexit.register(shutil.rmtree, root, True)
    return datadir


class TangoDatabase:
    """Context manager: MariaDB + DataBaseds on free loopback ports in a temp dir. Attributes: tango_host
    ("127.0.0.1:PORT"), port, mysql_port, dir; methods env(), add_server(), admin()."""

    def __init__(self, instance="2"):
        self.instance = instance  # the schema registers DataBaseds/2 (sys/database/2)
        self.dir = None
        self.maria = None
        self.dbds = None
        self.port = None
        self.tango_host = None

    @staticmethod
    def available():
        return all(os.access(p, os.X_OK) for p in (MARIADBD, INSTALL_DB, MARIADB, DATABASEDS, TANGO_ADMIN)) \
            and os.path.exists(SCHEMA)

    def env(self, base=None):
        return dict(os.environ if base is None else base, TANGO_HOST=self.tango_host)

    def admin(self, *args, check=True):
        r = subprocess.run([TANGO_ADMIN, *args], env=self.env(), capture_output=True, text=True, timeout=60)
        if check and r.returncode != 0:
            raise RuntimeError(f"tango_admin {' '.join(args)} exited {r.returncode}: {r.stdout}{r.stderr}")
        return r

    def add_server(self, server, cls, devices):
        """Registers `server` ("exec/instance") with class `cls` and devices (a list or one name)."""
        devices = [devices] if isinstance(devices, str) else list(devices)
        self.admin("--add-server", server, cls, ",".join(devices))

    def __enter__(self):
        template = _build_template()
        self.dir = tempfile.mkdtemp(prefix="tangodb-")
        try:
            datadir = os.path.join(self.dir, "data")
            shutil.copytree(template, datadir, symlinks=True)
            self.maria = _MariaDB(datadir, self.dir).start()
            self.port = free_port()
            self.tango_host = f"127.0.0.1:{self.port}"
            log_path = os.path.join(self.dir, "databaseds.log")
            env = dict(os.environ, MYSQL_HOST=f"127.0.0.1:{self.maria.port}", MYSQL_USER="tango", MYSQL_PASSWORD="tango",
                       MYSQL_DATABASE="tango", TANGO_HOST=self.tango_host)
            with open(log_path, "w") as log:
                self.dbds = subprocess.Popen([DATABASEDS, self.instance, "-ORBendPoint", f"giop:tcp:127.0.0.1:{self.port}"],
                                             env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                             start_new_session=True)
            _wait("DataBaseds", lambda: self.admin("--ping-database", "1", check=False).returncode == 0, 30,
                  self.dbds, log_path)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        if self.dbds is not None:
            if self.dbds.poll() is None:
                os.killpg(self.dbds.pid, signal.SIGKILL)
            self.dbds.wait(10)
            self.dbds = None
        if self.maria is not None:
            self.maria.stop()
            self.maria = None
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
        return False


if __name__ == "__main__":  # self-check: times a database coming up and a registration
    t0 = time.monotonic()
    with TangoDatabase() as db:
        t1 = time.monotonic()
        db.add_server("event_device/evdev", "EventDevice", ["test/evt/1"])
        print(f"TANGO_HOST={db.tango_host} up in {t1 - t0:.2f} s; registered in {time.monotonic() - t1:.2f} s")
        print(db.admin("--check-device", "test/evt/1", check=False).returncode)
    t2 = time.monotonic()
    with TangoDatabase() as db:
        print(f"second database up in {time.monotonic() - t2:.2f} s ({db.tango_host})")
