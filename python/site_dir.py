# SPDX-License-Identifier: GPL-2.0-or-later
"""site_dir.py PREFIX: the directory under PREFIX where this interpreter looks for
packages, or nothing if it looks in none there. Meson runs it with the interpreter it
builds the module for, so that `make install` puts the package where `import sockdiag`
finds it: Debian's site.py searches /usr/local/lib/python3.X/dist-packages (and, for
/usr, /usr/lib/python3/dist-packages), not the /usr/local/lib/python3/dist-packages
that Meson's deb_system scheme gives for prefix /usr/local. Of several under PREFIX,
the one nearest to it (for /usr: lib/python3/dist-packages, not local/lib/...)."""
import os
import site
import sys


def main():
    prefix = os.path.normpath(os.path.abspath(sys.argv[1]))
    seen = []
    for d in site.getsitepackages() + sys.path:
        d = os.path.normpath(d) if d else ""
        if d.startswith(prefix + os.sep) and os.path.basename(d).endswith("-packages") \
                and d not in seen:
            seen.append(d)
    if seen:
        print(min(seen, key=lambda d: os.path.relpath(d, prefix).count(os.sep)))


if __name__ == "__main__":
    main()
