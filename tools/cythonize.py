"""Translates the package's Cython modules to C in one interpreter (a build step of CMakeLists.txt).

    python tools/cythonize.py [--generate-shared C_FILE] [--shared MODULE] PYX C_FILE [PYX C_FILE ...]

Each module's C file is what ``cython -3 --fast-fail [--shared MODULE] PYX -o C_FILE`` writes, and
``--generate-shared`` writes what ``cython -3 --generate-shared=C_FILE`` does; one process for them
all starts the compiler once instead of once per module.
"""

from __future__ import annotations

import argparse
import os
import sys


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generate-shared", metavar="C_FILE", help="write Cython's shared utility module here")
    parser.add_argument("--shared", metavar="MODULE", help="the modules import their utility code from MODULE")
    parser.add_argument("files", nargs="*", metavar="PYX C_FILE", help="each module's source and its C file")
    args = parser.parse_args(argv)
    if len(args.files) % 2:
        parser.error("the files come in pairs (PYX C_FILE), got an odd number: " + " ".join(args.files))

    from Cython.Compiler import Main

    jobs = []
    if args.generate_shared:
        jobs.append((["-3", "--generate-shared=" + args.generate_shared], args.generate_shared))
    shared = ["--shared=" + args.shared] if args.shared else []
    for pyx, c_file in zip(args.files[::2], args.files[1::2]):
        jobs.append((["-3", "--fast-fail", *shared, pyx, "-o", c_file], c_file))
    for cython_args, out in jobs:
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        sys.argv = ["cython", *cython_args]
        try:
            Main.main(command_line=1)  # the `cython` command's own entry point
        except SystemExit as e:
            if e.code:
                return int(e.code) if isinstance(e.code, int) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
