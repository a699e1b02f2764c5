"""Unit tests, one folder per envmgr package; at this level the top-level modules and whole-package checks."""
