"""Sphinx configuration for the baremetal documentation."""

project = 'baremetal'
copyright = 'baremetal developers'
extensions = []
exclude_patterns = ['_build']
html_theme = 'alabaster'
master_doc = 'index'
suppress_warnings = ['misc.highlighting_failure']
