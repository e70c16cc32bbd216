"""Fail early, in one line, when Spark cannot start for lack of Java 17+."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

from changeprov.errors import ConfigError

INSTALL_HINT = "install a Java 17+ runtime (e.g. `apt-get install openjdk-17-jre-headless`) or set JAVA_HOME"


def java_version() -> int:
    """Major version of the `java` Spark would use; raises ConfigError when there is none."""
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if home and not os.path.exists(java):  # ut48a #7: "set JAVA_HOME" to a user who had set it
        raise ConfigError(f"changeprov needs Java 17 or newer: JAVA_HOME is {home}, which has no bin/java; "
                          "point it at a Java 17+ installation, or unset it to use the `java` on PATH")
    if not java or not os.path.exists(java):
        raise ConfigError(f"changeprov needs Java 17 or newer and found none: {INSTALL_HINT}")
    out = subprocess.run([java, "-version"], capture_output=True, text=True, check=False).stderr
    m = re.search(r'version "(\d+)(?:\.(\d+))?', out)
    if not m:
        raise ConfigError(f"could not read the version of {java}: {INSTALL_HINT}")
    major = int(m.group(1))
    if major == 1 and m.group(2):  # "1.8.0_x" style
        major = int(m.group(2))
    if major < 17:
        raise ConfigError(f"changeprov needs Java 17 or newer, found Java {major} at {java}: {INSTALL_HINT}")
    return major


def main() -> int:
    try:
        java_version()
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
