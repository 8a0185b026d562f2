"""http benchmark task: prints --rate lines a second for --seconds seconds, then exits.

Line i is 'line <i>'. Standard library only.
"""
import sys
import time


def main():
    args = sys.argv[1:]
    opts = dict(zip(args[0::2], args[1::2]))
    rate = int(opts["--rate"])
    seconds = int(opts["--seconds"])
    start = time.monotonic()
    for i in range(1, rate * seconds + 1):
        due = start + (i - 1) / rate
        delay = due - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        print("line %d" % i, flush=True)


if __name__ == "__main__":
    main()
