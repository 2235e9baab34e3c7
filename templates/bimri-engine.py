#!/usr/bin/env python3
"""Launcher for the bimri engine bound to this project.

This file holds no engine code. It reads the command the installer proved on
this machine (`argv_prefix` in .bimri/runtime.local.json, next to this file)
and runs it with the arguments given here, so `python3 bimri-engine.py ...`
keeps working where scripts expect the Python reference engine. Without
--root or BIMRI_ROOT, the memory is the one in this file's folder. A binding
written on another machine (its program is not here) falls back to a `bimri`
executable on PATH, so that bimri can rebind the folder with install.
"""

import json
import os
import shutil
import subprocess
import sys


def fail(message):
    sys.stderr.write(f"BIMRI ERROR: {message}\n")
    return 2


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    binding = os.path.join(here, ".bimri", "runtime.local.json")
    reinstall = (
        "Run bimri's install for this folder again (install --target "
        f"{here} --quiescent) to bind this machine's bimri."
    )
    try:
        with open(binding, encoding="utf-8") as handle:
            prefix = json.load(handle).get("argv_prefix")
    except FileNotFoundError:
        return fail(f"{binding} is missing, so there is no bimri to run. {reinstall}")
    except (OSError, ValueError, AttributeError) as error:
        return fail(f"{binding} cannot be read ({error}). {reinstall}")
    if not (
        isinstance(prefix, list)
        and prefix
        and all(isinstance(part, str) and part for part in prefix)
    ):
        return fail(f"{binding} holds no usable argv_prefix. {reinstall}")
    program = prefix[0]
    if not (os.path.isfile(program) or shutil.which(program)):
        found = shutil.which("bimri")
        if found is None:
            return fail(f"cannot run {program}: it is not on this machine. {reinstall}")
        sys.stderr.write(
            f"BIMRI NOTICE: {program} (from {binding}) is not on this machine; "
            f"running {found} instead. {reinstall}\n"
        )
        prefix = [found]
    command = prefix + sys.argv[1:]
    environment = dict(os.environ)
    environment.setdefault("BIMRI_ROOT", here)
    try:
        if os.name == "posix":
            sys.stdout.flush()
            os.execvpe(command[0], command, environment)
        return subprocess.call(command, env=environment)
    except KeyboardInterrupt:
        return 130
    except OSError as error:
        return fail(f"cannot run {command[0]} ({error}). {reinstall}")


if __name__ == "__main__":
    sys.exit(main())
