"""Tests of envmgr/verify/."""
