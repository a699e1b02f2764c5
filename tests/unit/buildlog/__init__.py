"""Tests of envmgr/buildlog/."""
