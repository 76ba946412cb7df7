"""Copies the server binary out of a wheel built by maturin (`bindings = "bin"` puts it at
<dist>-<version>.data/scripts/threadkeeper[.exe]), so the npm platform package carries the very
file the wheel does.

usage: python wheel-binary.py WHEEL OUT_DIR   (prints the copied file's path)
"""

import sys
import zipfile
from pathlib import Path


def main(wheel: str, out_dir: str) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = [name for name in archive.namelist() if ".data/scripts/threadkeeper" in name]
        if len(names) != 1:
            sys.exit(f"wheel-binary: {wheel} holds {len(names)} threadkeeper scripts, expected 1: {names}")
        target = Path(out_dir) / Path(names[0]).name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(archive.read(names[0]))
        target.chmod(0o755)
    print(target)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
