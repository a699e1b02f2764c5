"""Tests of envmgr/cache/."""
