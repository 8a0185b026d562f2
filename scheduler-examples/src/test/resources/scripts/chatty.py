"""Test fixture for the log size limit: prints numbered lines of a fixed width, as fast as it can.

Arguments: --lines N (default 1000), --width CHARACTERS per line (default 100, at least 8).
"""
import sys

args = sys.argv[1:]
lines = int(args[args.index("--lines") + 1]) if "--lines" in args else 1000
width = int(args[args.index("--width") + 1]) if "--width" in args else 100
pad = "x" * (width - 7)
out = sys.stdout
for i in range(1, lines + 1):
    out.write("%06d %s\n" % (i, pad))
out.flush()
