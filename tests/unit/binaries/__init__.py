"""Tests of envmgr/binaries/."""
