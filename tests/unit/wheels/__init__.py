"""Tests of envmgr/wheels/."""
