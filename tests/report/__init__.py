"""Tests of gpuaudit.report: the summary, tables, sheets and every report format."""
