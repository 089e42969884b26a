#!/usr/bin/env python3
"""syscalls_per_move.py — system calls per hand-off move, referee and bot.

    TOURNAMENT_BENCH_ONLY=handoff strace -f -qq -o /tmp/handoff.strace \\
        target/release/tournament-bench --quick
    crates/bench/syscalls_per_move.py /tmp/handoff.strace

Reads an `strace -f` log of the bench's hand-off section and counts, per
move, the calls of the referee (the bench process, all its threads) and of
the built-in bot (the `tournament` processes it starts). A move is the span
between two of the referee's `renameat2`s of `in.txt` (its sends); spans
holding the pipe rows' `cat` or the start of a bot are left out, and so is
the first and last tenth of the spans (warm-up, shutdown). Prints the
totals and the calls made at least once in 20 moves. A measurement for
BENCHMARKS.md, not a test; strace slows every call, so only the counts
mean anything, not the times the bench prints beside them.
"""
import collections
import re
import sys

LINE = re.compile(r"^(\d+)\s+(?:<\.\.\. (\w+) resumed>|(\w+)\()")


def main(path):
    group = {}  # tid -> the process (thread group) it belongs to
    pending = {}  # tid -> whether its unfinished clone makes a thread
    program = {}  # process -> the program it runs
    calls = []  # (process, call, line)
    for line in open(path, errors="replace"):
        m = LINE.match(line)
        if not m:
            continue
        tid = int(m.group(1))
        group.setdefault(tid, tid)
        if m.group(2):  # "<... clone resumed>" carries the new tid
            r = re.search(r"= (\d+)", line)
            if m.group(2) in ("clone", "clone3") and r and tid in pending:
                child = int(r.group(1))
                group[child] = group[tid] if pending.pop(tid) else child
            continue
        call = m.group(3)
        if call in ("clone", "clone3"):
            thread = "CLONE_THREAD" in line
            r = re.search(r"= (\d+)\s*$", line)
            if r:
                child = int(r.group(1))
                group[child] = group[tid] if thread else child
            else:
                pending[tid] = thread
        if call == "execve" and ("= 0" in line or "unfinished" in line):
            exe = re.search(r'execve\("([^"]+)"', line).group(1)
            program[group[tid]] = exe.rsplit("/", 1)[-1]
        calls.append((group[tid], call, line))
    bench = calls[0][0]

    def role(pid):
        if pid == bench:
            return "referee"
        return "bot" if program.get(pid) == "tournament" else program.get(pid, "?")

    sends = [
        i
        for i, (pid, call, line) in enumerate(calls)
        if pid == bench and call.startswith("rename") and "in.txt" in line
    ]
    spans = []
    for a, b in zip(sends, sends[1:]):
        span = calls[a:b]
        if len(span) > 400 or any(role(p) == "cat" or c == "execve" for p, c, _ in span):
            continue
        spans.append(span)
    cut = len(spans) // 10
    spans = spans[cut : len(spans) - cut]
    if not spans:
        sys.exit("no hand-off moves found in " + path)
    count = collections.Counter()
    for span in spans:
        for pid, call, _ in span:
            count[(role(pid), call)] += 1
    n = len(spans)
    print(f"{n} moves")
    for who in ("referee", "bot"):
        mine = sorted(
            ((c, v / n) for (r, c), v in count.items() if r == who), key=lambda x: -x[1]
        )
        total = sum(v for _, v in mine)
        shown = ", ".join(f"{c} {v:.2f}" for c, v in mine if v >= 0.05)
        print(f"{who}: {total:.1f} per move ({shown})")


if __name__ == "__main__":
    main(sys.argv[1])
