"""Tests of envmgr/snapshot/."""
