"""Start-up of whole programs: wall time from exec to exit and peak resident memory, each command in
a fresh process, rounds interleaved (the order alternating per round), medians printed.

    python3 bench/startup.py --rounds 15 \\
        'weft C++=build/standalone' 'import weft=.venv/bin/python -c "import weft"' ...

Each argument is NAME=COMMAND (run with /bin/sh -c). A command that exits non-zero ends the run
with its output. Figures: bench/README.md, "Start-up without a GPU"."""
import argparse
import os
import statistics
import subprocess
import sys
import time


def run_once(cmd):
    start = time.perf_counter()
    p = subprocess.Popen(["/bin/sh", "-c", "exec " + cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - start
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit("%s failed (%d):\n%s" % (cmd, p.returncode, out.decode(errors="replace")))
    return wall * 1e3, usage.ru_maxrss / 1024.0  # ms, MiB


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("commands", nargs="+", help="NAME=COMMAND")
    args = ap.parse_args()
    cmds = dict(c.split("=", 1) for c in args.commands)
    names = list(cmds)
    got = {n: [] for n in names}
    for r in range(args.rounds):
        for n in (names if r % 2 == 0 else names[::-1]):
            got[n].append(run_once(cmds[n]))
    print("%-28s %10s %10s %10s" % ("program", "median ms", "min ms", "peak MiB"))
    for n in names:
        ms = [g[0] for g in got[n]]
        mib = [g[1] for g in got[n]]
        print("%-28s %10.1f %10.1f %10.0f" % (n, statistics.median(ms), min(ms), statistics.median(mib)))


if __name__ == "__main__":
    main()
