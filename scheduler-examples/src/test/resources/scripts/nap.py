"""Test fixture: holds its slot for a moment (0.4 s), printing one line, then exits 0."""
import time

time.sleep(0.4)
print("napped", flush=True)
