"""Tests of envmgr/msbuild/."""
