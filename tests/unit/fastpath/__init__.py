"""Tests of envmgr/fastpath/."""
