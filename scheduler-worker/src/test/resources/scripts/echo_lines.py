"""Writes a known mix of output: both streams, CRLF, invalid UTF-8, a long line, no final newline."""
import sys

out = sys.stdout.buffer
err = sys.stderr.buffer
out.write(b"out 1\n")
err.write(b"err 1\n")
out.write("out 2 \u00e9\u4e2d\n".encode("utf-8"))
out.write(b"crlf line\r\n")
out.write(b"bad \xff\xfe byte\n")
out.write(b"\n")
out.write(b"x" * 70000 + b"\n")
err.write(b"err 2\n")
out.write(b"tail without newline")
out.flush()
err.flush()
