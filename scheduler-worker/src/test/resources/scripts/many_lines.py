"""Prints --count numbered lines, then a last line without a newline, and exits."""
import argparse
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--count", type=int, default=5000)
args = parser.parse_args()
for i in range(args.count):
    sys.stdout.write("line %d\n" % i)
sys.stdout.write("last")
