"""Tests of envmgr/discover/."""
