"""Tests of envmgr/host/."""
