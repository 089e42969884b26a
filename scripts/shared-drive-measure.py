#!/usr/bin/env python3
"""shared-drive measure: mkdir/rename/flock/lag and what a Windows share
refuses, on the two mounts of one shared folder, printed as markdown tables
(run by `scripts/shared-drive measure DIR`, which checks the mounts are up
and passes their paths).

Usage: shared-drive-measure.py A B EXPORT CACHE N TRIALS [KIND]
  A, B     the two mounts ("machine A" and "machine B"): sshfs, or the share
           in smbnetfs' network tree
  EXPORT   the real folder behind them
  CACHE    the mounts' cache setting (no|default), as shown in the tables
  N        operations per trial; TRIALS: trials per measurement
  KIND     sshfs (the default) or smb

Owns the measurements and their tables; must not mount, unmount or start
anything (the shell script does).
"""
import atexit, errno, fcntl, multiprocessing as mp, os, shutil, statistics, subprocess, sys, threading, time

A, B, EXPORT, CACHE = sys.argv[1:5]
N = int(sys.argv[5]); TRIALS = int(sys.argv[6])
KIND = sys.argv[7] if len(sys.argv) > 7 else "sshfs"
ctx = mp.get_context("fork")
tag = ".measure-%d" % os.getpid()
os.mkdir(os.path.join(A, tag))
atexit.register(shutil.rmtree, os.path.join(EXPORT, tag), True)
RA, RB, RX = (os.path.join(p, tag) for p in (A, B, EXPORT))

def ename(e):
    return errno.errorcode.get(e, str(e))

def outcome(fn):
    try:
        fn()
        return "ok"
    except OSError as e:
        return ename(e.errno)

def fmt_counts(d):
    return ", ".join("%s x%d" % (k, v) for k, v in sorted(d.items(), key=lambda kv: -kv[1])) or "-"

print("### %s, cache=%s" % (KIND, CACHE))
print()

# ---------------------------------------------------------------- 1. mkdir
def racer(root, sub, barrier, q):
    res = []
    for i in range(N):
        barrier.wait()
        t1 = time.monotonic()
        r = outcome(lambda: os.mkdir(os.path.join(root, sub, "X%d" % i)))
        res.append((r, t1, time.monotonic()))
    q.put(res)

os.mkdir(os.path.join(RA, "race"))
while not os.path.isdir(os.path.join(RB, "race")):
    time.sleep(0.01)
barrier = ctx.Barrier(2)
qa, qb = ctx.Queue(), ctx.Queue()
pa = ctx.Process(target=racer, args=(RA, "race", barrier, qa))
pb = ctx.Process(target=racer, args=(RB, "race", barrier, qb))
t = time.monotonic()
pa.start(); pb.start()
ra, rb = qa.get(), qb.get()
pa.join(); pb.join()
race_s = time.monotonic() - t
# Rounds in which the two mkdir calls were in flight at the same time.
overlap = sum(1 for x, y in zip(ra, rb) if x[1] < y[2] and y[1] < x[2])
ra = [x[0] for x in ra]; rb = [y[0] for y in rb]
both = sum(1 for x, y in zip(ra, rb) if x == "ok" and y == "ok")
none = sum(1 for x, y in zip(ra, rb) if x != "ok" and y != "ok")
a_won = sum(1 for x, y in zip(ra, rb) if x == "ok" and y != "ok")
b_won = sum(1 for x, y in zip(ra, rb) if y == "ok" and x != "ok")
loser = {}
for x, y in zip(ra, rb):
    if (x == "ok") != (y == "ok"):
        e = y if x == "ok" else x
        loser[e] = loser.get(e, 0) + 1

# Not a race: B mkdirs a name that A created just before (the lock is held).
seq = {}
for i in range(50):
    os.mkdir(os.path.join(RA, "race", "S%d" % i))
    r = outcome(lambda: os.mkdir(os.path.join(RB, "race", "S%d" % i)))
    seq[r] = seq.get(r, 0) + 1

print("| mkdir race, %d rounds (one process on A, one on B, released together) | result |" % N)
print("|---|---|")
print("| rounds where both calls were in flight at once | %d |" % overlap)
print("| both succeeded | **%d** |" % both)
print("| A won / B won / neither | %d / %d / %d |" % (a_won, b_won, none))
print("| error seen by the loser | %s |" % fmt_counts(loser))
print("| B mkdirs a name A created just before (50x) | %s |" % fmt_counts(seq))
print("| time for the %d rounds | %.1f s |" % (N, race_s))
print()

# ---------------------------------------------------------------- 2. rename
def wait_visible(p, timeout=60):
    t = time.monotonic()
    while time.monotonic() - t < timeout:
        if os.path.exists(p):
            return
        time.sleep(0.01)

def rename_case(name, target_kind, primed):
    """Source dir made via A; target made via B; rename done via A."""
    base = os.path.join(tag, "ren-" + name)
    os.mkdir(os.path.join(A, base))
    src = os.path.join(base, "src"); dst = os.path.join(base, "dst")
    if target_kind == "file-onto-file":
        with open(os.path.join(A, src), "w") as f: f.write("new\n")
        wait_visible(os.path.join(B, base))
        with open(os.path.join(B, dst), "w") as f: f.write("old\n")
    else:
        os.mkdir(os.path.join(A, src))
        with open(os.path.join(A, src, "payload"), "w") as f: f.write("p\n")
        wait_visible(os.path.join(B, base))
        os.mkdir(os.path.join(B, dst))
        if target_kind == "dir-nonempty":
            with open(os.path.join(B, dst, "other"), "w") as f: f.write("o\n")
    if primed:
        outcome(lambda: os.stat(os.path.join(A, dst)))
    r = outcome(lambda: os.rename(os.path.join(A, src), os.path.join(A, dst)))
    # What is really on the export afterwards?
    xs, xd = os.path.join(EXPORT, src), os.path.join(EXPORT, dst)
    if os.path.isdir(xd):
        after = "dst holds [%s]" % ", ".join(sorted(os.listdir(xd)))
    elif os.path.isfile(xd):
        after = "dst reads %r" % open(xd).read()
    else:
        after = "dst missing"
    after += "; src %s" % ("still there" if os.path.exists(xs) else "gone")
    return r, after

cases = [
    ("dir onto EMPTY dir", "dir-empty"),
    ("dir onto NON-empty dir", "dir-nonempty"),
    ("file onto existing file", "file-onto-file"),
]
print("| rename via A onto a target made via B | A had not seen target | A had stat'ed target first |")
print("|---|---|---|")
for i, (label, kind) in enumerate(cases):
    cols = []
    for primed in (False, True):
        r, after = rename_case("%d%s" % (i, "p" if primed else ""), kind, primed)
        cols.append("%s (%s)" % (r, after))
    print("| %s | %s | %s |" % (label, cols[0], cols[1]))
print()

# ---------------------------------------------------------------- 3. flock
# Opened for reading and writing, never for appending: an O_APPEND open
# through smbnetfs fails and breaks the mount (section 5).
def holder(path_flock, path_lockf, ready, done):
    f1 = open(path_flock, "r+"); fcntl.flock(f1, fcntl.LOCK_EX | fcntl.LOCK_NB)
    f2 = open(path_lockf, "r+"); fcntl.lockf(f2, fcntl.LOCK_EX | fcntl.LOCK_NB)
    ready.set(); done.wait(30)

lk1 = os.path.join(tag, "flock.lck"); lk2 = os.path.join(tag, "lockf.lck")
for p in (lk1, lk2):
    open(os.path.join(A, p), "w").close()
wait_visible(os.path.join(B, lk1)); wait_visible(os.path.join(B, lk2))
ready, done = ctx.Event(), ctx.Event()
h = ctx.Process(target=holder, args=(os.path.join(A, lk1), os.path.join(A, lk2), ready, done))
h.start(); ready.wait(10)

def try_flock(p):
    with open(p, "r+") as f:
        r = outcome(lambda: fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB))
    return "got it (NO exclusion)" if r == "ok" else "refused, %s (excluded)" % r

def try_lockf(p):
    with open(p, "r+") as f:
        r = outcome(lambda: fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB))
    return "got it (NO exclusion)" if r == "ok" else "refused, %s (excluded)" % r

def try_cli(p):
    rc = subprocess.run(["flock", "-n", "-E", "99", p, "true"]).returncode
    return "got it, exit 0 (NO exclusion)" if rc == 0 else "refused, exit %d (excluded)" % rc

print("| lock held by a process via A; second process tries | via A (same mount) | via B (other mount) |")
print("|---|---|---|")
print("| `flock -n` (CLI) | %s | %s |" % (try_cli(os.path.join(A, lk1)), try_cli(os.path.join(B, lk1))))
print("| flock(LOCK_EX\\|LOCK_NB) | %s | %s |" % (try_flock(os.path.join(A, lk1)), try_flock(os.path.join(B, lk1))))
print("| fcntl/lockf(F_SETLK) | %s | %s |" % (try_lockf(os.path.join(A, lk2)), try_lockf(os.path.join(B, lk2))))
done.set(); h.join()
print()

# ---------------------------------------------------------------- 4. lag
# Every trial has its own directory; all trials run at once in threads so the
# whole thing takes about one cache timeout, not one per trial. Before A acts,
# B has already looked (as a polling reader would): the lag is then close to
# the worst case for the cache settings.
POLL = 0.005
LIMIT = 60.0
OLD = "old content\n"
NEW = "new content, longer than the old one\n"

def probe_exists_stat(p):
    try:
        os.stat(p); return True, "seen"
    except FileNotFoundError:
        return False, "ENOENT"

def probe_exists_ls(p):
    return (os.path.basename(p) in os.listdir(os.path.dirname(p))), "not listed"

def read_now(p):
    try:
        with open(p) as f:
            return f.read(4096)
    except OSError as e:
        return "<%s>" % ename(e.errno)

def describe(s):
    if s == OLD: return "old"
    if s.startswith("<"): return s.strip("<>")
    if s == "": return "empty"
    if NEW.startswith(s): return "truncated new"
    if s.startswith(NEW): return "new + junk"
    return "other"

def probe_read_new(p):
    s = read_now(p); return s == NEW, describe(s)

def probe_gone_stat(p):
    try:
        os.stat(p); return False, "still seen"
    except FileNotFoundError:
        return True, ""

def probe_gone_open(p):
    s = read_now(p); return s == "<ENOENT>", describe(s)

def act_create(pa):
    with open(pa, "w") as f: f.write(NEW)

def act_rewrite(pa):
    with open(pa, "w") as f: f.write(NEW)

def act_replace(pa):
    tmp = pa + ".tmp"
    with open(tmp, "w") as f: f.write(NEW)
    os.rename(tmp, pa)

def act_delete(pa):
    os.unlink(pa)

def act_mkdir(pa):
    os.mkdir(pa)

def act_rmdir(pa):
    os.rmdir(pa)

def probe_mkdir(p):
    r = outcome(lambda: os.mkdir(p))
    return r == "ok", r

SCEN = [
    # label, what exists before (None / "file" with OLD / "dir"), act via A, probe via B
    ("create file via A; B `stat` sees it", None, act_create, probe_exists_stat),
    ("create file via A; B `ls` lists it", None, act_create, probe_exists_ls),
    ("create file via A; B opens+reads it (full content)", None, act_create, probe_read_new),
    ("rewrite in place via A (O_TRUNC); B reads new content", "file", act_rewrite, probe_read_new),
    ("replace via A (temp file + rename); B reads new content", "file", act_replace, probe_read_new),
    ("delete file via A; B `stat` fails", "file", act_delete, probe_gone_stat),
    ("delete file via A; B open fails", "file", act_delete, probe_gone_open),
    ("mkdir via A; B `stat` sees the dir", None, act_mkdir, probe_exists_stat),
    ("rmdir via A (lock released); B's mkdir succeeds", "dir", act_rmdir, probe_mkdir),
]

results = {}
lock = threading.Lock()

def trial(si, k):
    label, before, act, probe = SCEN[si]
    d = os.path.join(tag, "lag-%d-%d" % (si, k))
    os.mkdir(os.path.join(A, d))
    pa, pb = os.path.join(A, d, "f.txt"), os.path.join(B, d, "f.txt")
    if before == "file":
        with open(pa, "w") as f: f.write(OLD)
        t = time.monotonic()
        while read_now(pb) != OLD:
            if time.monotonic() - t > LIMIT: break
            time.sleep(POLL)
    elif before == "dir":
        os.mkdir(pa)
        wait_visible(pb)
    else:
        wait_visible(os.path.join(B, d))
    # B looks, as a polling reader would, for a second before A acts.
    t = time.monotonic()
    while time.monotonic() - t < 1.0:
        probe(pb); os.listdir(os.path.dirname(pb)); time.sleep(0.05)
    act(pa)
    t0 = time.monotonic()
    seen = {}
    while True:
        ok, what = probe(pb)
        dt = time.monotonic() - t0
        if ok:
            break
        seen[what] = seen.get(what, 0) + 1
        if dt > LIMIT:
            dt = None; break
        time.sleep(POLL)
    with lock:
        results.setdefault(si, []).append((dt, seen))

threads = [threading.Thread(target=trial, args=(si, k)) for si in range(len(SCEN)) for k in range(TRIALS)]
t = time.monotonic()
for th in threads: th.start()
for th in threads: th.join()
lag_s = time.monotonic() - t

def ms(x):
    return ">%.0f s" % LIMIT if x is None else ("%.0f ms" % (x * 1000) if x < 10 else "%.1f s" % x)

print("| lag: B had looked just before A acted; %d trials, polling every %d ms | median | min - max | B saw meanwhile |" % (TRIALS, POLL * 1000))
print("|---|---|---|---|")
for si, (label, *_r) in enumerate(SCEN):
    rs = results.get(si, [])
    vals = [dt for dt, _ in rs]
    known = sorted(v for v in vals if v is not None)
    med = ms(statistics.median(known)) if len(known) == len(vals) and known else ("partly " + ms(None))
    lo = ms(min(known)) if known else "-"
    hi = ms(max(known)) if len(known) == len(vals) else ms(None)
    seen = {}
    for _, s in rs:
        for k2, v in s.items():
            seen[k2] = seen.get(k2, 0) + v
    print("| %s | %s | %s - %s | %s |" % (label, med, lo, hi, ", ".join(sorted(seen)) or "-"))
print()
print("(lag section took %.1f s)" % lag_s)
print()

# ---------------------------------------------------------------- 5. Windows semantics
# What a Windows share (SMB) refuses that a POSIX drive allows: replacing or
# deleting a file someone holds open, links, names that differ only in case;
# and what the client does with flags the referee and the bots use. The
# O_APPEND open comes last: through smbnetfs it fails and leaves the mount
# failing every open for a while, which is timed here.
import ctypes
LIBC = ctypes.CDLL(None, use_errno=True)
RENAME_EXCHANGE = 2
W = os.path.join(tag, "win")
os.mkdir(os.path.join(A, W))
wait_visible(os.path.join(B, W))
WA, WB, WX = (os.path.join(p, W) for p in (A, B, EXPORT))

def put(path, text):
    with open(path, "w") as f:
        f.write(text)

def export_text(name):
    try:
        with open(os.path.join(WX, name)) as f:
            return repr(f.read())
    except OSError as e:
        return "<%s>" % ename(e.errno)

def held_open(case, via, act):
    """`target` made via A, held open (read-only) by a process via `via`,
    then `act` via A; what happened, and what the server holds then."""
    t, n = "t-%s" % case, "n-%s" % case
    put(os.path.join(WA, t), "old\n"); put(os.path.join(WA, n), "new\n")
    wait_visible(os.path.join(WB, t))
    fd = os.open(os.path.join(via, t), os.O_RDONLY)
    try:
        r = outcome(lambda: act(t, n))
        during = export_text(t)
    finally:
        os.close(fd)
    return "%s (target then: %s)" % (r, during)

def renameat2_exchange(a, b):
    if LIBC.renameat2(-100, os.fsencode(a), -100, os.fsencode(b), RENAME_EXCHANGE) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))

rows = []
rows.append(("rename a new file over one held open on A (the renamer's machine)",
             held_open("ra", WA, lambda t, n: os.rename(os.path.join(WA, n), os.path.join(WA, t)))))
rows.append(("rename a new file over one held open on B (another machine)",
             held_open("rb", WB, lambda t, n: os.rename(os.path.join(WA, n), os.path.join(WA, t)))))
rows.append(("delete a file held open on A",
             held_open("da", WA, lambda t, n: os.unlink(os.path.join(WA, t)))))
rows.append(("delete a file held open on B",
             held_open("db", WB, lambda t, n: os.unlink(os.path.join(WA, t)))))
rows.append(("write in place (no truncation) into a file held open on B",
             held_open("wb", WB, lambda t, n: (lambda fd: (os.pwrite(fd, b"NEW\n", 0), os.close(fd)))(
                 os.open(os.path.join(WA, t), os.O_WRONLY)))))
put(os.path.join(WA, "c-t"), "old\n"); put(os.path.join(WA, "c-n"), "new\n")
rows.append(("rename a new file over a closed one",
             "%s (target then: %s)" % (outcome(lambda: os.rename(os.path.join(WA, "c-n"), os.path.join(WA, "c-t"))),
                                       export_text("c-t"))))
put(os.path.join(WA, "x-1"), "one\n"); put(os.path.join(WA, "x-2"), "two\n")
rows.append(("swap two names in one step (renameat2 RENAME_EXCHANGE)",
             outcome(lambda: renameat2_exchange(os.path.join(WA, "x-1"), os.path.join(WA, "x-2")))))
rows.append(("symlink", outcome(lambda: os.symlink("c-t", os.path.join(WA, "link")))))
rows.append(("hard link", outcome(lambda: os.link(os.path.join(WA, "c-t"), os.path.join(WA, "hard")))))
rows.append(("mkfifo", outcome(lambda: os.mkfifo(os.path.join(WA, "fifo")))))
put(os.path.join(WA, "Case.txt"), "upper\n")
wait_visible(os.path.join(WB, "Case.txt"))
def read_b_lower():
    with open(os.path.join(WB, "case.txt")) as f:
        return f.read()
lower = outcome(read_b_lower)
rows.append(("`Case.txt` made via A; B opens `case.txt`",
             "%s (%s)" % (lower, "the same file" if lower == "ok" else "another name")))
rows.append(("`case.txt` created with O_EXCL via A beside `Case.txt`",
             outcome(lambda: os.close(os.open(os.path.join(WA, "case.txt"), os.O_WRONLY | os.O_CREAT | os.O_EXCL)))))
put(os.path.join(WB, "excl"), "made via B\n")
rows.append(("O_EXCL create via A of a name just made via B",
             outcome(lambda: os.close(os.open(os.path.join(WA, "excl"), os.O_WRONLY | os.O_CREAT | os.O_EXCL)))))
rows.append(("O_NOFOLLOW open", outcome(lambda: os.close(os.open(os.path.join(WA, "c-t"), os.O_RDONLY | os.O_NOFOLLOW)))))
# A longer rewrite in place via A, right after B read the short one: B's
# plain read is cut to the length B cached; a direct read is not.
put(os.path.join(WA, "grow"), "short\n")
def read_b(flags):
    fd = os.open(os.path.join(WB, "grow"), os.O_RDONLY | flags)
    try:
        return os.read(fd, 4096)
    finally:
        os.close(fd)
read_b(0)
fd = os.open(os.path.join(WA, "grow"), os.O_WRONLY)
os.pwrite(fd, b"a longer content, rewritten in place\n", 0); os.close(fd)
plain = read_b(0)
try:
    direct = read_b(os.O_DIRECT)
    direct = "%d of 37 bytes" % len(direct)
except OSError as e:
    direct = ename(e.errno)
rows.append(("B reads a file A just rewrote longer (in place)",
             "plain read: %d of 37 bytes; O_DIRECT read: %s" % (len(plain), direct)))
# Modification times: the server's clock and resolution, seen on B.
put(os.path.join(WA, "mtime"), "m\n")
before = time.time()
put(os.path.join(WA, "mtime"), "mm\n")
st = os.stat(os.path.join(WB, "mtime"))
rows.append(("mtime of a file A just rewrote, as B's `stat` shows it",
             "%+.3f s from A's clock at the write (nanoseconds %s)"
             % (st.st_mtime - before, "present" if st.st_mtime_ns % 1000000 else "zero: coarse")))
def then_opens(r):
    """`r`, and if it is a failure, how long every open via A failed after it
    (smbnetfs fails them all for a while after some failures)."""
    if r == "ok":
        return r
    t0 = time.monotonic()
    while outcome(lambda: os.close(os.open(os.path.join(WA, "c-t"), os.O_RDONLY))) != "ok":
        if time.monotonic() - t0 > 60:
            break
        time.sleep(0.05)
    return "%s (then every open via A failed for %.1f s)" % (r, time.monotonic() - t0)

def via_descriptor(flags, act):
    put(os.path.join(WA, "cut"), "0123456789\n")
    fd = os.open(os.path.join(WA, "cut"), flags)
    try:
        return then_opens(outcome(lambda: act(fd)))
    finally:
        os.close(fd)

# What a write-only descriptor can do besides writing.
for label, act in (("ftruncate", lambda fd: os.ftruncate(fd, 4)),
                   ("lseek to the end", lambda fd: os.lseek(fd, 0, os.SEEK_END))):
    rows.append(("%s through a descriptor opened write-only / read-write" % label,
                 "%s / %s" % (via_descriptor(os.O_WRONLY, act), via_descriptor(os.O_RDWR, act))))
# Last: O_APPEND.
put(os.path.join(WA, "app"), "one\n")
rows.append(("open for append (O_APPEND)",
             then_opens(outcome(lambda: os.close(os.open(os.path.join(WA, "app"), os.O_WRONLY | os.O_APPEND))))))

print("| Windows semantics (a file held open: opened read-only by another process) | result |")
print("|---|---|")
for label, r in rows:
    print("| %s | %s |" % (label, r))
