"""diskq's command line. ``main`` is the console-script entry point.

It is the only place that turns a :class:`~diskq.errors.DiskqError` into a one-line message
and an exit code; nothing else prints tracebacks for expected failures.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

from diskq.cli.app import app


def _register_commands() -> None:
    """Import every command module in this package; each registers itself on ``app``."""
    import diskq.cli as pkg

    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        if info.name != "app" and not info.name.startswith("_"):
            importlib.import_module(f"diskq.cli.{info.name}")


_register_commands()


def main(argv: list[str] | None = None) -> None:
    from diskq.cli._terminal import say
    from diskq.cli.app import READ
    from diskq.errors import DiskqError, Interrupted

    def say_database() -> None:  # which devices.db the answer came from
        for found in READ:
            say(f"database: {found.describe()}")

    READ.clear()
    try:
        app(args=argv, prog_name="diskq")
    except SystemExit as exc:
        if exc.code in (0, None):
            say_database()
        raise
    except DiskqError as exc:
        say(f"diskq: error: {exc.message}")
        for reason in getattr(exc, "reasons", []) or []:
            say(f"  - {reason}")
        for found in READ:
            say(f"  - database: {found.describe()}")
        if exc.hint:
            say(f"  hint: {exc.hint}")
        sys.exit(exc.exit_code)
    except Interrupted as exc:
        say(f"diskq: {exc.message}")
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:  # Ctrl-C outside a bench: nothing to clean up
        say("diskq: interrupted")
        sys.exit(130)
    else:
        say_database()


if __name__ == "__main__":  # pragma: no cover
    main()
