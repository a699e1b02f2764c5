"""`python -m envmgr`: the same command line as the console script."""

from envmgr.cli.main import main

if __name__ == "__main__":
    main()
