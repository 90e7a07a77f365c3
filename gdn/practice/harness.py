"""The child side of the judge: runs a learner's code on the judge's inputs and sends back what it returned.

This file runs alone, as `python -I harness.py RESULT_FD` (in the sandbox it is the only file of the project
the child can see), so it imports nothing of gdn: only the standard library, torch and safetensors.

    stdin   <8-byte length><JSON header><safetensors bytes>: the source, the calls, their input tensors
    fd      <8-byte length><safetensors bytes>: every returned tensor, and in its metadata a JSON report
            per call (ok / the exception with the learner's own lines / what kind of value came back)
    stdout  the learner's prints (a capped memory file the parent reads afterwards)

Nothing the child sends is unpickled: the parent reads safetensors (a format of plain arrays) and JSON.

Before the learner's first line runs, the child locks itself in (guard()): resource limits (CPU seconds,
address space, file size, open files, no core file), a seccomp filter (no new process, no program started,
no socket, no signal to another process, no tracing), and an audit hook that turns what Python itself can
see (opening a file outside the work folder and Python's own, ctypes calls) into a clear PermissionError.
The audit hook is only a helper for clear messages; the seccomp filter and the sandbox's namespaces
(runner.py) are what hold.
"""
from __future__ import annotations

import ctypes
import errno
import json
import linecache
import os
import platform
import resource
import signal
import struct
import sys
import sysconfig
import traceback

import torch
from safetensors.torch import load as load_tensors
from safetensors.torch import save as save_tensors

LEARNER_FILE = "<your code>"      # the filename of the learner's code in tracebacks: their lines only
MAX_MESSAGE = 600                 # characters of an exception's message sent back

# -- the guard: limits, seccomp, audit ----------------------------------------------------------------------

# seccomp_data: int nr @0, u32 arch @4, u64 ip @8, u64 args[6] @16 (args[0] low word @16, high @20)
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
SYSCALLS = {           # the numbers of the calls the filter looks at, per architecture
    "x86_64": dict(fork=57, vfork=58, execve=59, execveat=322, clone=56, clone3=435, socket=41, kill=62,
                   tkill=200, tgkill=234, ptrace=101, process_vm_readv=310, process_vm_writev=311,
                   pidfd_send_signal=424, pidfd_open=434, rt_sigqueueinfo=129, rt_tgsigqueueinfo=297, seccomp=317,
                   io_uring_setup=425, io_uring_enter=426, io_uring_register=427, unshare=272, setns=308,
                   mount=165, umount2=166, pivot_root=155, chroot=161, bpf=321, perf_event_open=298,
                   userfaultfd=323, keyctl=250, add_key=248, request_key=249),
    "aarch64": dict(execve=221, execveat=281, clone=220, clone3=435, socket=198, kill=129, tkill=130,
                    tgkill=131, ptrace=117, process_vm_readv=270, process_vm_writev=271, pidfd_send_signal=424,
                    pidfd_open=434, rt_sigqueueinfo=138, rt_tgsigqueueinfo=240, seccomp=277,
                    io_uring_setup=425, io_uring_enter=426, io_uring_register=427, unshare=97, setns=268,
                    mount=40, umount2=39, pivot_root=41, chroot=51, bpf=280, perf_event_open=241,
                    userfaultfd=282, keyctl=219, add_key=217, request_key=218),
}
# A deny-list: the calls that start a process or a program, reach the network (io_uring has a socket op of
# its own), signal or trace another process, or change namespaces, mounts or kernel state.
DENIED = ("fork", "vfork", "execve", "execveat", "socket", "ptrace", "process_vm_readv", "process_vm_writev",
          "pidfd_send_signal", "pidfd_open", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "io_uring_setup",
          "io_uring_enter", "io_uring_register", "unshare", "setns", "mount", "umount2", "pivot_root", "chroot",
          "bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key")
SELF_ONLY = ("kill", "tkill", "tgkill")         # a signal to this process only (Python's own raise() uses them)
CLONE_THREAD = 0x00010000                       # clone() of a thread is allowed; of a process, refused
RET_ALLOW, RET_ERRNO = 0x7FFF0000, 0x00050000
LD_W_ABS, JEQ_K, JGE_K, JSET_K, RET_K = 0x20, 0x15, 0x35, 0x45, 0x06     # classic BPF opcodes


def seccomp_filter(machine: str, pid: int) -> list[tuple[int, int, int, int]]:
    """The classic-BPF program: (code, jump if true, jump if false, k) per instruction."""
    nr = SYSCALLS[machine]
    eperm, enosys = RET_ERRNO | errno.EPERM, RET_ERRNO | errno.ENOSYS
    prog = [(LD_W_ABS, 0, 0, 4), (JEQ_K, 1, 0, AUDIT_ARCH[machine]), (RET_K, 0, 0, eperm), (LD_W_ABS, 0, 0, 0)]
    if machine == "x86_64":                      # the x32 ABI's numbers (bit 30) would slip past the table
        prog += [(JGE_K, 0, 1, 0x40000000), (RET_K, 0, 0, eperm)]
    for name in DENIED:
        if name in nr:
            prog += [(JEQ_K, 0, 1, nr[name]), (RET_K, 0, 0, eperm)]
    prog += [(JEQ_K, 0, 1, nr["clone3"]), (RET_K, 0, 0, enosys)]          # glibc falls back to clone()
    prog += [(JEQ_K, 0, 4, nr["clone"]), (LD_W_ABS, 0, 0, 16), (JSET_K, 0, 1, CLONE_THREAD),
             (RET_K, 0, 0, RET_ALLOW), (RET_K, 0, 0, eperm)]
    for name in SELF_ONLY:                       # args[0] must be this pid: low word equal, high word zero
        prog += [(JEQ_K, 0, 6, nr[name]), (LD_W_ABS, 0, 0, 16), (JEQ_K, 0, 3, pid), (LD_W_ABS, 0, 0, 20),
                 (JEQ_K, 0, 1, 0), (RET_K, 0, 0, RET_ALLOW), (RET_K, 0, 0, eperm)]
    return prog + [(RET_K, 0, 0, RET_ALLOW)]


def install_seccomp() -> None:
    machine = platform.machine()
    if machine not in SYSCALLS:
        raise OSError(f"no seccomp filter for {machine}")
    prog = seccomp_filter(machine, os.getpid())
    raw = b"".join(struct.pack("HBBI", *ins) for ins in prog)
    buf = ctypes.create_string_buffer(raw)
    fprog = struct.pack("HxxxxxxP", len(prog), ctypes.addressof(buf))     # struct sock_fprog
    fprog_buf = ctypes.create_string_buffer(fprog)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0:                                    # PR_SET_NO_NEW_PRIVS
        raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS")
    # seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, prog): every thread of the process at once
    if libc.syscall(SYSCALLS[machine]["seccomp"], 1, 1, fprog_buf) != 0:
        raise OSError(ctypes.get_errno(), "seccomp")


def set_limits(cpu_s: int, memory_mb: int, file_mb: int) -> None:
    """Limits on this process; lowered hard limits too, so the learner's code cannot raise them."""
    now = resource.getrusage(resource.RUSAGE_SELF)
    used_cpu = int(now.ru_utime + now.ru_stime) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (used_cpu + cpu_s, used_cpu + cpu_s + 1))
    with open("/proc/self/statm") as f:                                   # torch maps a lot of address space
        mapped = int(f.read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (mapped + (memory_mb << 20),) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_mb << 20,) * 2)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))


REFUSED = "refused by the judge: "     # a PermissionError the audit hook raised; judge.py words it
PATH_EVENTS = {"os.remove": 1, "os.rename": 2, "os.rmdir": 1, "os.truncate": 1, "os.chmod": 1, "os.chown": 1,
               "os.link": 2, "os.symlink": 2, "os.mkdir": 1, "os.listdir": 1, "os.scandir": 1, "os.utime": 1,
               "shutil.rmtree": 1, "sqlite3.connect": 1}   # event -> how many of its first arguments are paths
LISTINGS = ("os.listdir", "os.scandir")       # reading a folder: Python's own are readable, as their files
CALL_EVENTS = ("os.system", "os.exec", "os.posix_spawn", "os.fork", "os.forkpty", "subprocess.Popen",
               "socket.__new__", "socket.connect", "os.kill", "os.killpg")


def audit_hook(readable: tuple[str, ...], workdir: str):
    """Python's own view of what the learner's code does: files and folders outside the work folder (reading
    Python's own is allowed), and the calls the seccomp filter refuses anyway, refused early with words."""
    def real(path) -> str | None:
        """The path with its links resolved; None for a file descriptor already open (nothing to check)."""
        return os.path.realpath(os.fsdecode(path)) if isinstance(path, (str, bytes, os.PathLike)) else None

    def inside(path) -> bool:
        where = real(path)
        return where is None or where == workdir or where.startswith(workdir + os.sep)

    def readable_or_inside(path) -> bool:
        return inside(path) or real(path).startswith(readable)

    def hook(event: str, args: tuple) -> None:
        if event == "open":                                               # every import opens files: once each
            path, mode = args[0], args[1]
            if inside(path):
                return
            writes = isinstance(mode, str) and any(c in mode for c in "wax+")
            if writes or not real(path).startswith(readable):
                raise PermissionError(f"{REFUSED}open:{os.fsdecode(path)}")
        elif event in PATH_EVENTS:
            paths = [a for a in args[:PATH_EVENTS[event]] if a not in (":memory:", "", None)]
            allowed = readable_or_inside if event in LISTINGS else inside     # imports list Python's own folders
            if not all(allowed(p) for p in paths):
                raise PermissionError(f"{REFUSED}{event}:{os.fsdecode(paths[0]) if paths else ''}")
        elif event.startswith("ctypes.") or event in CALL_EVENTS:
            raise PermissionError(f"{REFUSED}{event}:")
    return hook


def guard(cpu_s: int, memory_mb: int, file_mb: int) -> None:
    # Python ignores SIGXFSZ (a write past RLIMIT_FSIZE then raises OSError, which code could catch and go
    # on printing): the default action ends the child, and the parent says it printed too much
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    paths = sysconfig.get_paths()
    readable = tuple({os.path.realpath(p) for p in (paths["stdlib"], paths["platstdlib"], paths["purelib"],
                                                    paths["platlib"], sys.prefix, sys.base_prefix)}
                     | {"/usr/", "/proc/self/", "/dev/null", "/dev/urandom", "/sys/devices/system/cpu/"})
    set_limits(cpu_s, memory_mb, file_mb)
    install_seccomp()
    sys.addaudithook(audit_hook(readable, os.path.realpath(os.getcwd())))


# -- running the calls ----------------------------------------------------------------------------------

def learner_lines(exc: BaseException) -> list[str]:
    """The traceback's frames in the learner's code only, innermost last, each 'line N, in f: code'."""
    lines = []
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == LEARNER_FILE:
            lines.append(f"line {frame.lineno}, in {frame.name}: {(frame.line or '').strip()}")
    return lines


def failure(exc: BaseException) -> dict:
    message = str(exc)[:MAX_MESSAGE]
    report = {"ok": False, "error": type(exc).__name__, "message": message, "lines": learner_lines(exc)}
    if isinstance(exc, OSError) and isinstance(exc.errno, int):
        report["errno"] = exc.errno                      # EPERM: a refused call; EFBIG: past the file limit
    return report


def as_tensor(value):
    """A returned value as a float64 tensor of its own (a copy: safetensors refuses two names on one memory,
    and `return v, S` with S never updated is a learner's mistake to judge, not a crash) and its kind; None
    and the kind for anything else, a complex number included (its imaginary part would be dropped)."""
    if isinstance(value, torch.Tensor):
        kind = f"tensor:{str(value.dtype).removeprefix('torch.')}"
        if value.is_complex():
            return None, kind
        return value.detach().to("cpu", torch.float64).clone().contiguous(), kind
    if isinstance(value, (bool, int, float)):
        return torch.tensor(float(value), dtype=torch.float64), "number"
    try:
        tensor = torch.as_tensor(value, dtype=torch.float64).clone().contiguous()
    except Exception:  # noqa: BLE001 -- anything else is reported by its type's name
        return None, type(value).__name__
    return tensor, type(value).__name__


def run_call(namespace: dict, call: dict, inputs: dict, out: dict) -> dict:
    """One call: a function (kind "call"), or a class fed piece by piece (kind "stream"). Returns its report."""
    args = [inputs.get(a) if isinstance(a, str) and a in inputs else a for a in call["args"]]
    try:
        if call["kind"] == "stream":
            feeder = namespace[call["fn"]]()
            values = [feeder.feed(*args[i:i + call["width"]]) for i in range(0, len(args), call["width"])]
        else:
            values = namespace[call["fn"]](*args)
    except KeyError as e:
        if e.args and e.args[0] == call["fn"] and call["fn"] not in namespace:
            return {"ok": False, "error": "missing", "message": call["fn"], "lines": []}
        return failure(e)
    except BaseException as e:  # noqa: BLE001 -- the learner's exception, SystemExit included, is the verdict
        return failure(e)
    many = isinstance(values, (tuple, list)) and not (values and isinstance(values[0], (int, float)))
    kinds = []
    for j, value in enumerate(values if many else [values]):
        tensor, kind = as_tensor(value) if value is not None else (None, "None")
        kinds.append(kind)
        if tensor is not None:
            out[f"{call['id']}.{j}"] = tensor
    return {"ok": True, "many": many, "kinds": kinds}


def read_job() -> tuple[dict, dict]:
    data = sys.stdin.buffer.read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    return header, load_tensors(data[8 + size:]) if len(data) > 8 + size else {}


def main() -> None:
    result_fd = int(sys.argv[1])
    header, inputs = read_job()
    torch.set_num_threads(1)
    reports, out = {}, {}
    with os.fdopen(result_fd, "wb") as result:
        guard(header["cpu_s"], header["memory_mb"], header["file_mb"])
        result.write(b"R")                        # locked in: what fails from here on is the learner's
        result.flush()
        namespace = {"__name__": "learner"}
        source = header["source"]
        linecache.cache[LEARNER_FILE] = (len(source), None, source.splitlines(True), LEARNER_FILE)   # for tracebacks
        try:
            exec(compile(source, LEARNER_FILE, "exec"), namespace)  # noqa: S102 -- the point of it
        except SyntaxError as e:
            reports["source"] = {"ok": False, "error": "SyntaxError", "message": e.msg, "line": e.lineno,
                                 "offset": e.offset, "text": (e.text or "").rstrip()[:200], "lines": []}
        except BaseException as e:  # noqa: BLE001 -- an error while the module itself runs
            reports["source"] = failure(e)
        else:
            for call in header["calls"]:
                reports[call["id"]] = run_call(namespace, call, inputs, out)
        sys.stdout.flush()
        blob = save_tensors(out, metadata={"reports": json.dumps(reports)})
        result.write(struct.pack("<Q", len(blob)) + blob)


if __name__ == "__main__":
    main()
