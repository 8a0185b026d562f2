"""Exits with --code N, or kills itself with --signal NAME."""
import argparse
import os
import signal
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--code", type=int, default=0)
parser.add_argument("--signal")
args = parser.parse_args()
print("exiting")
if args.signal:
    os.kill(os.getpid(), getattr(signal, "SIG" + args.signal))
sys.exit(args.code)
