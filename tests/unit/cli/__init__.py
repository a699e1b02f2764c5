"""Tests of envmgr/cli/."""
