import sys

try:
    from lpdp.cli import main
except KeyboardInterrupt:  # Ctrl-C while Python loads lpdp: the same one line as later
    sys.stderr.write("lpdp: interrupted\n")
    sys.exit(130)

sys.exit(main())
