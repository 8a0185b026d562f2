"""log-stream benchmark task: prints numbered lines as fast as it can.

Usage: python3 print_lines.py --lines N --length L --stamps FILE [--mode buffered|print]

Line i (1..N) is the 10-digit number i, a space and L - 11 characters of a 36-character
alphabet rotated by i mod 36: L characters in all, then LF. LogStream.expectedLine builds the
same text in Java to check every line.

--mode buffered (default): lines go through a 64 KiB block-buffered text writer on fd 1, as
  print() buffers them when stdout is a file or a pipe without -u.
--mode print: one print() per line on sys.stdout as it is; under python3 -u (how the worker
  runs every script) each print is its own write to the pipe.

At the end it writes FILE, a JSON object: "start" and "end", wall-clock seconds (time.time())
just before the first line and just after the last one was flushed to fd 1, and the process's
own CPU seconds ("cpu_user", "cpu_sys") for those lines. Standard library only.
"""
import json
import os
import sys
import time

ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


def main():
    args = sys.argv[1:]
    opts = dict(zip(args[0::2], args[1::2]))
    n = int(opts["--lines"])
    length = int(opts["--length"])
    stamps = opts["--stamps"]
    mode = opts.get("--mode", "buffered")
    fill = length - 11
    if fill < 1:
        raise SystemExit("--length must be at least 12")
    doubled = ALPHABET * (fill // len(ALPHABET) + 2)
    fills = [doubled[k:k + fill] for k in range(len(ALPHABET))]
    cpu0 = os.times()
    start = time.time()
    if mode == "buffered":
        out = open(1, "w", buffering=65536, encoding="ascii", closefd=False)
        write = out.write
        for i in range(1, n + 1):
            write("%010d %s\n" % (i, fills[i % 36]))
        out.flush()
    elif mode == "print":
        for i in range(1, n + 1):
            print("%010d %s" % (i, fills[i % 36]))
        sys.stdout.flush()
    else:
        raise SystemExit("--mode must be buffered or print, was %r" % mode)
    end = time.time()
    cpu1 = os.times()
    with open(stamps + ".tmp", "w") as f:
        json.dump({"start": start, "end": end, "lines": n,
                   "cpu_user": cpu1.user - cpu0.user, "cpu_sys": cpu1.system - cpu0.system}, f)
    os.replace(stamps + ".tmp", stamps)


if __name__ == "__main__":
    main()
