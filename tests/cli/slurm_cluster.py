"""A real single-node Slurm cluster for tests: munged, slurmctld and slurmd run in the foreground from a
generated config in a private temp folder, and are torn down again.

    with SlurmCluster(gpus=2) as cluster:
        job = cluster.run("sbatch", "--parsable", "--gres=gpu:1", "--wrap", "true").stdout.strip()
        cluster.wait_idle()

Needs Debian's `slurmctld slurmd slurm-client munge` (Slurm 22.05, munge 0.5.15) and root (slurmd
starts each job as its submitting user; the gpu device nodes are made with mknod). Nothing in /etc
or /var is read or written: the munge key, its socket, the configs, the state and spool folders, the
pid files and the logs all live in the cluster's folder, and the two Slurm ports are free loopback
ports picked at start, so two clusters (or one left over from a killed run) never meet. No systemd
and no cgroups are used: proctrack/linuxproc, task/none, jobacct_gather/none,
accounting_storage/none.

The node has `gpus` GRES gpus backed by character devices in the folder (made with mknod like
/dev/null, or symlinks to /dev/null where mknod is refused): a task given --gres=gpu:1 (or
--gpus-per-task=1) gets CUDA_VISIBLE_DEVICES and SLURM_JOB_GPUS set to its own index, and at most
`gpus` such tasks run at once.

Without slurmdbd there is no `sacct` (it fails: no accounting storage). squeue shows pending,
running and completing jobs; `squeue -t all` and `scontrol show job` also show finished ones
(COMPLETED, FAILED, CANCELLED, with ExitCode and Reason) until slurmctld purges them, MinJobAge to
2*MinJobAge seconds after they end.

`scontrol requeue JOB_TASK` (a preempted task, as a client sees it) sends the running task SIGTERM
(SIGKILL KillWait=1 s later), puts it back to PENDING (Reason=BeginTime) and starts it again
cred_expire + 1 = 6 s later with SLURM_RESTART_COUNT=1; its --output is truncated unless
--open-mode=append. A FAILED job still in memory can be requeued too.

Teardown (close(), __exit__, or for a cluster never closed when it is garbage-collected or at
interpreter exit) cancels the jobs, stops the daemons and kills whatever is left of them and their
jobs (anything still running with the cluster's `env`, e.g. a client under test, counts as the
cluster's). If the test process dies without tearing down, the daemons get SIGTERM (all gone a few
seconds later), and the next cluster started removes the folder of one whose test process is gone.

Stdlib only (Python 3.11).
"""
import os
import re
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import weakref

FOLDER_PREFIX = "vkgraphy-slurm-"
MARKER = "VKGRAPHY_SLURM_CLUSTER"  # in every daemon's (and so every job's) environment: the folder
KEEP_ENV = "VKGRAPHY_SLURM_KEEP"  # set (to anything): teardown keeps the folder (configs, logs) for a look
STARTUP_TIMEOUT = 30.0
SBIN = ("/usr/sbin", "/sbin", "/usr/local/sbin")

# Client commands take these from the environment; a test run inside a Slurm job (or with a user's
# SBATCH_* defaults) must not leak them into the cluster's jobs.
CLIENT_ENV_PREFIXES = ("SLURM_", "SBATCH_", "SALLOC_", "SRUN_", "SQUEUE_", "SINFO_", "SCONTROL_",
                       "SCANCEL_", "SACCT_", "SPANK_")

# Why each setting (Slurm 22.05, slurm.conf(5)):
CONFIG = """\
ClusterName={cluster}
SlurmctldHost={host}(127.0.0.1)
# Free loopback ports picked at start: no clash with another cluster or a system Slurm.
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
# The cluster's own munged: auth (client <-> daemons) and job credentials (slurmctld -> slurmd)
# both read the socket from AuthInfo. cred_expire: a job credential's lifetime (default 120 s, at
# least 5) -- and how long a requeued job must wait before it may start again (cred_expire + 1 s).
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={munge_socket},cred_expire={cred_expire}
StateSaveLocation={folder}/ctld-state
SlurmdSpoolDir={folder}/slurmd-spool
SlurmctldPidFile={folder}/slurmctld.pid
SlurmdPidFile={folder}/slurmd.pid
SlurmctldLogFile={folder}/slurmctld.log
SlurmdLogFile={folder}/slurmd.log
SlurmctldDebug={debug}
SlurmdDebug={debug}
TmpFS={folder}/tmp
# Our own (empty) SPANK stack, not /etc/slurm/plugstack.conf.
PlugStackConfig={folder}/plugstack.conf
MailProg=/bin/true
# No systemd, no cgroups: track job processes through /proc, bind nothing, gather nothing, store
# nothing (no slurmdbd, so no sacct).
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
LaunchType=launch/slurm
PreemptType=preempt/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
# Use the node's CPUs/gres as configured here, not as slurmd finds them (a test may ask for more
# CPUs than this machine has), so the node never drains for "Low CPUs".
SlurmdParameters=config_overrides
# Fast scheduling for tests. slurmctld never starts a batch job inside the sbatch RPC: its background
# loop (1 s ticks, whole seconds) runs the main scheduler batch_sched_delay (default 3) s after a
# submit and a full pass every sched_interval (default 60) s; backfill runs every bf_interval
# (default 30) s. At 0/1/1 a submitted job starts on the next tick: 0-1 s after sbatch, and a
# pending array task 1 s after a running one ends. sched_min_interval=0: no rate limit on passes.
# (SchedulerTimeSlice only matters to gang scheduling, which is off: PreemptType=preempt/none.)
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_interval=1,bf_interval=1,sched_min_interval=0
# A node that restarts (or registers late) comes back by itself, never stays DOWN.
ReturnToService=2
# Give up on an unresponsive peer in 5 s, not 10 (e.g. a client while slurmctld is stopping);
# slurmctld pings slurmd every SlurmdTimeout/3 = 10 s and marks it DOWN after 30 s of silence (300 by
# default); SlurmctldTimeout only matters with a backup controller (none), set for symmetry.
MessageTimeout=5
SlurmdTimeout=30
SlurmctldTimeout=30
# 0 (the default, spelled out): never end a job because its srun/salloc stopped answering (a test
# may stop a client); batch jobs are exempt anyway.
InactiveLimit=0
# Cancelled / requeued / timed-out tasks: 1 s between SIGTERM and SIGKILL.
KillWait=1
# Finished jobs stay visible (`scontrol show job`, `squeue -t all`: state, ExitCode) for at least
# this many seconds: long enough for a poller to see them, short enough for a test's jobs to drop
# out soon after. slurmctld purges every max(10, MinJobAge) s (when MinJobAge < 60; else every 60 s),
# so a finished job is gone MinJobAge..2*MinJobAge s after it ends.
MinJobAge={min_job_age}
# Batch jobs are requeueable by default (sbatch --no-requeue opts out): `scontrol requeue` refuses a
# job that is not ("Requested operation is presently disabled"); a client retries failed or
# preempted tasks that way.
JobRequeue=1
# A batch launch that takes longer than this drains the node (default 10 s): on a busy 2-core machine,
# allow slow starts.
BatchStartTimeout=20
NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory} Gres=gpu:{gpus} State=UNKNOWN
PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
"""


class SlurmUnavailable(Exception):
    """The cluster cannot run here: what is missing, or which daemon failed and the tail of its log."""


def _which(name):
    return shutil.which(name) or shutil.which(name, path=os.pathsep.join(SBIN))


def _free_ports(count):
    """`count` distinct free TCP ports (all held open while picking, so they differ)."""
    socks = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(count)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _tail(path, lines=25):
    try:
        with open(path, errors="replace") as f:
            text = f.read().splitlines()[-lines:]
    except OSError:
        return "    (no %s)" % os.path.basename(path)
    return "\n".join("    " + line for line in text) or "    (%s is empty)" % os.path.basename(path)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _proc_table():
    """{pid: (ppid, environ bytes or None)} for every process but this one."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        try:
            with open("/proc/%s/environ" % entry, "rb") as f:
                environ = b"\0" + f.read()
        except OSError:
            environ = None
        table[int(entry)] = (ppid, environ)
    return table


def _cluster_pids(folder, roots=()):
    """The processes of the cluster in `folder`: those whose environment carries MARKER=folder (the
    daemons; slurmstepd, which slurmd execs with its environment; job tasks, which get the client's
    environment from sbatch), `roots`, and all their descendants (tasks run with --export=NONE)."""
    needle = ("\0%s=%s\0" % (MARKER, folder)).encode()
    table = _proc_table()
    found = {pid for pid, (_, env) in table.items() if env and needle in env + b"\0"}
    found |= {pid for pid in roots if pid in table}
    children = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    todo = list(found)
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _kill_cluster(folder, roots=(), grace=2.0):
    """SIGTERM, then SIGKILL after `grace` seconds, whatever is left of the cluster in `folder` (normally
    nothing: slurmd's reaper ends the jobs' processes; this catches what escaped it, e.g. a leftover
    cluster's or a killed reaper's); then wait (at most 2 s) until the killed processes are reaped. An
    orphan's zombie belongs to pid 1, which in some containers reaps late: `pgrep -a slurm` may then
    list `[slurmstepd] <defunct>` for a moment; it runs nothing."""
    killed = set()
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 2.0)):
        pids = [p for p in _cluster_pids(folder, roots) if not _zombie(p)]
        for pid in pids:
            try:
                os.kill(pid, sig)
                killed.add(pid)
            except OSError:
                pass
        deadline = time.monotonic() + wait
        while pids and time.monotonic() < deadline:
            time.sleep(0.05)
            pids = [p for p in pids if _alive(p) and not _zombie(p)]
        if not pids:
            break
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline and any(os.path.exists("/proc/%d" % p) for p in killed):
        time.sleep(0.05)


def _zombie(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def reap_leftovers(tmpdir=None):
    """Kill the processes of, and remove, cluster folders whose owning test process is gone (a run that
    was SIGKILLed before it could tear down)."""
    tmpdir = tmpdir or tempfile.gettempdir()
    for name in os.listdir(tmpdir):
        folder = os.path.join(tmpdir, name)
        if (not name.startswith(FOLDER_PREFIX) or not os.path.isdir(folder)
                or os.path.exists(os.path.join(folder, "kept"))):
            continue
        try:
            with open(os.path.join(folder, "owner.pid")) as f:
                owner = int(f.read())
        except (OSError, ValueError):
            owner = None
        if owner is not None and _alive(owner):
            continue
        if owner is None and time.time() - os.stat(folder).st_mtime < 60:
            continue  # being created right now
        _kill_cluster(folder, grace=1.0)
        shutil.rmtree(folder, ignore_errors=True)


# slurmd runs under this small reaper (`python3 -c REAPER slurmd ARGS`). slurmd double-forks slurmstepd,
# so every job's slurmstepd is an orphan: normally pid 1's child, whose zombie lingers where pid 1 reaps
# late (a container's init, or a test runner that is pid 1) and which outlives slurmd. As a child
# subreaper the wrapper adopts slurmstepd and the job tasks instead: it reaps them as they end, and
# when slurmd exits (teardown, or a crash) it ends whatever slurmd left running before it exits itself.
# Signals it gets (SIGTERM from teardown or from the parent-death signal) go on to slurmd (SIGKILL 5 s
# later if it is still there).
REAPER = r"""
import ctypes, os, signal, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
pid = os.fork()
if pid == 0:
    libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG: slurmd goes when the reaper goes
    os.execv(sys.argv[1], sys.argv[1:])
def forward(sig, frame):
    os.kill(pid, sig)
    signal.alarm(5)  # slurmd gets 5 s to shut down, then SIGKILL
for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(sig, forward)
signal.signal(signal.SIGALRM, lambda s, f: os.kill(pid, signal.SIGKILL))
code = 1
while True:
    try:
        wpid, status = os.wait()
    except ChildProcessError:
        break
    if wpid == pid:
        code = os.waitstatus_to_exitcode(status)
        break
signal.alarm(0)
for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(sig, signal.SIG_IGN)  # slurmd is gone; finish the cleanup below

def descendants():
    parent = {}
    for e in os.listdir("/proc"):
        try:
            with open("/proc/%s/stat" % e) as f:
                parent[int(e)] = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            pass
    found, todo = set(), [os.getpid()]
    while todo:
        p = todo.pop()
        for c, pp in parent.items():
            if pp == p and c not in found:
                found.add(c)
                todo.append(c)
    return found

deadline = time.monotonic() + 1.0
while True:
    left = descendants()
    for p in left:
        try:
            os.kill(p, signal.SIGTERM if time.monotonic() < deadline else signal.SIGKILL)
        except OSError:
            pass
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        if not left:
            break
    time.sleep(0.05)
sys.exit(code if code >= 0 else 128 - code)
"""


def _set_parent_death_signal():
    """preexec_fn: the daemon gets SIGTERM when the test process dies (even by SIGKILL), so a crashed run
    leaves no daemons behind. Linux only; silently skipped elsewhere."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - best effort
        pass


class SlurmCluster:
    """A one-node Slurm cluster (context manager). See the module's docstring."""

    def __init__(self, gpus=2, cpus=None, min_job_age=15, memory=1024, cred_expire=5, debug="info"):
        self.gpus = int(gpus)
        self.cpus = int(cpus or os.cpu_count() or 1)
        self.min_job_age = int(min_job_age)
        self.memory = int(memory)
        self.cred_expire = max(5, int(cred_expire))  # requeued jobs wait this + 1 s
        self.debug = debug  # SlurmctldDebug/SlurmdDebug: info, debug, debug2, ...
        self.host = socket.gethostname().split(".")[0]
        self.folder = None
        self.work = None  # a folder for the tests' job scripts and outputs (removed with the cluster)
        self.conf_path = None
        self.env = None
        self.startup_seconds = None
        self._procs = {}
        self._ctx = None
        self._finalizer = None

    # ---- start -----------------------------------------------------------------------------------
    def __enter__(self):
        binaries = self._find_binaries()
        if os.geteuid() != 0:
            raise SlurmUnavailable("a single-node Slurm cluster needs root (slurmd runs jobs as their user); "
                                   "running as uid %d" % os.geteuid())
        reap_leftovers()
        start = time.monotonic()
        self.folder = tempfile.mkdtemp(prefix=FOLDER_PREFIX)
        # Torn down by close(), or at interpreter exit (weakref.finalize runs then, like atexit) for a
        # cluster never closed. The finalizer holds the state, not the cluster (no cycle).
        self._ctx = {"folder": self.folder, "procs": self._procs, "env": None}
        self._finalizer = weakref.finalize(self, _teardown, self._ctx)
        try:
            self._write_files()
            self._start_munged(binaries["munged"])
            # -D: foreground (a child we can wait on and signal); -f: our config; -N: the node's name.
            self._popen("slurmctld", [binaries["slurmctld"], "-D", "-f", self.conf_path])
            python = sys.executable or shutil.which("python3") or "/usr/bin/python3"
            self._popen("slurmd", [python, "-c", REAPER, binaries["slurmd"], "-D", "-f", self.conf_path,
                                   "-N", self.host])
            self._wait_node_idle(STARTUP_TIMEOUT)
        except BaseException:
            self.close()
            raise
        self.startup_seconds = time.monotonic() - start
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self):
        """Cancel the jobs, stop the daemons, kill anything left, remove the folder. Idempotent."""
        if self._finalizer is not None:
            self._finalizer()

    @staticmethod
    def _find_binaries():
        names = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scontrol", "scancel")
        found = {n: _which(n) for n in names}
        missing = [n for n, p in found.items() if not p]
        if missing:
            raise SlurmUnavailable("not installed: %s (Debian: apt-get install slurmctld slurmd slurm-client "
                                   "munge)" % ", ".join(missing))
        return found

    def _write_files(self):
        f = self.folder
        # 0755, not mkdtemp's 0700: munged warns unless the socket's folders are searchable by all (jobs of
        # other users talk to it too), and refuses folders others may write; the key itself is 0400.
        os.chmod(f, 0o755)
        with open(os.path.join(f, "owner.pid"), "w") as out:
            out.write(str(os.getpid()))
        for sub in ("ctld-state", "slurmd-spool", "tmp", "work", "dev", "munge"):
            os.mkdir(os.path.join(f, sub), 0o755)
        for sub in ("tmp", "work"):  # the jobs' TmpFS; the tests' job files: any user
            os.chmod(os.path.join(f, sub), 0o1777)
        self.work = os.path.join(f, "work")
        # munge key: random bytes, owner-only (munged rejects a key that group/other can read).
        key = os.path.join(f, "munge", "munge.key")
        fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
        with os.fdopen(fd, "wb") as out:
            out.write(secrets.token_bytes(1024))
        self.munge_socket = os.path.join(f, "munge", "munge.socket")
        if len(self.munge_socket) > 100:
            raise SlurmUnavailable("temp folder path too long for a unix socket: %s" % self.munge_socket)
        devices = self._make_gpu_devices()
        with open(os.path.join(f, "plugstack.conf"), "w"):
            pass
        # gres.conf: no autodetection (no NVML here), one device file per gpu.
        with open(os.path.join(f, "gres.conf"), "w") as out:
            out.write("AutoDetect=off\n")
            for dev in devices:
                out.write("NodeName=%s Name=gpu File=%s\n" % (self.host, dev))
        # cgroup.conf: Slurm looks for it next to slurm.conf (so never in /etc); unused with these plugins,
        # it only spells every constraint off.
        with open(os.path.join(f, "cgroup.conf"), "w") as out:
            out.write("CgroupAutomount=no\nConstrainCores=no\nConstrainDevices=no\nConstrainRAMSpace=no\n")
        self.conf_path = os.path.join(f, "slurm.conf")
        ports = _free_ports(2)
        with open(self.conf_path, "w") as out:
            out.write(CONFIG.format(
                cluster="vkg" + secrets.token_hex(4), host=self.host, folder=f, munge_socket=self.munge_socket,
                ctld_port=ports[0], slurmd_port=ports[1], cpus=self.cpus, gpus=self.gpus,
                memory=self.memory, min_job_age=self.min_job_age, cred_expire=self.cred_expire,
                debug=self.debug))
        env = {k: v for k, v in os.environ.items() if not k.startswith(CLIENT_ENV_PREFIXES)}
        env.update({"SLURM_CONF": self.conf_path, MARKER: f})
        self.env = self._ctx["env"] = env

    def _make_gpu_devices(self):
        """gres needs device files: character devices like /dev/null (1,3) named gpu0 .. gpuN-1 (Slurm only
        stat()s them, for cgroup device rules that are off here). Where mknod is not allowed, symlinks to
        /dev/null do as well -- but not regular files: with those the gres is counted yet tasks get no
        CUDA_VISIBLE_DEVICES / SLURM_JOB_GPUS."""
        devices = []
        for i in range(self.gpus):
            path = os.path.join(self.folder, "dev", "gpu%d" % i)
            try:
                os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
            except OSError:
                os.symlink("/dev/null", path)
            devices.append(path)
        return devices

    def _popen(self, name, argv):
        log = open(os.path.join(self.folder, name + ".out"), "wb")
        # The parent-death signal fires when the *thread* that started the daemon ends: only set it when
        # that is the main thread (a cluster started from a worker thread relies on close()/atexit).
        main = threading.current_thread() is threading.main_thread()
        try:
            proc = subprocess.Popen(argv, env=self.env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                    cwd=self.folder, start_new_session=True,
                                    preexec_fn=_set_parent_death_signal if main else None)
        finally:
            log.close()
        self._procs[name] = proc
        return proc

    def _start_munged(self, munged):
        # --force: munged 0.5.15 checks every folder above its key, socket, seed and log files and exits
        # (status 1, "PRNG seed dir is insecure: group-writable permissions without sticky bit") when one
        # is writable by group/other without the sticky bit -- e.g. a TMPDIR of 0775 on a CI runner
        # (/tmp itself, 1777, passes) -- and refuses a stale socket left by a killed munged. --force
        # turns those errors into warnings. Running as root needs no flag (munged 0.5.15 allows it).
        # --seed-file / --pid-file / --log-file: keep munged out of /var/lib/munge, /run/munge and
        # /var/log/munge; --socket: not /run/munge/munge.socket.2 (a system munged may be running).
        m = os.path.join(self.folder, "munge")
        self._popen("munged", [munged, "--foreground", "--force", "--socket=" + self.munge_socket,
                               "--key-file=" + os.path.join(m, "munge.key"),
                               "--log-file=" + os.path.join(self.folder, "munged.log"),
                               "--pid-file=" + os.path.join(m, "munged.pid"),
                               "--seed-file=" + os.path.join(m, "munged.seed"), "--num-threads=2"])
        deadline = time.monotonic() + 10
        while not os.path.exists(self.munge_socket):
            self._check_alive("munged")
            if time.monotonic() > deadline:
                raise self._failure("munged did not create its socket within 10 s")
            time.sleep(0.02)

    def _check_alive(self, name):
        code = self._procs[name].poll()
        if code is not None:
            raise self._failure("%s exited with status %s" % (name, code), name)

    def _failure(self, what, name=None):
        """SlurmUnavailable: `what` and the tail of the daemon's log (all daemons' when `name` is None). A
        daemon's own log file, else its stderr (.out: where errors before the log is open go)."""
        names = [name] if name else list(self._procs)
        parts = [what]
        for n in names:
            for suffix in (".log", ".out"):
                path = os.path.join(self.folder, n + suffix)
                if os.path.exists(path) and os.path.getsize(path):
                    parts.append("%s:\n%s" % (path, _tail(path, 20 if name else 8)))
                    break
        return SlurmUnavailable("\n".join(parts))

    def _node_state(self):
        """sinfo's state of the node ("idle", "down*", ...) and, after a space, its reason if any."""
        out = subprocess.run(["sinfo", "-h", "-N", "-o", "%t %E"], env=self.env, capture_output=True,
                             text=True, timeout=10)
        return out.stdout.strip() if out.returncode == 0 else "(sinfo: %s)" % out.stderr.strip()

    def _wait_node_idle(self, timeout):
        deadline = time.monotonic() + timeout
        state = None
        while True:
            for name in ("munged", "slurmctld", "slurmd"):
                self._check_alive(name)
            try:
                state = self._node_state()
            except subprocess.TimeoutExpired:
                state = None
            if state in ("idle", "idle none"):
                return
            if time.monotonic() > deadline:
                raise self._failure("node %s not idle within %.0f s (sinfo state: %s)" % (self.host, timeout, state))
            time.sleep(0.1)

    # ---- use -------------------------------------------------------------------------------------
    def run(self, *args, check=True, **kw):
        """A client command (sbatch, squeue, scontrol, ...) against this cluster; text output, captured
        unless stdout/stderr are given; CalledProcessError on failure unless check=False."""
        kw.setdefault("env", self.env)
        kw.setdefault("text", True)
        if "stdout" not in kw and "stderr" not in kw:
            kw.setdefault("capture_output", True)
        kw.setdefault("timeout", 60)
        return subprocess.run(list(args), check=check, **kw)

    def jobs(self):
        """{job id (e.g. "12_3"): state (e.g. "RUNNING")} for the jobs squeue shows (pending, running,
        completing; array tasks one by one)."""
        out = self.run("squeue", "-h", "-r", "-o", "%i %T").stdout
        return dict(line.split() for line in out.splitlines() if line.strip())

    def job_info(self, job_id):
        """`scontrol show job JOB` as {key: value}: first record (for an array task, e.g. "12_3")."""
        out = self.run("scontrol", "-o", "show", "job", str(job_id)).stdout.splitlines()
        return dict(re.findall(r"(\w[\w:/]*)=(\S*)", out[0])) if out else {}

    def wait_idle(self, timeout=60):
        """Until no job is pending, running or completing; TimeoutError with squeue's view otherwise."""
        deadline = time.monotonic() + timeout
        while True:
            jobs = self.jobs()
            if not jobs:
                return
            if time.monotonic() > deadline:
                raise TimeoutError("jobs still queued after %s s: %s" % (timeout, jobs))
            time.sleep(0.2)


def _teardown(ctx):
    """Cancel the jobs (slurmd kills their tasks: SIGTERM, KillWait, SIGKILL) and wait a little for them
    to go; stop the daemons (slurmd first, munged last); kill whatever is left of the cluster
    (slurmstepd, tasks); remove the folder."""
    folder, procs, env = ctx["folder"], ctx["procs"], ctx["env"]
    ctld = procs.get("slurmctld")
    if env and ctld is not None and ctld.poll() is None:
        _cancel_all(env)
    roots = [p.pid for p in procs.values()]
    for name in ("slurmd", "slurmctld", "munged"):
        proc = procs.get(name)
        if proc is None or proc.poll() is not None:
            continue
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    _kill_cluster(folder, roots)
    for proc in procs.values():
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if os.environ.get(KEEP_ENV):
        open(os.path.join(folder, "kept"), "w").close()
        print("%s: kept %s" % (KEEP_ENV, folder), file=sys.stderr)
    else:
        shutil.rmtree(folder, ignore_errors=True)


def _cancel_all(env, wait=5.0):
    """scancel every job and wait (at most `wait` s) until squeue shows none."""
    def queued():
        out = subprocess.run(["squeue", "-h", "-o", "%A"], env=env, capture_output=True, text=True, timeout=10)
        return out.stdout.split() if out.returncode == 0 else []
    try:
        ids = queued()
        if not ids:
            return
        subprocess.run(["scancel", *ids], env=env, capture_output=True, timeout=10)
        deadline = time.monotonic() + wait
        while queued() and time.monotonic() < deadline:
            time.sleep(0.1)
    except (subprocess.SubprocessError, OSError):
        pass


class ClusterPerClass:
    """A unittest.TestCase mixin: one cluster for the test class (a node with two gpus and four CPUs, so that
    the gpus, not a small machine's cores, limit how many tasks run); where Slurm cannot start, the class's
    tests skip and the reason is printed, never silently. Call `require_cluster()` first in setUp."""
    cluster = None
    unavailable = None

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        try:
            # min_job_age=300: a finished job stays in `scontrol show job` for the whole class, however slowly
            # a loaded machine runs it (with 15 s, a check after the last of four tasks found the first purged).
            cls.cluster = SlurmCluster(gpus=2, cpus=4, min_job_age=300).__enter__()
        except SlurmUnavailable as err:
            cls.unavailable = err
            print("\nSlurm unavailable (%s not tested): %s" % (cls.__name__, err), file=sys.stderr)

    @classmethod
    def tearDownClass(cls):
        if cls.cluster is not None:
            cls.cluster.close()
        super().tearDownClass()

    def require_cluster(self, idle_within=60):
        if self.unavailable is not None:
            self.skipTest(str(self.unavailable))
        self.cluster.wait_idle(idle_within)
