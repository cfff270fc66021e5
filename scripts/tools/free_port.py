"""Prints a TCP port on 127.0.0.1 that is free now (the kernel's pick for a bind to port 0).

Used by scripts/console-check.sh and scripts/docs.sh for the servers they start. The port is free when
printed; a server that binds it later can still lose a race, and then fails to start, loudly.

    python3 -S scripts/tools/free_port.py
"""
import socket
import sys


def free_port():
    """A port the kernel would give a listener on 127.0.0.1 now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv):
    if len(argv) > 1:
        print(__doc__.strip())
        return 0 if argv[1] in ("-h", "--help") else 2
    print(free_port())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
