"""Tests of envmgr/files/."""
