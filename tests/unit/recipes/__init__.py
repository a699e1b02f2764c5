"""Tests of envmgr/recipes/."""
