"""Tests of gpuaudit.rules: each rules module, and the rules as a whole."""
