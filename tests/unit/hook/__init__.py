"""Tests of envmgr/hook/."""
