"""What the CLI test scripts share: a running count of checks that failed, and running a command."""
import subprocess


class Checks:
    def __init__(self):
        self.failures = 0

    def __call__(self, cond, what):
        print(("ok   " if cond else "FAIL ") + what)
        if not cond:
            self.failures += 1


def run(*args):
    """The command's CompletedProcess, output captured as text (arguments str()-ed)."""
    return subprocess.run([str(a) for a in args], capture_output=True, text=True)
