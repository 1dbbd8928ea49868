# swerun's command spawner in Python: the same program as command-spawner.pl, whose header gives the
# protocol (requests on stdin, answers on stdout) and what the watchdog does. Preferred where python3 >= 3.8
# runs: it starts each command with posix_spawn, which lends the command this process's memory until its
# exec (glibc clones with CLONE_VM|CLONE_VFORK), where Perl must fork, a copy of its page tables that makes a
# command about 1.3x slower to run (bench/local.ts). Started as `python3 -I -S command-spawner.py <prefix>`;
# built-in modules only (no site, no os.py); it holds about 3.6 MiB more than Perl (7.8 against 4.2 MiB PSS).
import posix
import select
import sys
import time

import _signal

if not hasattr(posix, "posix_spawn"):
    sys.exit(3)

PREFIX = sys.argv[1].encode() if len(sys.argv) > 1 else b""
TAG = b"SWERUN_PROCESS_TAG="
WNOHANG = 1
# Every signal a command gets at its default disposition, Python's ignored SIGPIPE and SIGXFSZ included
# (glibc resets caught ones itself).
DEFAULTS = [s for s in _signal.valid_signals() if s not in (_signal.SIGKILL, _signal.SIGSTOP)]

pid_of = {}  # id -> pid, while it runs
id_of = {}  # pid -> id
output = {}  # id -> read end of its output pipe
fd_id = {}  # that read end -> id
direct = set()  # pids of commands swerun spawned itself
answers = []
pending = bytearray()
# Answers are held until a command is done (its output ended and it exited), one did not start, 64 KiB of
# output wait, or the oldest waited HOLD seconds: a short command costs swerun one wake-up, not five.
HOLD = 0.02
held = {"bytes": 0, "since": 0.0, "due": False}
half_done = set()  # ids whose output ended or whose process exited, not both yet


def say(data, due=False):
    if not answers:
        held["since"] = time.monotonic()
    answers.append(data)
    held["bytes"] += len(data)
    held["due"] = held["due"] or due or held["bytes"] >= 65536


def done_half(id_):
    """The output's end or the process's exit: the second of the two makes the command done."""
    if id_ in half_done:
        half_done.discard(id_)
        held["due"] = True
    else:
        half_done.add(id_)


def hold_for():
    """How long answers may still wait, in ms for poll (None: there are none)."""
    if not answers:
        return None
    if held["due"]:
        return 0
    return max(0.0, (held["since"] + HOLD - time.monotonic()) * 1000)


def ignore(signum, frame):
    pass


# Ctrl-C, a closed terminal or a signal to swerun's process group must not end the watchdog before swerun.
for name in ("SIGINT", "SIGHUP", "SIGTERM", "SIGQUIT"):
    _signal.signal(getattr(_signal, name), ignore)
# A child's end wakes the poll below: the signal's number is written to this pipe.
wake_read, wake_write = posix.pipe()
posix.set_blocking(wake_read, False)
posix.set_blocking(wake_write, False)
_signal.set_wakeup_fd(wake_write, warn_on_full_buffer=False)
_signal.signal(_signal.SIGCHLD, ignore)

poller = select.poll()
poller.register(0, select.POLLIN)
poller.register(wake_read, select.POLLIN)


def flush():
    data = b"".join(answers)
    answers.clear()
    held.update(bytes=0, due=False)
    while data:
        try:
            data = data[posix.write(1, data) :]
        except InterruptedError:
            continue
        except OSError:
            watchdog()


def spawn(file, argv, env, actions):
    """posix_spawn, with the PATH search of execvp (in the command's PATH) for a name without a slash."""
    if b"/" in file:
        return posix.posix_spawn(file, argv, env, file_actions=actions, setpgroup=0, setsigdef=DEFAULTS)
    denied = None
    for folder in env.get(b"PATH", b"/usr/local/bin:/usr/bin:/bin").split(b":"):
        try:
            path = (folder or b".") + b"/" + file
            return posix.posix_spawn(path, argv, env, file_actions=actions, setpgroup=0, setsigdef=DEFAULTS)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except PermissionError as error:
            denied = error
    raise denied or FileNotFoundError(2, "not found")


def start(id_, payload):
    fields = payload.split(b"\0")[:-1]
    cwd, file, argc = fields[0], fields[1], int(fields[2])
    argv = fields[3 : 3 + argc]
    env = {}
    for field in fields[3 + argc :]:
        name, _, value = field.partition(b"=")
        env[name] = value
    try:
        posix.chdir(cwd)
    except OSError as error:
        say(b"f%d cwd %d\n" % (id_, error.errno), due=True)
        return
    read, write = posix.pipe()
    actions = [
        (posix.POSIX_SPAWN_OPEN, 0, "/dev/null", posix.O_RDONLY, 0),
        (posix.POSIX_SPAWN_DUP2, write, 1),
        (posix.POSIX_SPAWN_DUP2, write, 2),
    ]
    try:
        pid = spawn(file, argv, env, actions)
    except OSError as error:
        posix.close(read)
        posix.close(write)
        say(b"f%d exec %d\n" % (id_, error.errno or 0), due=True)
        return
    posix.close(write)
    # Non-blocking: a poll event left from a closed pipe whose number a new one took reads nothing.
    posix.set_blocking(read, False)
    pid_of[id_] = pid
    id_of[pid] = id_
    output[id_] = read
    fd_id[read] = id_
    poller.register(read, select.POLLIN)
    say(b"s%d %d\n" % (id_, pid))


def reap_children():
    while id_of:
        try:
            pid, status = posix.waitpid(-1, WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        id_ = id_of.pop(pid, None)
        if id_ is not None:
            del pid_of[id_]
            say(b"x%d %d\n" % (id_, status))
            done_half(id_)


def stop_reading(id_):
    fd = output.pop(id_)
    del fd_id[fd]
    poller.unregister(fd)
    posix.close(fd)


def read_output(id_):
    """What the command's output holds, and its end when that follows at once (a few reads at most)."""
    fd = output[id_]
    for _ in range(4):
        try:
            chunk = posix.read(fd, 65536)
        except (BlockingIOError, InterruptedError):
            return
        if not chunk:
            stop_reading(id_)
            say(b"e%d\n" % id_)
            done_half(id_)
            return
        say(b"o%d %d\n" % (id_, len(chunk)))
        say(chunk)


def requests():
    while pending:
        end = pending.find(b"\n")
        if end < 0:
            return
        line = bytes(pending[:end])
        kind = line[:1]
        if kind == b"r":
            id_, size = (int(part) for part in line[1:].split(b" "))
            if len(pending) < end + 1 + size:
                return
            start(id_, bytes(pending[end + 1 : end + 1 + size]))
            del pending[: end + 1 + size]
            continue
        if kind == b"+":
            direct.add(int(line[1:]))
        elif kind == b"-":
            direct.discard(int(line[1:]))
        elif kind == b"d":
            if int(line[1:]) in output:
                stop_reading(int(line[1:]))
        elif line:
            return
        del pending[: end + 1]


def tagged():
    found = []
    own = posix.getpid()
    for name in posix.listdir(b"/proc"):
        if not name.isdigit() or int(name) == own:
            continue
        try:
            fd = posix.open(b"/proc/" + name + b"/environ", posix.O_RDONLY)
        except OSError:
            continue
        try:
            parts = []
            while True:
                chunk = posix.read(fd, 65536)
                if not chunk:
                    break
                parts.append(chunk)
        except OSError:
            parts = []
        finally:
            posix.close(fd)
        if (b"\0" + b"".join(parts)).find(b"\0" + TAG + PREFIX) >= 0:
            found.append(int(name))
    return found


def kill(pid, signum):
    try:
        posix.kill(pid, signum)
    except OSError:
        pass


def watchdog():
    """swerun is gone: kill what its commands left."""
    groups = list(pid_of.values()) + list(direct)
    for pid in groups:
        kill(-pid, _signal.SIGSTOP)
    stopped = set()
    for _ in range(100):
        fresh = [pid for pid in tagged() if pid not in stopped]
        if not fresh:
            break
        for pid in fresh:
            kill(pid, _signal.SIGSTOP)
            # And the group it leads, if it leads one: its members may lack the tag (`env -i`).
            kill(-pid, _signal.SIGSTOP)
        stopped.update(fresh)
    for pid in groups + list(stopped):
        kill(-pid, _signal.SIGKILL)
    for pid in stopped:
        kill(pid, _signal.SIGKILL)
    posix._exit(0)


while True:
    reap_children()
    wait = hold_for()
    if wait == 0:
        flush()
        wait = None
    for fd, _ in poller.poll(wait):
        if fd == wake_read:
            try:
                posix.read(wake_read, 512)
            except BlockingIOError:
                pass
        elif fd == 0:
            try:
                data = posix.read(0, 65536)
            except InterruptedError:
                continue
            except OSError:
                data = b""
            if not data:
                watchdog()
            pending += data
            requests()
        elif fd in fd_id:
            read_output(fd_id[fd])
